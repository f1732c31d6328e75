/**
 * Approvals decided by the host across real threads (issue 13): once,
 * session and deny; no approver; session decisions not inherited by a
 * callee or a later run; hostile strings never reach the approver.
 */
import { execFileSync } from "node:child_process";
import { existsSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHost as createBuiltHost } from "../dist/src/index.js";
import { createSandboxTools } from "../src/ai-sdk/index.js";
import { escapeControl } from "../src/errors/index.js";
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

let base: string;
beforeAll(() => {
  assertBuilt();
  base = makeTempDir();
  writeTree(join(base, "project"), { "free.txt": "free", docs: { "a.md": "A", "b.md": "B" } });
  writeTree(join(base, "secret"), { "s.txt": "S" });
});
afterAll(() => removeDir(base));

type Step = { op: string; args?: unknown[]; worker?: string; input?: unknown; opts?: unknown };
type Outcome = { ok: boolean; value?: unknown; code?: string; message?: string };

/** A host whose named path `secret` needs approval for reads and writes; `free` does not. */
async function flaggedHost(
  decide: ((r: ApprovalRequest) => unknown) | undefined,
  seen: ApprovalRequest[],
): Promise<Host> {
  return createHost({
    sandbox: {
      paths: {
        free: { root: "project", mode: "rw" },
        secret: { root: "secret", mode: "rw", readApproval: true, writeApproval: true },
      },
    },
    basePath: base,
    workers: {
      main: { module: script, delegates: ["helper"] },
      helper: { module: script },
    },
    ...(decide
      ? {
          onApproval: async (r: ApprovalRequest) => {
            seen.push(r);
            return decide(r) as "once";
          },
        }
      : {}),
  });
}

const run = (h: Host, steps: Step[]) => h.run("main", { steps }) as Promise<Outcome[]>;

describe("approvals across threads", () => {
  it("once asks for every operation; paths need no approval outside flagged areas", async () => {
    const seen: ApprovalRequest[] = [];
    const host = await flaggedHost(() => "once", seen);
    try {
      const out = await run(host, [
        { op: "readFile", args: ["free:free.txt"] },
        { op: "readFile", args: ["secret:s.txt"] },
        { op: "readFile", args: ["/secret/./s.txt"] },
      ]);
      expect(out.map((o) => o.value)).toEqual(["free", "S", "S"]);
      expect(seen).toEqual([
        {
          agentId: "a1",
          worker: "main",
          chain: ["main"],
          operation: "read",
          path: "/secret/s.txt",
        },
        {
          agentId: "a1",
          worker: "main",
          chain: ["main"],
          operation: "read",
          path: "/secret/s.txt",
        },
      ]);
    } finally {
      await host.close();
    }
  });

  it("session covers that operation kind under that directory for the rest of the run only", async () => {
    const seen: ApprovalRequest[] = [];
    const host = await flaggedHost(() => "session", seen);
    try {
      const out = await run(host, [
        { op: "readFile", args: ["/secret/s.txt"] },
        { op: "exists", args: ["/secret/s.txt"] },
        { op: "writeFile", args: ["/secret/n.txt", "n"] },
        { op: "writeFile", args: ["/secret/m.txt", "m"] },
      ]);
      expect(out.every((o) => o.ok)).toBe(true);
      expect(seen.map((r) => `${r.operation} ${r.path}`)).toEqual([
        "read /secret/s.txt",
        "write /secret/n.txt",
      ]);
      // A later run asks again.
      await run(host, [{ op: "readFile", args: ["/secret/s.txt"] }]);
      expect(seen).toHaveLength(3);
    } finally {
      await host.close();
    }
  });

  it("a session decision is not inherited by a callee", async () => {
    const seen: ApprovalRequest[] = [];
    const host = await flaggedHost(() => "session", seen);
    try {
      const out = await run(host, [
        { op: "readFile", args: ["/secret/s.txt"] },
        {
          op: "delegate",
          worker: "helper",
          input: { steps: [{ op: "readFile", args: ["/secret/s.txt"] }] },
        },
      ]);
      expect(out[1]).toMatchObject({ ok: true, value: [{ ok: true, value: "S" }] });
      expect(seen.map((r) => [r.agentId, r.chain.join(">"), r.path])).toEqual([
        ["a1", "main", "/secret/s.txt"],
        ["a2", "main>helper", "/secret/s.txt"],
      ]);
    } finally {
      await host.close();
    }
  });

  it("deny fails the operation with a message the model can act on", async () => {
    const seen: ApprovalRequest[] = [];
    const host = await flaggedHost(() => "deny", seen);
    try {
      const [r, m, d] = await run(host, [
        { op: "readFile", args: ["/secret/s.txt"] },
        { op: "move", args: ["/free/free.txt", "/secret/x.txt"] },
        { op: "remove", args: ["/secret/s.txt"] },
      ]);
      expect(r).toMatchInlineSnapshot(`
        {
          "code": "approval_denied",
          "message": "Access denied: reading '/secret/s.txt' was not approved. Do not retry the same request; choose another path or report that you could not do this.",
          "ok": false,
        }
      `);
      expect(m?.message).toMatchInlineSnapshot(
        `"Access denied: moving '/secret/x.txt' was not approved. Do not retry the same request; choose another path or report that you could not do this."`,
      );
      expect(d?.code).toBe("approval_denied");
      expect(seen.map((x) => x.operation)).toEqual(["read", "move", "delete"]);
    } finally {
      await host.close();
    }
  });

  it("no approver: denied, saying approval was needed and nobody could give it", async () => {
    const host = await flaggedHost(undefined, []);
    try {
      const [r] = await run(host, [{ op: "writeFile", args: ["/secret/s.txt", "x"] }]);
      expect(r?.message).toMatchInlineSnapshot(
        `"Access denied: writing '/secret/s.txt' needs approval, and no approver is configured to give it. Choose a path that needs no approval, or report that you could not do this."`,
      );
    } finally {
      await host.close();
    }
  });

  it("an approver answering anything else, or throwing, is a denial", async () => {
    for (const decide of [
      () => "yes",
      () => {
        throw new Error("boom");
      },
    ]) {
      const host = await flaggedHost(decide, []);
      try {
        const [r] = await run(host, [{ op: "readFile", args: ["/secret/s.txt"] }]);
        expect(r?.code).toBe("approval_denied");
      } finally {
        await host.close();
      }
    }
  });

  it("one slow approver blocks only its own agent", async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    const host = await flaggedHost(async (r) => {
      if (r.agentId === "a1") await gate;
      return "once";
    }, []);
    try {
      const slow = run(host, [{ op: "readFile", args: ["/secret/s.txt"] }]);
      // Started second, finishes first although it asks too.
      const fast = await run(host, [
        { op: "readFile", args: ["/secret/s.txt"] },
        { op: "listFiles", args: ["/free"] },
      ]);
      expect(fast.map((o) => o.ok)).toEqual([true, true]);
      release();
      expect((await slow)[0]?.value).toBe("S");
    } finally {
      await host.close();
    }
  });

  it("a hostile worker's strings never reach the approver", async () => {
    const seen: ApprovalRequest[] = [];
    const host = await flaggedHost(() => "once", seen);
    try {
      await run(host, [
        { op: "readFile", args: ["/secret/../secret/./s.txt"] },
        { op: "writeFile", args: ["/secret/evil\u001b[31mAPPROVE\u0007.txt", "x"] },
        { op: "readFile", args: [join(base, "secret", "s.txt")] },
      ]);
      expect(seen.map((r) => r.path)).toEqual([
        "/secret/s.txt",
        "/secret/evil\\u001b[31mAPPROVE\\u0007.txt",
      ]);
      for (const r of seen) {
        expect(Object.keys(r).sort()).toEqual(["agentId", "chain", "operation", "path", "worker"]);
        expect(JSON.stringify(r)).not.toContain(base);
      }
    } finally {
      await host.close();
    }
  });

  it("the root form's flags reach every mount; an object mount may set its own", async () => {
    const seen: ApprovalRequest[] = [];
    const host = await createHost({
      sandbox: {
        root: "project",
        writeApproval: true,
        mounts: [{ source: "secret", target: "/secret", readApproval: true }],
      },
      basePath: base,
      workers: { main: { module: script } },
      onApproval: (r) => {
        seen.push(r);
        return "once";
      },
    });
    try {
      const out = await run(host, [
        { op: "readFile", args: ["/free.txt"] },
        { op: "readFile", args: ["/secret/s.txt"] },
        { op: "writeFile", args: ["/secret/w.txt", "w"] },
        { op: "mkdir", args: ["/d"] },
      ]);
      expect(out.every((o) => o.ok)).toBe(true);
      expect(seen.map((r) => `${r.operation} ${r.path}`)).toEqual([
        "read /secret/s.txt",
        "write /secret/w.txt",
        "write /d",
      ]);
    } finally {
      await host.close();
    }
  });
});

describe("approvals around in-process tools", () => {
  const sandbox = () =>
    createSandbox(
      {
        paths: {
          free: { root: "project", mode: "rw" },
          secret: { root: "secret", mode: "rw", readApproval: true, writeApproval: true },
        },
      },
      { basePath: base },
    );

  it("createToolDefinitions asks with the tool's own name; deny is the tool's error text", async () => {
    const seen: ApprovalRequest[] = [];
    let answer: "once" | "session" | "deny" = "deny";
    const defs = await createToolDefinitions(sandbox(), {
      onApproval: (r) => {
        seen.push(r);
        return answer;
      },
    });
    const tool = (n: string) => defs.find((d) => d.name === n)!;
    expect(await tool("read_file").execute({ path: "/free/free.txt" })).toContain("free");
    expect(await tool("read_file").execute({ path: "/secret/s.txt" })).toMatchInlineSnapshot(
      `"Error [approval_denied]: Access denied: reading '/secret/s.txt' was not approved. Do not retry the same request; choose another path or report that you could not do this."`,
    );
    answer = "session";
    expect(await tool("read_file").execute({ path: "/secret/s.txt" })).toContain("S");
    expect(await tool("read_multiple_files").execute({ paths: ["/secret/s.txt"] })).toContain("S");
    answer = "once";
    expect(
      await tool("move_file").execute({ source: "/free/free.txt", destination: "/secret/f.txt" }),
    ).not.toContain("Error");
    expect(seen.map((r) => `${r.tool} ${r.operation} ${r.path}`)).toEqual([
      "read_file read /secret/s.txt",
      "read_file read /secret/s.txt",
      "move_file move /secret/f.txt",
    ]);
    expect(seen[0]).toEqual({
      agentId: "in-process",
      worker: "in-process",
      chain: ["in-process"],
      operation: "read",
      path: "/secret/s.txt",
      tool: "read_file",
    });
  });

  it("createSandboxTools applies the same rules", async () => {
    const seen: string[] = [];
    const tools = await createSandboxTools(sandbox(), {
      onApproval: (r) => {
        seen.push(`${r.tool} ${r.path}`);
        return "deny";
      },
    });
    const out = await tools.write_file!.execute!(
      { path: "/secret/new.txt", content: "x" },
      { toolCallId: "t1", messages: [] },
    );
    expect(String(out)).toContain("approval_denied");
    expect(seen).toEqual(["write_file /secret/new.txt"]);
  });

  it("refuses onApproval with a sandbox it cannot check (a thread's ctx.sandbox)", async () => {
    const sb = sandbox();
    const proxy = {
      readBytes: (p: string) => sb.readBytes(p),
      writeFile: (p: string, c: string) => sb.writeFile(p, c),
      editFile: sb.editFile.bind(sb),
      listFiles: sb.listFiles.bind(sb),
      stat: sb.stat.bind(sb),
      mkdir: sb.mkdir.bind(sb),
      remove: sb.remove.bind(sb),
      move: sb.move.bind(sb),
      describe: () => sb.describe(),
    };
    const e = await createToolDefinitions(proxy, { onApproval: () => "once" }).catch(
      (x: Error) => x,
    );
    expect((e as Error).message).toMatchInlineSnapshot(`
      "Invalid configuration in tool options:
      ✖ needs an in-process Sandbox; in an agent thread the host asks (createHost({ onApproval })) → at onApproval"
    `);
  });
});

describe("shell approval (in-process tools)", () => {
  it("asks before a command where any reachable area needs approval", async () => {
    const seen: string[] = [];
    const ran: string[] = [];
    const sb = createSandbox({ root: "project", writeApproval: true }, { basePath: base });
    const defs = await createToolDefinitions(sb, {
      runCommand: async (c) => {
        ran.push(c);
        return { exitCode: 0, stdout: "ok", stderr: "", timedOut: false };
      },
      onApproval: (r) => {
        seen.push(`${r.tool ?? ""} ${r.operation} ${r.path}`);
        return "deny";
      },
    });
    const shell = defs.find((d) => d.name === "shell")!;
    expect(await shell.execute({ command: "echo hi" })).toContain("approval_denied");
    expect(ran).toEqual([]);
    expect(seen).toEqual(["shell shell /"]);
  });
});

describe("docs example", () => {
  it("examples/readme/approvals/host.mjs prints what docs/approvals-and-audit.md says", () => {
    const host = fileURLToPath(new URL("../examples/readme/approvals/host.mjs", import.meta.url));
    const out = execFileSync(process.execPath, [host], { cwd: base, encoding: "utf8" });
    expect(out).toBe(README_OUTPUT);
  });
});

/** The output shown in docs/approvals-and-audit.md, right after the example's code. */
const README_OUTPUT = `notes: write /notes/done.md → once
notes: expand (read) /drafts → session
notes: delete /notes/todo.md → deny
{
  plan: 'Plan: approvals first.',
  refused: 'approval_denied',
  readable: [ '/drafts', '/notes' ]
}
sandbox:
  allow_read:
    - "/drafts"
    - "/notes"
  allow_write:
    - "/notes"
{
  operation: 5,
  approval_request: 3,
  approval_decision: 3,
  grant: 1,
  denial: 1
}
`;

/**
 * Review findings on approvals (issue 13, second review): bypasses through
 * grep/listFiles, attachments, move and editFile; through links; session
 * grants wider than their folder; one agent flooding the approver.
 */
describe("approval bypasses (review findings)", () => {
  let root: string;
  beforeAll(() => {
    root = makeTempDir();
    writeTree(join(root, "proj"), {
      "free.txt": "free",
      pub: { "p.txt": "pub" },
      notes: { "a.txt": "a" },
      notes2: { "b.txt": "NOTE2" },
    });
    writeTree(join(root, "sec"), { "s.txt": "TOPSECRET" });
    writeTree(join(root, "wsec"), { "w.txt": "w" });
    writeTree(join(root, "priv"), { "p.txt": "PRIVATE" });
    symlinkSync("../../sec/s.txt", join(root, "proj/pub/x.txt"));
    symlinkSync("../../sec", join(root, "proj/pub/dir"));
    symlinkSync("../../wsec", join(root, "proj/pub/wdir"));
    symlinkSync("../notes2", join(root, "proj/notes/lnk"));
  });
  afterAll(() => removeDir(root));

  /** `/` is free; `/secret` needs read approval, `/wsec` write approval. */
  const host = (decide: (r: ApprovalRequest) => unknown, seen: ApprovalRequest[]) =>
    createHost({
      sandbox: {
        root: "proj",
        mounts: [
          { source: "sec", target: "/secret", readApproval: true },
          { source: "wsec", target: "/wsec", writeApproval: true },
        ],
      },
      basePath: root,
      workers: { main: { module: script, delegates: ["helper"] }, helper: { module: script } },
      onApproval: async (r) => {
        seen.push(r);
        return decide(r) as "once";
      },
    });
  const asked = (seen: ApprovalRequest[]) => seen.map((r) => `${r.operation} ${r.path}`);

  it("grep, listFiles, attachments, editFile and move out ask read for a flagged mount", async () => {
    const seen: ApprovalRequest[] = [];
    const h = await host(() => "deny", seen);
    try {
      const out = await run(h, [
        { op: "grep", args: [{ pattern: "TOPSECRET", path: "/" }] },
        { op: "listFiles", args: ["/"] },
        { op: "delegate", worker: "helper", input: {}, opts: { attachments: ["/secret/s.txt"] } },
        { op: "editFile", args: ["/secret/s.txt", [{ oldText: "TOP", newText: "TOP" }]] },
        { op: "move", args: ["/secret/s.txt", "/stolen.txt"] },
        { op: "exists", args: ["/stolen.txt"] },
      ]);
      expect(out.slice(0, 5).map((o) => o.code)).toEqual(Array(5).fill("approval_denied"));
      expect(out[5]).toEqual({ ok: true, value: false });
      expect(asked(seen)).toEqual([
        "read /secret",
        "read /secret",
        "read /secret/s.txt",
        "read /secret/s.txt",
        "read /secret/s.txt",
      ]);
    } finally {
      await h.close();
    }
  });

  it("approved, the search and the attachment read the flagged mount", async () => {
    const seen: ApprovalRequest[] = [];
    const h = await host(() => "once", seen);
    try {
      const out = await run(h, [
        { op: "grep", args: [{ pattern: "TOPSECRET", path: "/" }] },
        { op: "delegate", worker: "helper", input: {}, opts: { attachments: ["/secret/s.txt"] } },
      ]);
      const g = out[0]!.value as { matches: { path: string }[] };
      expect(g.matches.map((m) => m.path)).toContain("/secret/s.txt");
      expect(out[1]!.ok).toBe(true);
    } finally {
      await h.close();
    }
  });

  it("a link from a free area into a flagged mount asks, naming both locations", async () => {
    const seen: ApprovalRequest[] = [];
    const h = await host(() => "deny", seen);
    try {
      const out = await run(h, [
        { op: "readFile", args: ["/pub/x.txt"] },
        { op: "readFile", args: ["/pub/dir/s.txt"] },
        { op: "writeFile", args: ["/pub/wdir/b.txt", "b"] },
        { op: "readFile", args: ["/pub/p.txt"] },
        { op: "grep", args: [{ pattern: "TOPSECRET", path: "/pub" }] },
      ]);
      expect(out.slice(0, 3).map((o) => o.code)).toEqual(Array(3).fill("approval_denied"));
      expect(out[3]!.value).toBe("pub");
      // The search of /pub does not follow its link into /secret.
      expect((out[4]!.value as { matches: unknown[] }).matches).toEqual([]);
      expect(asked(seen)).toEqual([
        "read /pub/x.txt (\u2192 /secret/s.txt)",
        "read /pub/dir/s.txt (\u2192 /secret/s.txt)",
        "write /pub/wdir/b.txt (\u2192 /wsec/b.txt)",
      ]);
      expect(existsSync(join(root, "wsec/b.txt"))).toBe(false);
    } finally {
      await h.close();
    }
  });

  it("a session grant covers its folder in its own mount, judged where links lead", async () => {
    const seen: ApprovalRequest[] = [];
    const h = await createHost({
      sandbox: {
        root: "proj",
        readApproval: true,
        mounts: [{ source: "priv", target: "/notes/private", readApproval: true }],
      },
      basePath: root,
      workers: { main: { module: script } },
      onApproval: (r) => {
        seen.push(r);
        return r.path === "/notes/a.txt" ? "session" : "deny";
      },
    });
    try {
      const out = await run(h, [
        { op: "readFile", args: ["/notes/a.txt"] },
        { op: "readFile", args: ["/notes/a.txt"] },
        { op: "readFile", args: ["/notes/private/p.txt"] },
        { op: "readFile", args: ["/notes/lnk/b.txt"] },
      ]);
      expect(out.map((o) => o.value ?? o.code)).toEqual([
        "a",
        "a",
        "approval_denied",
        "approval_denied",
      ]);
      expect(asked(seen)).toEqual([
        "read /notes/a.txt",
        "read /notes/private/p.txt",
        "read /notes/lnk/b.txt (\u2192 /notes2/b.txt)",
      ]);
    } finally {
      await h.close();
    }
  });

  it("one agent has one request before the approver at a time; identical ones share it", async () => {
    const seen: ApprovalRequest[] = [];
    let now = 0;
    let peak = 0;
    const h = await host(async () => {
      peak = Math.max(peak, ++now);
      await new Promise((r) => setTimeout(r, 20));
      now--;
      return "once";
    }, seen);
    try {
      const paths = Array.from({ length: 40 }, (_, i) => (i % 2 ? "/secret/s.txt" : "/pub/x.txt"));
      const out = await run(h, [{ op: "readMany", args: paths }]);
      expect(out[0]!.ok).toBe(true);
      expect(peak).toBe(1);
      expect(new Set(asked(seen))).toEqual(
        new Set(["read /secret/s.txt", "read /pub/x.txt (\u2192 /secret/s.txt)"]),
      );
      expect(seen.length).toBeLessThan(10);
    } finally {
      await h.close();
    }
  });

  it("in-process tools: grep, edit_file, move_file and links ask too", async () => {
    const seen: string[] = [];
    const sb = createSandbox(
      {
        root: "proj",
        mounts: [
          { source: "sec", target: "/secret", readApproval: true },
          { source: "wsec", target: "/wsec", writeApproval: true },
        ],
      },
      { basePath: root },
    );
    const defs = await createToolDefinitions(sb, {
      onApproval: (r) => {
        seen.push(`${r.tool} ${r.operation} ${r.path}`);
        return "deny";
      },
    });
    const tool = (n: string) => defs.find((d) => d.name === n)!;
    const grep = (await tool("grep").execute({ pattern: "TOPSECRET", path: "/" })) as string;
    expect(grep).toContain("approval_denied");
    expect(grep).not.toContain("TOPSECRET:");
    expect(
      await tool("edit_file").execute({
        path: "/secret/s.txt",
        edits: [{ oldText: "TOP", newText: "TOP" }],
      }),
    ).toContain("approval_denied");
    expect(
      await tool("move_file").execute({ source: "/secret/s.txt", destination: "/out.txt" }),
    ).toContain("approval_denied");
    expect(await tool("read_file").execute({ path: "/pub/x.txt" })).toContain("approval_denied");
    expect(await tool("write_file").execute({ path: "/pub/wdir/c.txt", content: "c" })).toContain(
      "approval_denied",
    );
    const viaLink = (await tool("grep").execute({ pattern: "TOPSECRET", path: "/pub" })) as string;
    expect(viaLink).toContain("approval_denied");
    expect(viaLink).not.toContain("x.txt");
    expect(existsSync(join(root, "proj/out.txt"))).toBe(false);
    expect(existsSync(join(root, "wsec/c.txt"))).toBe(false);
    expect(seen).toEqual([
      "grep read /secret",
      "edit_file read /secret/s.txt",
      "move_file read /secret/s.txt",
      "read_file read /pub/x.txt (\u2192 /secret/s.txt)",
      "write_file write /pub/wdir/c.txt (\u2192 /wsec/c.txt)",
      // A search of /pub could read /secret through its links: asked.
      "grep read /secret",
    ]);
  });
});

describe("escapeControl", () => {
  it("escapes zero-width and format characters", () => {
    const s = "a\u200bb\u200c\u200d\u2060\u2061\u2064\u061c\ufeff\u180ez";
    expect(escapeControl(s)).toBe(
      "a\\u200bb\\u200c\\u200d\\u2060\\u2061\\u2064\\u061c\\ufeff\\u180ez",
    );
    expect(escapeControl("héllo ✓")).toBe("héllo ✓");
  });
});
