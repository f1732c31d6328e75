/**
 * The host (Runtime II) with real worker threads running built JS: delegation
 * narrowing at every hop, refusals, depth, faults, deadlines, abort, events,
 * attachments, warm spares, and a clean close.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  AgentThreadError as BuiltAgentThreadError,
  DelegationRefusedError as BuiltRefused,
  createHost as createBuiltHost,
  loadProgram,
} from "../dist/src/index.js";
import type { Host, HostEvent, HostOptions } from "../src/index.js";
import { assertBuilt } from "./conformance/thread.js";
import { makeTempDir, removeDir, writeTree } from "./helpers/tree.js";

const createHost = createBuiltHost as unknown as (o: HostOptions) => Promise<Host>;
const fx = (name: string) => fileURLToPath(new URL(`./fixtures/host/${name}`, import.meta.url));

/** `mountbox/worker` as built, for worker modules written by a test. */
const WORKER_API = JSON.stringify(new URL("../dist/workers/index.js", import.meta.url).href);

/** Writes `dir/name`: a worker module importing `defineWorker`, then `body`. */
function writeWorker(dir: string, name: string, body: string): void {
  writeFileSync(join(dir, name), `import { defineWorker } from ${WORKER_API};\n${body}`);
}

let base: string;
let root: string;

beforeAll(() => {
  assertBuilt();
  base = makeTempDir();
  root = join(base, "project");
  writeTree(root, {
    src: { "a.ts": "a", lib: { "b.ts": "b" } },
    docs: { "a.pdf": "%PDF-fake", "n.md": "n" },
  });
  writeTree(join(base, "ro"), { "r.txt": "r" });
  writeFileSync(join(base, "outside.txt"), "SECRET");
});
afterAll(() => removeDir(base));

function hostWith(
  workers: HostOptions["workers"],
  extra: Partial<HostOptions> = {},
): Promise<Host> {
  return createHost({
    sandbox: { root: "project", mounts: ["ro:/ro:ro"] },
    basePath: base,
    workers,
    ...extra,
  });
}

async function failure(p: Promise<unknown>): Promise<Error & { code?: string; reason?: string }> {
  try {
    await p;
  } catch (e) {
    expect(JSON.stringify({ m: (e as Error).message })).not.toContain(base);
    return e as Error;
  }
  throw new Error("expected a failure");
}

describe("run and delegation", () => {
  it("narrows the sandbox at every hop: caller, callee config, call site", async () => {
    const host = await hostWith({
      main: { module: fx("chain.js"), delegates: ["analyzer"] },
      analyzer: { module: fx("chain.js"), sandbox: { restrict: "/src" }, delegates: ["leaf"] },
      leaf: { module: fx("chain.js"), sandbox: { readonly: true } },
    });
    const hops = await host.run("main", {
      route: ["analyzer", "leaf"],
      opts: [null, { sandbox: { allowRead: "/src/lib" } }],
    });
    expect(hops).toEqual([
      { readable: ["/"], writable: ["/"] },
      { readable: ["/src"], writable: ["/src"] },
      { readable: ["/src/lib"], writable: [] },
    ]);
    const wide = await host.run("main", {
      route: ["analyzer"],
      opts: [{ sandbox: { allowWrite: "/src/lib" } }],
    });
    expect(wide).toEqual([
      { readable: ["/"], writable: ["/"] },
      { readable: ["/src/lib"], writable: ["/src/lib"] },
    ]);
    const refused = await failure(host.run("main", { route: ["analyzer", "analyzer"] }));
    expect(refused.message).toMatchInlineSnapshot(
      `"Worker 'main' failed: Worker 'analyzer' failed: Worker 'analyzer' may not delegate to 'analyzer'. It may call: leaf."`,
    );
    await host.close();
  });

  it("surfaces escalation, undeclared delegation and unknown workers in the caller, by class", async () => {
    const host = await hostWith({
      boss: { module: fx("delegator.js"), delegates: ["reader"] },
      reader: { module: fx("echo.js"), sandbox: { restrict: "/docs", readonly: true } },
      other: { module: fx("echo.js") },
    });
    const esc = (await host.run("boss", {
      to: "reader",
      opts: { sandbox: { allowWrite: "/docs" } },
    })) as Record<string, unknown>;
    expect(esc).toMatchObject({
      ok: false,
      code: "permission_escalation",
      is: { escalation: true },
    });
    const undeclared = (await host.run("boss", { to: "other" })) as Record<string, unknown>;
    expect(undeclared).toMatchObject({
      ok: false,
      code: "delegation_refused",
      is: { refused: true },
    });
    expect(undeclared.message).toMatchInlineSnapshot(
      `"Worker 'boss' may not delegate to 'other'. It may call: reader."`,
    );
    const ok = (await host.run("boss", { to: "reader", input: 1 })) as {
      ok: boolean;
      value: { readable: string[]; writable: string[] };
    };
    expect(ok.value).toMatchObject({ readable: ["/docs"], writable: [] });
    const unknown = await failure(host.run("nobody"));
    expect(unknown).toBeInstanceOf(BuiltRefused);
    expect(unknown.message).toMatchInlineSnapshot(
      `"No worker named 'nobody'. Workers: boss, reader, other."`,
    );
    await host.close();
  });

  it("refuses chains deeper than maxDepth with a clear error", async () => {
    const host = await hostWith(
      { chain: { module: fx("chain.js"), delegates: ["chain"] } },
      { maxDepth: 3 },
    );
    expect(((await host.run("chain", { route: ["chain", "chain"] })) as unknown[]).length).toBe(3);
    const e = await failure(host.run("chain", { route: ["chain", "chain", "chain", "chain"] }));
    expect(e).toBeInstanceOf(BuiltAgentThreadError);
    expect(e.message).toContain("maxDepth 3");
    await host.close();
  });

  it("never deadlocks: depth 8 with maxAgents 2 and 2 warm spares", async () => {
    const host = await hostWith(
      { chain: { module: fx("chain.js"), delegates: ["chain"] } },
      { maxDepth: 8, maxAgents: 2, warmThreads: 2 },
    );
    const hops = (await host.run("chain", { route: Array(7).fill("chain") })) as unknown[];
    expect(hops).toHaveLength(8);
    await host.close();
  });

  it("maxThreads caps live threads, waiting callers included; a delegation past it is refused", async () => {
    const host = await hostWith(
      { chain: { module: fx("chain.js"), delegates: ["chain"] } },
      { maxDepth: 8, maxAgents: 1, maxThreads: 3 },
    );
    expect(await host.run("chain", { route: ["chain", "chain"] })).toHaveLength(3);
    const e = await failure(host.run("chain", { route: Array(3).fill("chain") }));
    expect(e.message).toContain("3 agent threads are already alive");
    expect(e.message).toContain("(maxThreads)");
    await host.close();
  });

  it("hands attachments read through the caller's sandbox to a callee that cannot read them", async () => {
    const host = await hostWith({
      boss: { module: fx("delegator.js"), delegates: ["blind"] },
      blind: { module: fx("echo.js"), sandbox: { allowRead: [] } },
    });
    const r = (await host.run("boss", { to: "blind", opts: { attachments: ["/docs/a.pdf"] } })) as {
      value: { readable: string[]; attachments: unknown[] };
    };
    expect(r.value.readable).toEqual([]);
    expect(r.value.attachments).toEqual([
      { path: "/docs/a.pdf", mediaType: "application/pdf", text: "%PDF-fake", exact: true },
    ]);
    const denied = (await host.run("boss", {
      to: "blind",
      opts: { attachments: ["/../outside.txt"] },
    })) as Record<string, unknown>;
    expect(denied).toMatchObject({
      ok: false,
      code: "path_not_in_sandbox",
      is: { notInSandbox: true },
    });
    await host.close();
  });

  it("gives no file access when no sandbox is configured", async () => {
    const host = await createHost({ workers: { w: { module: fx("echo.js") } } });
    expect(await host.run("w", 1)).toMatchObject({ readable: [], writable: [] });
    await host.close();
  });

  it("refuses an LLM worker without a model, clearly, at createHost", async () => {
    await expect(hostWith({ llm: { instructions: "Summarize." } })).rejects.toThrow(
      /LLM worker 'llm' has no model/,
    );
  });

  it("uses a fresh thread per agent, and each warm spare once", async () => {
    for (const warmThreads of [0, 2]) {
      const host = await hostWith({ w: { module: fx("echo.js") } }, { warmThreads });
      const ids = new Set<number>();
      for (let i = 0; i < 4; i++)
        ids.add(((await host.run("w", i)) as { threadId: number }).threadId);
      expect(ids.size).toBe(4);
      await host.close();
    }
  });
});

describe("loadProgram", () => {
  it("createHost(await loadProgram(dir)) runs a program: reading, delegating, being refused", async () => {
    const dir = join(base, "program");
    writeTree(dir, {
      project: { src: { "a.ts": "a" }, docs: { "n.md": "n" } },
      "program.yaml": [
        "name: demo",
        "sandbox:",
        '  root: "project"',
        "workers:",
        `  main: { module: ${JSON.stringify(fx("delegator.js"))}, delegates: [reader] }`,
        `  helper: { module: ${JSON.stringify(fx("uses-helper.js"))}, dependencies: [${JSON.stringify(fileURLToPath(new URL("./fixtures/host-lib", import.meta.url)))}] }`,
        "",
      ].join("\n"),
      workers: {
        "reader.worker": `---\nmodule: ${JSON.stringify(fx("echo.js"))}\nsandbox:\n  restrict: /src\n  readonly: true\n---\nReads sources.\n`,
      },
    });
    const host = await createHost((await loadProgram(dir)) as HostOptions);
    const ok = await host.run("main", { to: "reader", input: "hi" });
    expect(ok).toMatchObject({
      ok: true,
      value: { input: "hi", readable: ["/src"], writable: [] },
    });
    const refused = await host.run("main", {
      to: "reader",
      opts: { sandbox: { allowWrite: "/src" } },
    });
    expect(refused).toMatchObject({ ok: false, code: "permission_escalation" });
    await host.close();
  });
});

describe("worker dependencies", () => {
  it("a module may load exactly the dependencies it is granted", async () => {
    // Module and helper in temp folders outside the process's working
    // directory (Node 22 lets a thread read that one; see the next test).
    const mod = makeTempDir("mountbox-mod-");
    const lib = makeTempDir("mountbox-lib-");
    try {
      writeFileSync(
        join(lib, "helper.js"),
        'export const shout = (s) => String(s).toUpperCase() + "!";\n',
      );
      const helper = pathToFileURL(join(lib, "helper.js")).href;
      writeWorker(
        mod,
        "w.js",
        `import { shout } from ${JSON.stringify(helper)};\nexport default defineWorker(async (input) => shout(input));\n`,
      );
      const denied = await hostWith({ w: { module: join(mod, "w.js") } });
      const e = await failure(denied.run("w", "hi"));
      expect(e.message).toContain("ERR_ACCESS_DENIED: an agent thread may read only its module");
      await denied.close();
      const granted = await hostWith(
        { w: { module: join(mod, "w.js"), dependencies: [lib] } },
        { warmThreads: 1 },
      );
      expect(await granted.run("w", "hi")).toBe("HI!");
      expect(await granted.run("w", "again")).toBe("AGAIN!");
      await granted.close();
    } finally {
      removeDir(mod);
      removeDir(lib);
    }
  });

  it("a warm spare carries only its own worker's grants, never another worker's", async () => {
    const mod = makeTempDir("mountbox-mod-");
    const lib = makeTempDir("mountbox-lib-");
    try {
      writeFileSync(join(lib, "secret.txt"), "b's helper data");
      writeWorker(
        mod,
        "a.js",
        `import { readFileSync } from "node:fs";
export default defineWorker(async (p) => { try { return String(readFileSync(p)); } catch (e) { return e.code; } });
`,
      );
      writeWorker(
        mod,
        "b.js",
        `export default defineWorker(async () => "b");
`,
      );
      const host = await hostWith(
        { a: { module: join(mod, "a.js") }, b: { module: join(mod, "b.js"), dependencies: [lib] } },
        { warmThreads: 1 },
      );
      // Let the spares start, then run a few times so spares are used.
      for (let i = 0; i < 3; i++)
        expect(await host.run("a", join(lib, "secret.txt"))).toBe("ERR_ACCESS_DENIED");
      await host.close();
    } finally {
      removeDir(mod);
      removeDir(lib);
    }
  });

  it("a warm spare imports its module ahead only after its lockdown, and a failed import fails each agent", async () => {
    const mod = makeTempDir("mountbox-mod-");
    try {
      // Top-level code sees the thread as its agent will: locked down already.
      writeWorker(
        mod,
        "top.js",
        `let seen;
try { process.kill(process.pid, 0); seen = "signals open"; } catch (e) { seen = e.message; }
const env = Object.keys(process.env).length;
export default defineWorker(async (input) => ({ input, seen, env }));
`,
      );
      writeWorker(
        mod,
        "throws.js",
        `throw new Error("broken at import");
export default defineWorker(async () => 1);
`,
      );
      writeWorker(
        mod,
        "rejects.js",
        `await Promise.reject(new Error("rejected at import"));
export default defineWorker(async () => 1);
`,
      );
      const host = await hostWith(
        {
          top: { module: join(mod, "top.js") },
          throws: { module: join(mod, "throws.js") },
          rejects: { module: join(mod, "rejects.js") },
        },
        { warmThreads: 1 },
      );
      // Spares ready (their imports failed or done), then each is used.
      await new Promise((r) => setTimeout(r, 500));
      for (let i = 0; i < 2; i++) {
        expect(await host.run("top", i)).toEqual({
          input: i,
          seen: expect.stringContaining("process.kill is not available in an agent thread"),
          env: 0,
        });
        expect((await failure(host.run("throws", i))).message).toContain("Error: broken at import");
        expect((await failure(host.run("rejects", i))).message).toContain(
          "Error: rejected at import",
        );
      }
      await host.close();
    } finally {
      removeDir(mod);
    }
  });

  it("a spare's module that replaces Date.now at import does not switch off its log budget", async () => {
    const mod = makeTempDir("mountbox-mod-");
    try {
      // Each call of the replaced clock is a second later: a budget reading
      // it would refill on every line and pass all 20 000 to the host port.
      writeWorker(
        mod,
        "flood.js",
        `let n = 0;
Date.now = () => n++ * 1000;
export default defineWorker(async (_input, ctx) => {
  for (let k = 0; k < 20000; k++) ctx.log("x" + k);
  return "done";
});
`,
      );
      let logs = 0;
      const host = await hostWith(
        { flood: { module: join(mod, "flood.js") } },
        {
          warmThreads: 1,
          onEvent: (e) => {
            if (e.type === "log") logs++;
          },
        },
      );
      await new Promise((r) => setTimeout(r, 500));
      expect(await host.run("flood", null)).toBe("done");
      await host.close();
      // The thread-side budget (1000 lines a second, then one count) held.
      expect(logs).toBeGreaterThan(0);
      expect(logs).toBeLessThan(2000);
    } finally {
      removeDir(mod);
    }
  });

  it("refuses a dependency that contains a sandbox folder, allows one inside it", async () => {
    await expect(hostWith({ w: { module: fx("echo.js"), dependencies: [base] } })).rejects.toThrow(
      /contains the sandbox folder/,
    );
    const host = await hostWith({
      w: { module: fx("echo.js"), dependencies: [join(root, "src")] },
    });
    await host.close();
  });

  it("refuses unknown options and worker keys, naming the closest known one", async () => {
    const e = await failure(
      createHost({
        workers: { w: { module: fx("echo.js"), timeoutMS: 5 } as never },
        maxAgent: 2,
        onAproval: () => "once",
      } as never),
    );
    expect(e.message).toMatchInlineSnapshot(`
      "Invalid configuration:
      ✖ unknown option 'maxAgent' (did you mean 'maxAgents'?) → at maxAgent
      ✖ unknown option 'onAproval' (did you mean 'onApproval'?) → at onAproval
      ✖ unknown option 'timeoutMS' (did you mean 'timeoutMs'?) → at workers.w.timeoutMS"
    `);
  });
});

describe("failures name no host path", () => {
  it("a callee's module that fails to load: its caller sees the file's name, not its folder", async () => {
    const host = await hostWith({
      boss: { module: fx("delegator.js"), delegates: ["broken"] },
      broken: { module: fx("imports-missing.js") },
    });
    try {
      const out = (await host.run("boss", { to: "broken", input: null })) as { message: string };
      expect(out.message).toContain("does-not-exist.js");
      expect(out.message).toContain("imports-missing.js");
      expect(out.message).not.toContain(fileURLToPath(new URL("./fixtures", import.meta.url)));
      expect(out.message).not.toContain("file://");
      // The host's own caller gets the same text.
      const e = await failure(host.run("broken"));
      expect(e.message).toContain("does-not-exist.js");
      expect(e.message).not.toContain("fixtures/host/");
    } finally {
      await host.close();
    }
  });
  it("a callee's thread that crashes on an error of Node's: its caller sees no folder", async () => {
    const host = await hostWith({
      boss: { module: fx("delegator.js"), delegates: ["f"] },
      f: { module: fx("fault.js") },
    });
    try {
      const out = (await host.run("boss", { to: "f", input: { kind: "crash-node" } })) as {
        message: string;
        reason: string;
      };
      expect(out.reason).toBe("crashed");
      expect(out.message).toContain("ENOTDIR");
      expect(out.message).toContain("fault.js");
      expect(out.message).not.toContain(fileURLToPath(new URL("./fixtures", import.meta.url)));
    } finally {
      await host.close();
    }
  });
});

describe("faults", () => {
  it("terminates only the failing thread; the host goes on after each fault", async () => {
    const host = await hostWith({
      f: { module: fx("fault.js") },
      small: { module: fx("fault.js"), maxOldGenerationSizeMb: 16 },
    });
    const cases: [string, string, string][] = [
      ["f", "throw", "threw"],
      ["f", "loop", "timeout"],
      ["small", "oom", "out_of_memory"],
      ["f", "exit", "exited"],
      ["f", "oversize", "oversize"],
    ];
    for (const [worker, kind, reason] of cases) {
      // Only the loop needs a deadline: on a loaded machine a short one could
      // also end the other runs while their thread is still starting.
      const e = await failure(
        host.run(worker, { kind }, kind === "loop" ? { timeoutMs: 400 } : {}),
      );
      expect(e, kind).toBeInstanceOf(BuiltAgentThreadError);
      expect(e.reason, kind).toBe(reason);
      expect(await host.run("f", { kind: "ok" })).toBe("ok");
    }
    await host.close();
  }, 60_000);

  it("the deadline wins whatever a caller catches: 20 runs, every one a timeout", async () => {
    const host = await hostWith({
      boss: { module: fx("delegator.js"), delegates: ["f"] },
      f: { module: fx("fault.js") },
    });
    const reasons: (string | undefined)[] = [];
    for (let round = 0; round < 2; round++) {
      const runs = Array.from({ length: 10 }, () =>
        host.run("boss", { to: "f", input: { kind: "loop" } }, { timeoutMs: 500 }).then(
          (v) => `resolved ${JSON.stringify(v)}`,
          (e: { reason?: string }) => e.reason,
        ),
      );
      reasons.push(...(await Promise.all(runs)));
    }
    expect(reasons).toEqual(Array(20).fill("timeout"));
    await host.close();
  }, 30_000);

  it("one deadline covers the whole subtree, and a signal aborts it", async () => {
    // The abort comes once the callee runs (thread starts take their time
    // on a loaded machine); the deadline may pass before or after it has
    // started — every callee that started fails with its caller.
    const controller = new AbortController();
    const host = await hostWith(
      {
        boss: { module: fx("delegator.js"), delegates: ["f"] },
        f: { module: fx("fault.js") },
      },
      {
        onEvent: (e) => {
          if (e.type === "agent_started" && e.worker === "f" && phase === "abort")
            setTimeout(() => controller.abort(), 100);
        },
      },
    );
    let phase: "timeout" | "abort" = "timeout";
    const events: HostEvent[] = [];
    const iter = (async () => {
      for await (const e of host.events) events.push(e);
    })();
    const timed = (await host
      .run("boss", { to: "f", input: { kind: "loop" } }, { timeoutMs: 500 })
      .catch((e) => e)) as Error & {
      reason?: string;
    };
    expect(timed.reason).toBe("timeout");
    phase = "abort";
    const aborted = (await host
      .run("boss", { to: "f", input: { kind: "sleep", ms: 60_000 } }, { signal: controller.signal })
      .catch((e) => e)) as Error & { reason?: string };
    expect(aborted.reason).toBe("aborted");
    await host.close();
    await iter;
    const of = (type: string) =>
      events.filter((e) => e.type === type).map((e) => (e as { worker: string }).worker);
    const startedF = of("agent_started").filter((w) => w === "f").length;
    expect(startedF).toBeGreaterThanOrEqual(1);
    expect(of("agent_failed").sort()).toEqual(["boss", "boss", ...Array(startedF).fill("f")]);
  });
});

describe("limits, events and close", () => {
  it("runs 32 agents at once without interference and refuses the 33rd", async () => {
    const host = await hostWith({ f: { module: fx("fault.js") } }, { maxAgents: 32 });
    const writes = Array.from({ length: 32 }, (_, i) =>
      host.run("f", { kind: "write", path: `/out/${i}.txt`, text: `agent ${i}` }),
    );
    expect(await Promise.all(writes)).toEqual(Array.from({ length: 32 }, (_, i) => `agent ${i}`));
    const sleepers = Array.from({ length: 32 }, () => host.run("f", { kind: "sleep", ms: 1500 }));
    const extra = await failure(host.run("f", { kind: "ok" }));
    expect(extra).toBeInstanceOf(BuiltRefused);
    expect(extra.message).toMatchInlineSnapshot(
      `"Cannot start 'f': 32 agents are already running (maxAgents). Wait for one to finish, or raise maxAgents (createHost option; maxAgents is 32, maxThreads is 36)."`,
    );
    expect(await Promise.all(sleepers)).toHaveLength(32);
    await host.close();
  }, 60_000);

  it("reports agent and operation events with virtual paths only", async () => {
    const seen: HostEvent[] = [];
    const host = await hostWith(
      { f: { module: fx("fault.js") } },
      { onEvent: (e) => seen.push(e) },
    );
    expect(await host.run("f", { kind: "deny" })).toBe("denied twice");
    await host.close();
    expect(seen.map((e) => e.type)).toEqual([
      "agent_started",
      "operation",
      "denial",
      "operation",
      "denial",
      "agent_finished",
    ]);
    expect(
      seen
        .filter((e) => e.type === "denial")
        .map((e) => [(e as { code: string }).code, (e as { path?: string }).path]),
    ).toEqual([
      ["path_not_in_sandbox", "/../outside.txt"],
      ["path_not_writable", "/ro/x.txt"],
    ]);
    expect(JSON.stringify(seen)).not.toContain(base);
  });

  it("a worker's control characters never reach the embedder raw: errors and events escaped", async () => {
    const seen: HostEvent[] = [];
    const host = await hostWith(
      { f: { module: fx("fault.js") } },
      { onEvent: (e) => seen.push(e) },
    );
    const e = await failure(
      host.run("f", { kind: "throw", message: "\u001b[2J\n[host] forged\u0007" }),
    );
    expect(e.message).not.toMatch(/[\u0000-\u001f\u007f]/);
    expect(e.message).toContain("\\u001b[2J\\n[host] forged\\u0007");
    const failed = seen.find((x) => x.type === "agent_failed") as { message: string };
    expect(failed.message).toBe(e.message);
    await host.close();
  });

  it("a result the host cannot deserialize fails the agent at once, not at its deadline", async () => {
    const host = await hostWith({ f: { module: fx("fault.js") } });
    // Deep enough that the host cannot deserialize it (its stack is smaller
    // than the thread's) on every Node; the thread may refuse to send it first.
    const e = await failure(host.run("f", { kind: "deep", depth: 8000 }, { timeoutMs: 20_000 }));
    expect(e.reason).toBe("threw");
    expect(e.message).toMatch(/could not be (received|sent)/);
    await host.close();
  });

  it("passes ctx.log lines and the thread's stdout/stderr on as log events", async () => {
    const seen: HostEvent[] = [];
    const host = await hostWith(
      { b: { module: fileURLToPath(new URL("./fixtures/basic-worker.js", import.meta.url)) } },
      { onEvent: (e) => seen.push(e) },
    );
    await host.run("b", { path: "/src/a.ts" });
    await host.close();
    const logs = seen
      .filter((e) => e.type === "log")
      .map((e) => {
        const { level, stream, message, worker } = e as Extract<HostEvent, { type: "log" }>;
        return { level, stream, message, worker };
      })
      .sort((a, b) => a.message.localeCompare(b.message));
    expect(logs).toEqual([
      { level: "info", stream: undefined, message: "hello from ctx.log", worker: "b" },
      { level: "warn", stream: "stderr", message: "stderr line from the thread", worker: "b" },
      { level: "info", stream: "stdout", message: "stdout line from the thread", worker: "b" },
    ]);
  });

  it("close() leaves no handles behind", async () => {
    const before = process.getActiveResourcesInfo().filter((r) => r !== "Timeout").length;
    const host = await hostWith({ f: { module: fx("fault.js") } }, { warmThreads: 2 });
    const pending = host.run("f", { kind: "sleep", ms: 60_000 }).catch(() => "stopped");
    await new Promise((r) => setTimeout(r, 200));
    await host.close();
    expect(await pending).toBe("stopped");
    await new Promise((r) => setTimeout(r, 50));
    const after = process.getActiveResourcesInfo().filter((r) => r !== "Timeout").length;
    expect(after).toBeLessThanOrEqual(before);
  });

  it("validates its options at the edge", async () => {
    await expect(
      createHost({ workers: { a: { module: "missing.js" } }, basePath: base }),
    ).rejects.toThrow(
      `no module at '${join(base, "missing.js")}' ('missing.js' resolved against basePath '${base}')`,
    );
    await expect(hostWith({ a: { module: fx("echo.js"), delegates: ["ghost"] } })).rejects.toThrow(
      /no worker named 'ghost'/,
    );
    await expect(hostWith({ a: { module: fx("echo.js") } }, { maxDepth: 0 })).rejects.toThrow(
      /maxDepth/,
    );
  });
});
