/**
 * Agent processes (`isolation: "process"`, issue 21): a worker module runs
 * unchanged in its own Node process under bubblewrap, behind the same port
 * server as a thread — the same operations, refusals, events, approvals
 * and audit — and delegation composes across both kinds in any order.
 * Faults, deadlines, aborts and `close()` leave nothing running.
 */
import { execFile, spawnSync } from "node:child_process";
import {
  chmodSync,
  chownSync,
  copyFileSync,
  linkSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  realpathSync,
  writeFileSync,
} from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createHost as createBuiltHost, loadProgram } from "../dist/src/index.js";
import type { Host, HostEvent, HostOptions } from "../src/index.js";
import { assertBuilt } from "./conformance/thread.js";
import { describeWithBwrap, IS_ROOT } from "./helpers/bwrap.js";
import { AS_NOBODY, removeNobodyStage, stageForNobody } from "./helpers/nobody.js";
import { waitForNoAgentProcesses } from "./helpers/processes.js";
import { makeTempDir, removeDir, writeTree } from "./helpers/tree.js";

const createHost = createBuiltHost as unknown as (o: HostOptions) => Promise<Host>;
const fx = (name: string) => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url));
const AGENT = fx("process/agent.js");
const FAULT = fx("host/fault.js");

let base: string;
let root: string;

beforeAll(() => {
  assertBuilt();
  base = makeTempDir("mountbox-process-");
  root = join(base, "project");
  writeTree(root, { src: { "a.ts": "export const a = 1;\n", lib: { "b.ts": "b" } }, out: {} });
  writeTree(join(base, "ro"), { "r.txt": "r" });
  writeFileSync(join(base, "outside.txt"), "SECRET");
});
afterAll(() => removeDir(base));

function hostWith(workers: HostOptions["workers"], extra: Partial<HostOptions> = {}) {
  return createHost({
    sandbox: { root: "project", mounts: ["ro:/ro:ro"] },
    basePath: base,
    workers,
    isolation: "process",
    ...extra,
  });
}

async function failure(p: Promise<unknown>): Promise<Error & { reason?: string; code?: string }> {
  try {
    await p;
  } catch (err) {
    return err as Error & { reason?: string };
  }
  throw new Error("expected a failure");
}

describeWithBwrap("agent processes", () => {
  it("run a worker in its own process: no environment, a private /tmp, the host's pid unseen", async () => {
    const host = await hostWith({ a: { module: AGENT } });
    try {
      const out = (await host.run("a", { kind: "where" })) as Record<string, unknown>;
      expect(out.env).toEqual({});
      expect(out.cwd).toBe("/tmp");
      // Its own pid namespace: it is a small number there, never the host's.
      expect(out.pid).not.toBe(process.pid);
      expect(out.pid as number).toBeLessThan(10);
      expect(out.roots).toEqual(["/"]);
      expect(out.writable).toEqual(["/"]);
    } finally {
      await host.close();
    }
  });

  it("serve its sandbox through the same port: reads, writes, refusals with their class, events", async () => {
    const events: HostEvent[] = [];
    const host = await hostWith({ a: { module: AGENT } }, { onEvent: (e) => events.push(e) });
    try {
      const out = (await host.run("a", { kind: "io" })) as Record<string, unknown>;
      expect(out.read).toEqual({ ok: "export const a = 1;\n" });
      expect(out.write).toEqual({ ok: undefined });
      expect(out.readBack).toEqual({ ok: "written by a process" });
      expect(out.refused).toEqual({
        code: "path_not_writable",
        name: "PathNotWritableError",
        cls: "PathNotWritableError",
      });
      expect(out.outside).toMatchObject({ code: "path_not_in_sandbox" });
      expect((out.bytes as { ok: Uint8Array }).ok).toBeInstanceOf(Uint8Array);
      expect(readFileSync(join(root, "out/w.txt"), "utf8")).toBe("written by a process");
      const denials = events
        .filter((e) => e.type === "denial")
        .map((e) => (e as { op: string }).op);
      expect(denials.sort()).toEqual(["readFile", "writeFile"]);
      const ops = events.filter((e) => e.type === "operation").length;
      expect(ops).toBeGreaterThanOrEqual(6);
      expect(JSON.stringify(events)).not.toContain(base);
    } finally {
      await host.close();
    }
  });

  it("compose delegation with threads in any order, each hop narrower", async () => {
    const host = await createHost({
      sandbox: { root: "project", mounts: ["ro:/ro:ro"] },
      basePath: base,
      workers: {
        p1: { module: AGENT, isolation: "process", delegates: ["t1"] },
        t1: {
          module: AGENT,
          isolation: "thread",
          delegates: ["p2"],
          sandbox: { restrict: "/src" },
        },
        p2: { module: AGENT, isolation: "process", sandbox: { readonly: true } },
      },
    });
    try {
      const out = (await host.run("p1", {
        kind: "delegate",
        to: "t1",
        input: {
          kind: "delegate",
          to: "p2",
          opts: { sandbox: { allowRead: ["/src/lib"] } },
        },
      })) as { me: number; callee: { me: number; callee: Record<string, unknown> } };
      const p2 = out.callee.callee;
      expect(p2.roots).toEqual(["/src/lib"]);
      expect(p2.writable).toEqual([]);
      // The thread runs in the host's process; each process in its own.
      expect(out.callee.me).toBe(process.pid);
      expect(out.me).toBeLessThan(10);
      expect(p2.pid as number).toBeLessThan(10);
    } finally {
      await host.close();
    }
  });

  it("carry big writes and big reads at once, both ways, without stalling", async () => {
    const host = await hostWith({ a: { module: AGENT } });
    try {
      // 4 × 8 MiB written and read back while the next are written: 12 reads.
      expect(await host.run("a", { kind: "bulk", mb: 8, files: 4, rounds: 4 })).toBe(12);
    } finally {
      await host.close();
    }
  }, 60_000);

  it("pass stdout, stderr and ctx.log on as log lines", async () => {
    const logs: { stream?: string; message: string; level: string }[] = [];
    const host = await hostWith(
      { a: { module: AGENT } },
      {
        onEvent: (e) => {
          if (e.type === "log") logs.push(e as never);
        },
      },
    );
    try {
      expect(await host.run("a", { kind: "log" })).toBe("logged");
      expect(logs.map((l) => [l.stream ?? "ctx", l.level, l.message]).sort()).toEqual([
        ["ctx", "warn", "through ctx.log"],
        ["stderr", "warn", "to stderr"],
        ["stdout", "info", "to stdout"],
      ]);
    } finally {
      await host.close();
    }
  });

  it("have the network only with network: true", async () => {
    const server = createServer((s) => s.destroy());
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const port = (server.address() as { port: number }).port;
    const host = await hostWith({
      off: { module: AGENT },
      on: { module: AGENT, network: true },
    });
    try {
      expect(await host.run("off", { kind: "net", port })).toMatch(/^E(CONNREFUSED|NETUNREACH)$/);
      expect(await host.run("on", { kind: "net", port })).toBe("connected");
    } finally {
      await host.close();
      server.close();
    }
  });

  it("fail only themselves: a throw, an exit, a crash, a loop, the heap, a huge or deep message", async () => {
    const host = await hostWith({
      f: { module: FAULT, timeoutMs: 3000 },
      small: { module: FAULT, maxOldGenerationSizeMb: 32, timeoutMs: 20_000 },
      ok: { module: AGENT },
    });
    try {
      const cases: [string, unknown, string, RegExp][] = [
        ["f", { kind: "throw", message: "bad input" }, "threw", /bad input/],
        ["f", { kind: "exit" }, "exited", /exited \(code 3\) without a result/],
        ["f", { kind: "crash-node" }, "exited", /exited \(code 1\)/],
        ["f", { kind: "loop" }, "timeout", /did not finish within 3000 ms/],
        ["small", { kind: "oom" }, "out_of_memory", /ran out of memory/],
        // Too deep to serialize: the process cannot send it (a thread's
        // host cannot receive it); either way the agent fails alone.
        ["f", { kind: "deep", depth: 20_000 }, "threw", /could not be sent/],
      ];
      for (const [worker, input, reason, message] of cases) {
        const err = await failure(host.run(worker, input));
        expect([(input as { kind: string }).kind, err.reason]).toEqual([
          (input as { kind: string }).kind,
          reason,
        ]);
        expect(err.message).toMatch(message);
        expect(err.message).not.toContain(base);
      }
      // The host goes on.
      expect(await host.run("ok", {})).toBe("ok");
    } finally {
      await host.close();
    }
    expect(await waitForNoAgentProcesses()).toEqual([]);
  }, 60_000);

  it("hostile writes on the channel stop only the writer", async () => {
    const host = await hostWith({
      raw: { module: fx("process/raw-channel.js"), timeoutMs: 20_000 },
      ok: { module: AGENT },
    });
    try {
      const outcomes: Record<string, [string | undefined, string]> = {};
      for (const kind of [
        "garbage",
        "huge",
        "lane",
        "flood",
        "mapbomb",
        "unknown",
        "half",
        "slowflood",
      ]) {
        const err = await failure(host.run("raw", { kind }));
        outcomes[kind] = [err.reason, err.message.replace(/\d+/g, "N")];
      }
      expect(outcomes).toMatchInlineSnapshot(`
        {
          "flood": [
            "oversize",
            "Worker 'raw' posted more than N messages or N bytes on its channel within a second; it was stopped (ctx.log drops lines past its budget instead).",
          ],
          "garbage": [
            "oversize",
            "Worker 'raw' sent a message the host will not read (unknown tag N); it was stopped.",
          ],
          "half": [
            "oversize",
            "Worker 'raw' began a message on its channel and did not finish it; it was stopped.",
          ],
          "huge": [
            "oversize",
            "Worker 'raw' sent a message of N bytes on its channel; it was stopped.",
          ],
          "lane": [
            "oversize",
            "Worker 'raw' sent a message for no port on its channel; it was stopped.",
          ],
          "mapbomb": [
            "oversize",
            "Worker 'raw' sent a message the host will not read (unknown tag N); it was stopped.",
          ],
          "slowflood": [
            "oversize",
            "Worker 'raw' sent a message the host will not read (it spent more than its share of the host's time on its messages); it was stopped.",
          ],
          "unknown": [
            "threw",
            "Worker 'raw' sent a message on its channel that its runtime never sends; it was stopped.",
          ],
        }
      `);
      expect(await host.run("ok", {})).toBe("ok");
    } finally {
      await host.close();
    }
  }, 60_000);

  it("a deadline, an abort and close() kill the process and everything it started", async () => {
    const host = await hostWith({
      a: { module: AGENT },
      boss: { module: AGENT, delegates: ["a"], isolation: "thread" },
    });
    const timed = await failure(host.run("a", { kind: "sleep", ms: 60_000 }, { timeoutMs: 500 }));
    expect(timed.reason).toBe("timeout");
    const controller = new AbortController();
    const started = new Promise<void>((resolve) => {
      const iter = host.events[Symbol.asyncIterator]();
      const next = (): void => {
        void iter.next().then((r) => {
          if (r.done) return;
          const e = r.value as HostEvent & { worker?: string };
          if (e.type === "agent_started" && e.worker === "a") resolve();
          else next();
        });
      };
      next();
    });
    const run = host.run(
      "boss",
      { kind: "delegate", to: "a", input: { kind: "abortable" } },
      { signal: controller.signal },
    );
    await started;
    controller.abort();
    expect((await failure(run)).reason).toBe("aborted");
    const pending = host.run("a", { kind: "sleep", ms: 60_000 }).catch((e: Error) => e);
    await new Promise((r) => setTimeout(r, 300));
    await host.close();
    expect(((await pending) as { reason?: string }).reason).toBe("aborted");
    expect(await waitForNoAgentProcesses()).toEqual([]);
  }, 30_000);

  it("warm spares have their module imported ahead, and are used once each", async () => {
    const host = await hostWith({ a: { module: AGENT } }, { warmProcesses: 1 });
    try {
      await new Promise((r) => setTimeout(r, 1500));
      const first = (await host.run("a", { kind: "where" })) as { importedMsAgo: number };
      // Imported when the spare started, well before the run.
      expect(first.importedMsAgo).toBeGreaterThan(500);
      await new Promise((r) => setTimeout(r, 1500));
      const second = (await host.run("a", { kind: "where" })) as { importedMsAgo: number };
      expect(second.importedMsAgo).toBeGreaterThan(500);
    } finally {
      await host.close();
    }
    expect(await waitForNoAgentProcesses()).toEqual([]);
  }, 30_000);

  it("a host whose last work is close() waits for its spares to end, then exits", () => {
    const dist = pathToFileURL(
      fileURLToPath(new URL("../dist/src/index.js", import.meta.url)),
    ).href;
    const run = spawnSync(process.execPath, [fx("process/close-host.mjs"), dist, AGENT], {
      encoding: "utf8",
      timeout: 30_000,
    });
    // 13: Node's "unsettled top-level await" (close() never resolved).
    expect([run.status, run.stdout.trim()], run.stderr).toEqual([0, "closed"]);
  });

  it("run on a Node whose path has '=' in it (env would take it for a variable)", () => {
    const dir = join(base, "node=1");
    mkdirSync(dir);
    const node = join(dir, "node");
    try {
      linkSync(process.execPath, node);
    } catch {
      copyFileSync(process.execPath, node);
    }
    const dist = pathToFileURL(
      fileURLToPath(new URL("../dist/src/index.js", import.meta.url)),
    ).href;
    const input = JSON.stringify({ kind: "where" });
    const run = spawnSync(node, [fx("process/run-host.mjs"), dist, AGENT, input], {
      cwd: root,
      encoding: "utf8",
      timeout: 30_000,
    });
    expect([run.status, JSON.parse(run.stdout || "null")?.cwd], run.stderr).toEqual([0, "/tmp"]);
  });

  it("a warm spare that speaks before it is given an agent is stopped at once", async () => {
    const host = await hostWith(
      { a: { module: fx("process/spare-talker.js") } },
      { warmProcesses: 1 },
    );
    try {
      // The spare announced a 60 MB frame at import: it is stopped at the
      // header, and holds nothing.
      await new Promise((r) => setTimeout(r, 2000));
      expect(await waitForNoAgentProcesses(10_000)).toEqual([]);
      // Its worker still runs, in a fresh process.
      expect(await host.run("a", {})).toBe("ran");
    } finally {
      await host.close();
    }
  }, 30_000);

  it("approvals and the audit log see a process agent's operations as a thread's", async () => {
    const audit = join(base, "audit.jsonl");
    const asked: string[] = [];
    const host = await createHost({
      sandbox: {
        root: "project",
        mounts: [{ source: "ro", target: "/ro", readonly: true, readApproval: true }],
      },
      basePath: base,
      isolation: "process",
      auditLog: audit,
      onApproval: async (r) => {
        asked.push(`${r.operation} ${r.path}`);
        return "deny" as const;
      },
      workers: { s: { module: fx("approvals/script.js") } },
    });
    try {
      const out = (await host.run("s", {
        steps: [{ op: "readFile", args: ["/ro/r.txt"] }],
      })) as { code?: string }[];
      expect(out[0]?.code).toBe("approval_denied");
      expect(asked).toEqual(["read /ro/r.txt"]);
    } finally {
      await host.close();
    }
    const lines = readFileSync(audit, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(lines.map((l) => l.type)).toEqual(
      expect.arrayContaining(["approval_request", "approval_decision", "denial", "operation"]),
    );
  });

  it("program.yaml and .worker files set isolation; a bad value is a config error", async () => {
    const dir = join(base, "program");
    writeTree(dir, {
      "program.yaml": [
        "isolation: process",
        "sandbox: { root: ./data }",
        "workers:",
        `  p: { module: ${JSON.stringify(AGENT)} }`,
        `  t: { module: ${JSON.stringify(AGENT)}, isolation: thread }`,
      ].join("\n"),
      data: { "a.txt": "a" },
    });
    const program = await loadProgram(dir);
    const host = await createHost(program as unknown as HostOptions);
    try {
      const p = (await host.run("p", { kind: "where" })) as { pid: number };
      const t = (await host.run("t", { kind: "where" })) as { pid: number };
      expect(p.pid).toBeLessThan(10);
      expect(t.pid).toBe(process.pid);
    } finally {
      await host.close();
    }
    const bad = await failure(
      createHost({ workers: { a: { module: AGENT, isolation: "vm" as never } } }),
    );
    expect(bad.message).toMatchInlineSnapshot(`
      "Invalid configuration:
      ✖ expected "thread" (a hardened worker thread) or "process" (a confined process) → at workers.a.isolation"
    `);
  });

  it.runIf(IS_ROOT)(
    "run from a host that is not root (nobody): the same confinement",
    async () => {
      const staged = stageForNobody();
      try {
        const dir = realpathSync(makeTempDir("mountbox-process-nobody-"));
        writeTree(join(dir, "root"), { src: { "a.ts": "export const a = 1;\n" }, out: {} });
        writeTree(join(dir, "ro"), { "r.txt": "r" });
        chmodSync(dir, 0o755);
        for (const p of [
          dir,
          ...readdirSync(dir, { recursive: true }).map((n) => join(dir, String(n))),
        ])
          chownSync(p, 65534, 65534);
        const run = await new Promise<string>((done, fail) =>
          execFile(
            "setpriv",
            [
              ...AS_NOBODY,
              staged.node,
              staged.fixture("process/nobody-host.mjs"),
              join(dir, "root"),
              join(dir, "ro"),
            ],
            { encoding: "utf8", timeout: 60_000 },
            (err, stdout, stderr) =>
              err ? fail(new Error(`${err.message}\n${stderr}`)) : done(stdout),
          ),
        );
        const out = JSON.parse(run.trim().split("\n").at(-1) ?? "{}");
        expect(out.error).toBeUndefined();
        expect(out.uid).toBe(65534);
        expect(out.where.env).toEqual({});
        expect(out.where.pid).toBeLessThan(10);
        expect(out.io.read).toEqual({ ok: "export const a = 1;\n" });
        expect(out.io.readBack).toEqual({ ok: "written by a process" });
        expect(out.io.refused.code).toBe("path_not_writable");
        removeDir(dir);
      } finally {
        removeNobodyStage();
      }
    },
    60_000,
  );

  it("where bubblewrap cannot be used, createHost says so for each process worker", async () => {
    const saved = process.env.MOUNTBOX_BWRAP;
    process.env.MOUNTBOX_BWRAP = join(base, "no-bwrap");
    try {
      const err = await failure(
        createHost({
          workers: { p: { module: AGENT, isolation: "process" }, t: { module: AGENT } },
        }),
      );
      expect(err.message).toMatchInlineSnapshot(`
        "Invalid configuration:
        ✖ "process" runs the agent under kernel confinement, which is not available here: bubblewrap (bwrap) was not found. Install it (e.g. \`apt install bubblewrap\`). Use "thread" (a hardened worker thread) where that is enough → at workers.p.isolation"
      `);
    } finally {
      if (saved === undefined) delete process.env.MOUNTBOX_BWRAP;
      else process.env.MOUNTBOX_BWRAP = saved;
    }
  });
});
