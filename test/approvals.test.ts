/**
 * Approvals decided by the host across real threads (issue 13): once,
 * session and deny; no approver; session decisions not inherited by a
 * callee or a later run; hostile strings never reach the approver.
 */
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHost as createBuiltHost } from "../dist/src/index.js";
import { createSandboxTools } from "../src/ai-sdk/index.js";
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

type Step = { op: string; args?: unknown[]; worker?: string; input?: unknown };
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

describe("README example", () => {
  it("examples/readme/approvals/host.mjs prints what the README says", () => {
    const host = fileURLToPath(new URL("../examples/readme/approvals/host.mjs", import.meta.url));
    const out = execFileSync(process.execPath, [host], { cwd: base, encoding: "utf8" });
    expect(out).toBe(README_OUTPUT);
  });
});

/** The output shown in the README section "Approvals, expansion and the audit log". */
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
