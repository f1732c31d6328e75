/**
 * An approval covers what it was decided on, at run time too (issue 18,
 * second review): a link swapped into place after the gate checked a path
 * and before the operation ran must not carry a read or a write into a
 * `read_approval` / `write_approval` mount. The operation runs on the
 * agent's sandbox confined to what was approved for it, so the I/O layer's
 * own checks refuse it (`approval_denied`, nothing asked twice). Through the
 * port (a real thread), the in-process tools, and a second agent's shell.
 */
import { existsSync, readFileSync, renameSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createHost as createBuiltHost } from "../dist/src/index.js";
import {
  type ApprovalRequest,
  createSandbox,
  createToolDefinitions,
  type Host,
  type HostOptions,
} from "../src/index.js";
import { assertBuilt } from "./conformance/thread.js";
import { describeWithBwrap } from "./helpers/bwrap.js";
import { makeTempDir, removeDir, writeTree } from "./helpers/tree.js";

const createHost = createBuiltHost as unknown as (o: HostOptions) => Promise<Host>;
const fx = (f: string) => fileURLToPath(new URL(`./fixtures/approvals/${f}`, import.meta.url));

const SECRET = "TOPSECRET";
/** What a read racing the swap may see: a refusal, the plain file, or nothing. */
const SAFE_READS = ["approval_denied", "plain", "not_found"];
let root: string;
beforeAll(() => assertBuilt());
beforeEach(() => {
  root = makeTempDir();
  // /pub/cur holds a plain file; /pub/trap a link of the same name into the
  // flagged mount. Moving the folders asks nothing.
  writeTree(join(root, "proj"), {
    pub: { cur: { "x.txt": "plain" }, trap: {}, "real.txt": "plain" },
  });
  writeTree(join(root, "sec"), { "s.txt": SECRET });
  symlinkSync(join(root, "sec/s.txt"), join(root, "proj/pub/trap/x.txt"));
});
afterEach(() => removeDir(root));

const config = (flag: "readApproval" | "writeApproval") => ({
  root: "proj",
  mounts: [{ source: "sec", target: "/secret", [flag]: true }],
});

function host(
  flag: "readApproval" | "writeApproval",
  decide: (r: ApprovalRequest) => "once" | "session" | "deny",
  seen: ApprovalRequest[],
  workers: HostOptions["workers"] = { swap: { module: fx("swap.js") } },
) {
  return createHost({
    sandbox: config(flag),
    basePath: root,
    workers,
    onApproval: async (r) => {
      seen.push(r);
      return decide(r);
    },
  });
}

describe("a link swapped in after the approval check (port, real thread)", () => {
  it("a read through it is refused every time: the secret is never read", async () => {
    const seen: ApprovalRequest[] = [];
    const h = await host("readApproval", () => "deny", seen);
    try {
      const out = (await h.run("swap", { rounds: 30 })) as string[];
      expect(out.join()).not.toContain(SECRET);
      // Refused whenever the link was in place: at run time, where the gate
      // had seen the plain file (nothing to ask), or by the approver where
      // the swap came first. The moves and the read run concurrently, so a
      // read may also land before the first move (the plain file) or
      // between the two (nothing there): never on the secret.
      expect(out.filter((o) => !SAFE_READS.includes(o))).toEqual([]);
      expect(out).toContain("approval_denied");
      expect(seen.length).toBeLessThanOrEqual(30);
    } finally {
      await h.close();
    }
  });

  it("a write through it is refused: the flagged file is unchanged", async () => {
    const seen: ApprovalRequest[] = [];
    const h = await host("writeApproval", () => "deny", seen);
    try {
      const out = (await h.run("swap", { rounds: 30, write: true })) as string[];
      // As for reads: "written" only where the write landed beside the link
      // (before the first move, or between the moves in a fresh folder).
      expect(out.filter((o) => o !== "approval_denied" && o !== "written")).toEqual([]);
      expect(out).toContain("approval_denied");
      expect(seen.length).toBeLessThanOrEqual(30);
      expect(readFileSync(join(root, "sec/s.txt"), "utf8")).toBe(SECRET);
      // The plain file: as it was, or written where a write came first.
      expect(["plain", "OVERWRITTEN\n"]).toContain(
        readFileSync(join(root, "proj/pub/cur/x.txt"), "utf8"),
      );
    } finally {
      await h.close();
    }
  });

  it("the refusal names the link's target and says how to ask for it", async () => {
    const h = await host("readApproval", () => "deny", []);
    try {
      const out = (await h.run("swap", { rounds: 1 })) as string[];
      expect(out).toEqual(["approval_denied"]);
      const h2 = await host("readApproval", () => "deny", [], {
        script: { module: fx("script.js") },
      });
      try {
        renameSync(join(root, "proj/pub/cur"), join(root, "proj/pub/tmp"));
        renameSync(join(root, "proj/pub/trap"), join(root, "proj/pub/cur"));
        // Asked directly the gate sees the link and asks (denied here).
        const [r] = (await h2.run("script", {
          steps: [{ op: "readFile", args: ["/pub/cur/x.txt"] }],
        })) as { code: string; message: string }[];
        expect(r?.code).toBe("approval_denied");
        expect(r?.message).not.toContain(root);
      } finally {
        await h2.close();
      }
    } finally {
      await h.close();
    }
  });

  it("approved once: a direct read and a read through the link work; approved writes create folders", async () => {
    const seen: ApprovalRequest[] = [];
    const h = await host("readApproval", () => "once", seen, {
      script: { module: fx("script.js") },
    });
    try {
      const out = (await h.run("script", {
        steps: [
          { op: "readFile", args: ["/secret/s.txt"] },
          { op: "readFile", args: ["/pub/trap/x.txt"] },
          { op: "listFiles", args: ["/secret"] },
          // Searched in a pool thread: the confined policy crosses the wire.
          { op: "grep", args: [{ pattern: "TOP", path: "/secret" }] },
        ],
      })) as { ok: boolean; value: unknown }[];
      expect(out.slice(0, 3).map((o) => o.value)).toEqual([SECRET, SECRET, ["/secret/s.txt"]]);
      expect(JSON.stringify(out[3])).toContain("/secret/s.txt");
      expect(seen.map((r) => r.path)).toEqual([
        "/secret/s.txt",
        "/pub/trap/x.txt (\u2192 /secret/s.txt)",
        "/secret",
        "/secret",
      ]);
    } finally {
      await h.close();
    }
    const w = await host("writeApproval", () => "once", [], {
      script: { module: fx("script.js") },
    });
    try {
      const out = (await w.run("script", {
        steps: [
          { op: "writeFile", args: ["/secret/a/b/new.txt", "N"] },
          { op: "move", args: ["/pub/real.txt", "/secret/c/moved.txt"] },
          { op: "editFile", args: ["/secret/s.txt", [{ oldText: "TOP", newText: "NO" }]] },
        ],
      })) as { ok: boolean; code?: string }[];
      expect(out.map((o) => o.ok)).toEqual([true, true, true]);
      expect(readFileSync(join(root, "sec/a/b/new.txt"), "utf8")).toBe("N");
      expect(readFileSync(join(root, "sec/c/moved.txt"), "utf8")).toBe("plain");
      expect(readFileSync(join(root, "sec/s.txt"), "utf8")).toBe("NOSECRET");
    } finally {
      await w.close();
    }
  });

  it("approved for the session: the swapped read is covered and reads", async () => {
    const seen: ApprovalRequest[] = [];
    const h = await host("readApproval", () => "session", seen, {
      swap: { module: fx("swap.js") },
      script: { module: fx("script.js") },
    });
    try {
      // A session decision covers /secret for this agent: asked once, then
      // the swapped read is within what was approved.
      const out = (await h.run("script", {
        steps: [
          { op: "readFile", args: ["/secret/s.txt"] },
          { op: "readFile", args: ["/pub/trap/x.txt"] },
        ],
      })) as { value: unknown }[];
      expect(out.map((o) => o.value)).toEqual([SECRET, SECRET]);
      expect(seen).toHaveLength(1);
    } finally {
      await h.close();
    }
  });

  it("an expansion grant into the flagged mount is the approval, and still works", async () => {
    const seen: ApprovalRequest[] = [];
    const h = await createHost({
      sandbox: config("readApproval"),
      basePath: root,
      workers: { script: { module: fx("script.js"), sandbox: { restrict: "/pub" } } },
      dynamic: { enabled: true },
      onApproval: async (r) => {
        seen.push(r);
        return "once" as const;
      },
    });
    try {
      const out = (await h.run("script", {
        steps: [{ op: "readFile", args: ["/secret/s.txt"] }],
      })) as { value: unknown }[];
      expect(out.map((o) => o.value)).toEqual([SECRET]);
      expect(seen.map((r) => r.operation)).toEqual(["expand"]);
    } finally {
      await h.close();
    }
  });
});

describe("a link swapped in after the approval check (in-process tools)", () => {
  async function tools(flag: "readApproval" | "writeApproval", seen: ApprovalRequest[]) {
    const sb = createSandbox(config(flag), { basePath: root });
    const defs = await createToolDefinitions(sb, {
      onApproval: (r) => {
        seen.push(r);
        return "deny";
      },
    });
    return (n: string) => defs.find((d) => d.name === n)!;
  }
  /** The swap, done between the call's check and its run (same tick). */
  const swap = () => {
    renameSync(join(root, "proj/pub/cur"), join(root, "proj/pub/tmp"));
    renameSync(join(root, "proj/pub/trap"), join(root, "proj/pub/cur"));
  };

  it("read_file is refused without asking: the secret is never read", async () => {
    const seen: ApprovalRequest[] = [];
    const tool = await tools("readApproval", seen);
    const pending = tool("read_file").execute({ path: "/pub/cur/x.txt" });
    swap();
    const out = String(await pending);
    expect(out).not.toContain(SECRET);
    expect(out).toContain("approval_denied");
    expect(out).not.toContain(root);
    expect(seen).toEqual([]);
  });

  it("write_file is refused without asking: the flagged file is unchanged", async () => {
    const seen: ApprovalRequest[] = [];
    const tool = await tools("writeApproval", seen);
    const pending = tool("write_file").execute({ path: "/pub/cur/x.txt", content: "OVER" });
    swap();
    expect(String(await pending)).toContain("approval_denied");
    expect(seen).toEqual([]);
    expect(readFileSync(join(root, "sec/s.txt"), "utf8")).toBe(SECRET);
  });

  it("a call approved once still reads through the link", async () => {
    const sb = createSandbox(config("readApproval"), { basePath: root });
    const defs = await createToolDefinitions(sb, { onApproval: () => "once" });
    const out = await defs
      .find((d) => d.name === "read_file")!
      .execute({ path: "/pub/trap/x.txt" });
    expect(String(out)).toContain(SECRET);
  });
});

describeWithBwrap("a second agent's shell swaps the file in a loop", () => {
  it("the reader never reads the secret, however the swap falls", async () => {
    const seen: ApprovalRequest[] = [];
    writeFileSync(join(root, "proj/pub/x.txt"), "plain");
    const target = join(root, "sec/s.txt");
    // Bounded: it ends when the reader leaves `stop`, or after 200000 swaps.
    const command = `cd pub && i=0; while [ ! -e stop ] && [ $i -lt 200000 ]; do i=$((i+1)); ln -sfn '${target}' x.l && mv -T x.l x.txt; cp real.txt x.r && mv -T x.r x.txt; done; echo done`;
    const h = await host("readApproval", () => "deny", seen, {
      swapper: { module: fx("swapper.js"), shell: true, sandbox: { restrict: "/pub" } },
      reader: { module: fx("read-loop.js") },
    });
    try {
      const [s, r] = (await Promise.all([
        h.run("swapper", command),
        h.run("reader", { path: "/pub/x.txt", plain: "plain", reads: 3000, stop: "/pub/stop" }),
      ])) as [{ stdout: string }, Record<string, number>];
      expect(s.stdout).toContain("done");
      expect(existsSync(join(root, "proj/pub/stop"))).toBe(true);
      expect(Object.keys(r)).not.toContain(SECRET);
      // What it saw: the plain file, or a refusal (asked and denied, refused
      // at run time after a swap, or a file replaced while it was opened).
      for (const k of Object.keys(r))
        expect(["plain", "approval_denied", "path_not_in_sandbox", "file_not_found"]).toContain(k);
    } finally {
      await h.close();
    }
  }, 180_000);
});
