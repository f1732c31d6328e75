/**
 * Listings and searches through links (issue 18, finding 7): a folder link
 * from a free area into a `read_approval` mount is judged where it leads,
 * through the port (a real thread) and the in-process tools; a listing's
 * request says it is a listing.
 */
import { existsSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHost as createBuiltHost } from "../dist/src/index.js";
import {
  type ApprovalRequest,
  createSandbox,
  createToolDefinitions,
  type Host,
  type HostOptions,
} from "../src/index.js";
import { assertBuilt } from "./conformance/thread.js";
import { makeTempDir, removeDir, writeTree } from "./helpers/tree.js";

const createHost = createBuiltHost as unknown as (o: HostOptions) => Promise<Host>;
const script = fileURLToPath(new URL("./fixtures/approvals/script.js", import.meta.url));

type Outcome = { ok: boolean; value?: unknown; code?: string; message?: string };

let root: string;
beforeAll(() => {
  assertBuilt();
  root = makeTempDir();
  writeTree(join(root, "proj"), { pub: { "p.txt": "pub" } });
  writeTree(join(root, "sec"), { "s.txt": "TOPSECRET", inner: { "deep-name.txt": "D" } });
  symlinkSync("../../sec", join(root, "proj/pub/link"));
});
afterAll(() => removeDir(root));

/** `/` is free; `/secret` (also reachable as `/pub/link`) needs read approval. */
const sandbox = {
  root: "proj",
  mounts: [{ source: "sec", target: "/secret", readApproval: true }],
};
const asked = (seen: ApprovalRequest[]) => seen.map((r) => `${r.operation} ${r.path}`);

function flaggedHost(decide: (r: ApprovalRequest) => unknown, seen: ApprovalRequest[]) {
  return createHost({
    sandbox,
    basePath: root,
    workers: { main: { module: script } },
    onApproval: async (r) => {
      seen.push(r);
      return decide(r) as "once";
    },
  });
}

describe("a folder link into a flagged mount (port, real thread)", () => {
  it("listing, stat, exists and grep through the link ask; denied, no name leaks", async () => {
    const seen: ApprovalRequest[] = [];
    const h = await flaggedHost(() => "deny", seen);
    try {
      const out = (await h.run("main", {
        steps: [
          { op: "listFiles", args: ["/pub/link"] },
          { op: "listFiles", args: ["/pub/link", "**/*.txt"] },
          { op: "stat", args: ["/pub/link"] },
          { op: "exists", args: ["/pub/link/s.txt"] },
          { op: "grep", args: [{ pattern: "TOPSECRET", path: "/pub/link" }] },
          // The folder holding the link shows only the link's own name: not asked.
          { op: "listFiles", args: ["/pub"] },
        ],
      })) as Outcome[];
      expect(out.slice(0, 5).map((o) => o.code)).toEqual(Array(5).fill("approval_denied"));
      expect(out[5]).toEqual({ ok: true, value: ["/pub/p.txt"] });
      // What the agent gets back names nothing in the mount but what it typed.
      const text = JSON.stringify(out.filter((_, i) => i !== 3));
      expect(text).not.toContain("s.txt");
      expect(text).not.toContain("deep-name");
      expect(text).not.toContain("TOPSECRET");
      expect(asked(seen)).toEqual([
        "read /pub/link (\u2192 /secret)",
        "read /pub/link (\u2192 /secret)",
        "read /pub/link (\u2192 /secret)",
        "read /pub/link/s.txt (\u2192 /secret/s.txt)",
        "read /pub/link (\u2192 /secret)",
      ]);
      // The request says what a `session` answer would cover.
      expect(seen.map((r) => r.via)).toEqual(["list", "list", undefined, undefined, "search"]);
    } finally {
      await h.close();
    }
  });

  it("approved, the listing through the link shows the mount's names; session covers /secret", async () => {
    const seen: ApprovalRequest[] = [];
    const h = await flaggedHost(() => "session", seen);
    try {
      const out = (await h.run("main", {
        steps: [
          { op: "listFiles", args: ["/pub/link"] },
          { op: "listFiles", args: ["/secret"] },
          { op: "readFile", args: ["/secret/s.txt"] },
          { op: "grep", args: [{ pattern: "TOPSECRET", path: "/pub/link" }] },
        ],
      })) as Outcome[];
      expect(out.map((o) => o.ok)).toEqual([true, true, true, true]);
      expect(out[0]!.value).toEqual(["/pub/link/inner/deep-name.txt", "/pub/link/s.txt"]);
      // The search through the link reads where it leads (cut to both trees).
      const g = out[3]!.value as { matches: { path: string }[] };
      expect(g.matches.map((m) => m.path)).toEqual(["/pub/link/s.txt"]);
      expect(asked(seen)).toEqual(["read /pub/link (\u2192 /secret)"]);
    } finally {
      await h.close();
    }
  });

  it("removing or moving the link never touches the mount it leads to", async () => {
    const seen: ApprovalRequest[] = [];
    const h = await flaggedHost(() => "deny", seen);
    try {
      const out = (await h.run("main", {
        steps: [
          { op: "move", args: ["/pub/link", "/pub/link2"] },
          { op: "remove", args: ["/pub/link", { recursive: true }] },
        ],
      })) as Outcome[];
      // Moving the link reads it: asked where it leads, and denied here.
      expect(out[0]!.code).toBe("approval_denied");
      expect(asked(seen)[0]).toBe("read /pub/link (\u2192 /secret)");
      expect(existsSync(join(root, "sec/s.txt"))).toBe(true);
      expect(existsSync(join(root, "sec/inner/deep-name.txt"))).toBe(true);
    } finally {
      await h.close();
      if (!existsSync(join(root, "proj/pub/link")))
        symlinkSync("../../sec", join(root, "proj/pub/link"));
    }
  });
});

describe("a folder link into a flagged mount (in-process tools)", () => {
  it("list_files, get_file_info and grep through the link ask; denied, no name leaks", async () => {
    const seen: ApprovalRequest[] = [];
    const sb = createSandbox(sandbox, { basePath: root });
    const defs = await createToolDefinitions(sb, {
      onApproval: (r) => {
        seen.push(r);
        return "deny";
      },
    });
    const tool = (n: string) => defs.find((d) => d.name === n)!;
    const outs = [
      await tool("list_files").execute({ path: "/pub/link" }),
      await tool("get_file_info").execute({ path: "/pub/link" }),
      await tool("grep").execute({ pattern: "TOPSECRET", path: "/pub/link" }),
    ] as string[];
    for (const o of outs) {
      expect(o).toContain("approval_denied");
      expect(o).not.toContain("s.txt");
      expect(o).not.toContain("deep-name");
    }
    expect(seen.map((r) => `${r.tool} ${r.operation} ${r.path} ${r.via ?? "-"}`)).toEqual([
      "list_files read /pub/link (\u2192 /secret) list",
      "get_file_info read /pub/link (\u2192 /secret) -",
      "grep read /pub/link (\u2192 /secret) search",
    ]);
  });
});
