/**
 * Issue 10, findings 1–3 and 5: from inside a real agent thread, nothing acts
 * on the process around it. Signals and aborts are tried in a child-process
 * host (if the lockdown failed they would end it, never the test runner).
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { runAgentThread } from "../dist/src/threads/agent-thread.js";
import { assertBuilt, createSandboxForThreads, fixture } from "./conformance/thread.js";

beforeAll(assertBuilt);

let dir: string;
beforeEach(async () => {
  dir = await realpath(await mkdtemp(join(tmpdir(), "mountbox-lockdown-")));
  await mkdir(join(dir, "root"));
  await writeFile(join(dir, "root", "a.txt"), "A");
});
afterEach(() => rm(dir, { recursive: true, force: true }));

const distUrl = (p: string) =>
  pathToFileURL(fileURLToPath(new URL(`../dist/src/${p}`, import.meta.url))).href;

const run = async (input: unknown) => {
  const sandbox = createSandboxForThreads({ root: join(dir, "root") });
  const r = await runAgentThread({
    module: fixture("lockdown-worker.js"),
    input,
    sandbox: sandbox as never,
    timeoutMs: 30_000,
  });
  return r.value as Record<string, { ok: boolean; value?: unknown; message?: string }>;
};

const refused = (r: { ok: boolean; message?: string } | undefined, what: RegExp | string) => {
  expect(r?.ok, JSON.stringify(r)).toBe(false);
  expect(r?.message).toMatch(what);
};

/** Runs `body` (an ES module) in a fresh Node process; returns its stdout lines and status. */
function runChild(body: string, signalAfterStart?: NodeJS.Signals) {
  const child = spawnSync(process.execPath, ["--input-type=module", "-e", body], {
    encoding: "utf8",
    timeout: 60_000,
    env: { ...process.env, MOUNTBOX_SIGNAL: signalAfterStart ?? "" },
  });
  return { stdout: child.stdout, stderr: child.stderr, status: child.status, signal: child.signal };
}

describe("thread lockdown", () => {
  it("signals, _kill and abort are refused; the host process survives (child process)", () => {
    const script = `
      import { runAgentThread } from ${JSON.stringify(distUrl("threads/agent-thread.js"))};
      import { createSandbox } from ${JSON.stringify(distUrl("index.js"))};
      import inspector from "node:inspector";
      const r = await runAgentThread({ module: ${JSON.stringify(fixture("lockdown-worker.js"))},
        input: { mode: "signals", signals: ["SIGUSR1", "SIGTERM", "SIGINT", "SIGKILL", "SIGHUP", 0] },
        sandbox: createSandbox({ root: ${JSON.stringify(join(dir, "root"))} }) });
      await new Promise((r) => setTimeout(r, 300));
      console.log(JSON.stringify({ value: r.value, inspector: inspector.url() ?? null }));
      console.log("HOST ALIVE");`;
    const child = runChild(script);
    expect(child.signal, child.stderr).toBeNull();
    expect(child.status, child.stderr).toBe(0);
    const lines = child.stdout.trim().split("\n");
    expect(lines.at(-1)).toBe("HOST ALIVE");
    const out = JSON.parse(lines.at(-2)!) as {
      value: Record<string, { ok: boolean; message?: string }>;
      inspector: string | null;
    };
    expect(out.inspector).toBeNull();
    expect(Object.keys(out.value)).toHaveLength(15);
    for (const [k, r] of Object.entries(out.value))
      refused(
        r,
        k === "abort" ? /process\.abort is not available/ : /process\.(_)?kill is not available/,
      );
  });

  it("V8 flags cannot be changed: no log file appears, even after the next thread starts", async () => {
    const logfile = join(dir, "v8.log");
    const snapshot = join(dir, "heap.heapsnapshot");
    const r = await run({ mode: "v8-flags", logfile, snapshot });
    refused(r.cjs, /v8\.setFlagsFromString is not available/);
    refused(r.esm, /v8\.setFlagsFromString is not available/);
    refused(r.builtin, /v8\.setFlagsFromString is not available/);
    refused(r.binding, /process\.binding is not available/);
    refused(r.snapshot, /v8\.writeHeapSnapshot is not available/);
    // The flag would take effect in the next isolate: start one.
    await run({ mode: "probe" });
    expect(existsSync(logfile)).toBe(false);
    expect(existsSync(snapshot)).toBe(false);
  });

  it("node:sqlite cannot open or create a database file on any face (Node ≥ 22.5)", async () => {
    const db = join(dir, "dropped.db");
    const r = await run({ mode: "sqlite", db });
    const hasSqlite = process.getBuiltinModule?.("node:sqlite") !== undefined;
    if (!hasSqlite) expect(r).toEqual({ absent: true });
    else
      for (const face of ["cjs", "esm", "esmDefault", "builtin", "backup"])
        refused(r[face], /sqlite\.\w+ is not available in an agent thread/);
    expect(existsSync(db)).toBe(false);
  });

  it("host environment, paths and process-wide switches are out of reach", async () => {
    const r = await run({ mode: "probe" });
    refused(r.report, /process\.report is not available/);
    refused(r.writeReport, /process\.report is not available/);
    expect(r.reportDirectory).toEqual({ ok: true, value: "" });
    expect(r.cwd).toEqual({ ok: true, value: "/" });
    refused(r.chdir, /process\.chdir is not available/);
    expect(r.env).toEqual({ ok: true, value: [] });
    // argv0 and title are fixed by Node (non-configurable): the README lists them.
    const [execPath, , argv, execArgv] = r.execPath!.value as unknown[];
    expect([execPath, argv, execArgv]).toEqual(["node", ["node"], []]);
    expect(JSON.stringify(r)).not.toContain(dir);
    for (const key of ["binding", "linkedBinding", "dlopen"]) refused(r[key], /not available/);
    for (const key of ["rawDebug", "loadEnvFile", "sourceMaps", "captureCallback"])
      refused(r[key], /not available in an agent thread/);
    for (const key of ["heapSnapshot", "nearHeapLimit", "takeCoverage", "startupSnapshot"])
      refused(r[key], /^v8\.\w+ is not available/);
    for (const key of ["inspectorOpen", "inspectorSession", "inspectorPromises"])
      refused(r[key], /^inspector\.\w+ is not available/);
    expect(r.inspectorUrl).toEqual({ ok: true, value: "undefined" });
    refused(r.setEnvironmentData, /setEnvironmentData is not available/);
    if (r.postMessageToThread?.value !== "undefined")
      refused(r.postMessageToThread, /postMessageToThread is not available/);
    for (const key of ["broadcastGlobal", "broadcastEsm", "broadcastCjs"])
      refused(r[key], /BroadcastChannel is not available/);
    refused(r.register, /module\.register is not available/);
    refused(r.wasi, /WASI is not available/);
    refused(r.setPriority, /os\.setPriority is not available/);
    refused(r.userInfo, /os\.userInfo is not available/);
    expect(r.homedir).toEqual({ ok: true, value: "/" });
    expect(r.builtinV8).toEqual({ ok: true, value: true });
  });

  it("a hostile module cannot undo the lockdown", async () => {
    const r = await run({ mode: "probe" });
    const undo = r.undo as unknown as Record<string, { ok: boolean; message?: string }>;
    refused(undo.assign, /read only|read-only/);
    refused(undo.define, /redefine/);
    refused(undo.delete, /delete/);
    refused(undo.report, /redefine/);
    refused(undo.v8, /read only|read-only/);
    refused(undo.env, /not extensible|read only|read-only/);
  });
});
