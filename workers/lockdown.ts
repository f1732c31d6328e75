/**
 * Thread lockdown: runs before any user code in an agent thread, and removes
 * what a thread could use to act on the whole process around it.
 *
 * A worker thread shares its process with the host: `process.kill` signals
 * the host (SIGUSR1 opens its inspector, SIGKILL ends it), `process.report`
 * and `process.cwd()` reveal the host's environment and folders, V8 flags are
 * process-wide (`--logfile` writes anywhere), `BroadcastChannel` and
 * `postMessageToThread` reach other threads by name or id. Each such property
 * is replaced by a stub, defined non-writable and non-configurable, so a
 * hostile module can neither restore nor redefine it; the originals are not
 * kept anywhere. Both faces of a builtin are covered: the CommonJS object
 * (`require`, `process.getBuiltinModule`, the ESM default export) is patched
 * in place, and `syncBuiltinESMExports()` refreshes the ESM named exports.
 *
 * Descriptors (the `fs` fd functions, `FileHandle`, sockets and handles
 * adopting a descriptor) are locked down in `lockdown-fds.ts`.
 *
 * This is a seat belt for code that is merely careless or curious;
 * docs/security.md lists what a thread can still do (network before Node 25,
 * CPU and memory up to its limits, …).
 */
import { createRequire, syncBuiltinESMExports } from "node:module";
import { lockDescriptors } from "./lockdown-fds.js";

const require = createRequire(import.meta.url);

/** A function that refuses, naming what was refused and why. */
function refuse(what: string, why: string): (...args: unknown[]) => never {
  return function refused(): never {
    throw new Error(`${what} is not available in an agent thread: ${why}`);
  };
}

/** A class that cannot be constructed (or called). */
function refuseClass(what: string, why: string): new () => never {
  const fail = refuse(what, why);
  return class Refused {
    constructor() {
      fail();
    }
    static {
      Object.freeze(Refused.prototype);
    }
  } as unknown as new () => never;
}

/** Defines `key` on `target` as a fixed value: not writable, not configurable. */
function pin(target: object, key: string, value: unknown): void {
  const old = Object.getOwnPropertyDescriptor(target, key);
  if (old && !old.configurable && !old.writable) {
    // Node fixed it already (`process.argv0`: the process's own argv[0]);
    // a function we must replace is never fixed, so fail loudly there.
    if (typeof old.value !== "function") return;
    throw new Error(`mountbox lockdown: cannot replace ${key}`);
  }
  Object.defineProperty(target, key, {
    value,
    writable: false,
    configurable: false,
    enumerable: old?.enumerable ?? false,
  });
}

/** Pins a refusing stub over `key`, if `target` has it (APIs differ by Node version). */
function pinRefusal(target: object, key: string, name: string, why: string): void {
  if (key in target) pin(target, key, refuse(name, why));
}

/** Loads a builtin's CommonJS object, or undefined where this Node lacks it or refuses it here. */
function loadBuiltin(id: string): Record<string, unknown> | undefined {
  try {
    return require(id) as Record<string, unknown>;
  } catch {
    return undefined;
  }
}

const SIGNALS = "signals and aborts would hit the host process";
const HOST_INFO = "it describes the host process, not the sandbox";
const PROCESS_WIDE = "it changes the whole host process";
const FILES = "it writes files outside the sandbox (use ctx.sandbox)";
const THREADS = "it reaches other threads of the host process";

function lockProcess(): void {
  const p = process as unknown as Record<string, unknown>;
  for (const key of ["kill", "_kill", "abort", "_debugProcess", "_debugEnd", "execve"])
    pinRefusal(p, key, `process.${key}`, SIGNALS);
  for (const key of ["binding", "_linkedBinding", "dlopen"])
    pinRefusal(p, key, `process.${key}`, "it reaches Node's internals");
  for (const key of [
    "chdir",
    "umask",
    "setuid",
    "setgid",
    "seteuid",
    "setegid",
    "setgroups",
    "initgroups",
    "setSourceMapsEnabled",
    "setUncaughtExceptionCaptureCallback",
    "loadEnvFile",
    "_startProfilerIdleNotifier",
    "_stopProfilerIdleNotifier",
  ])
    pinRefusal(p, key, `process.${key}`, PROCESS_WIDE);
  // Writes straight to the process's stderr, past the thread's captured stdio.
  pinRefusal(p, "_rawDebug", "process._rawDebug", "use console.error or ctx.log");

  const report = refuse("process.report", `${HOST_INFO} (environment, folders, command line)`);
  pin(
    p,
    "report",
    Object.freeze({
      getReport: report,
      writeReport: report,
      directory: "",
      filename: "",
      compact: false,
      reportOnFatalError: false,
      reportOnSignal: false,
      reportOnUncaughtException: false,
      excludeNetwork: true,
      signal: "SIGUSR2",
    }),
  );
  pin(p, "cwd", function cwd(): string {
    return "/";
  });
  pin(p, "env", Object.freeze(Object.create(null)));
  pin(p, "execPath", "node");
  pin(p, "argv0", "node");
  pin(p, "argv", Object.freeze(["node"]));
  pin(p, "execArgv", Object.freeze([]));
  pin(p, "title", "node");
  pin(p, "debugPort", 0);
  pin(p, "_preload_modules", Object.freeze([]));
}

function lockV8(): void {
  const v8 = loadBuiltin("node:v8");
  if (!v8) return;
  pinRefusal(v8, "setFlagsFromString", "v8.setFlagsFromString", PROCESS_WIDE);
  for (const key of ["writeHeapSnapshot", "getHeapSnapshot", "setHeapSnapshotNearHeapLimit"])
    pinRefusal(v8, key, `v8.${key}`, "heap snapshots hold host data and write files");
  for (const key of ["takeCoverage", "stopCoverage", "startCpuProfile"])
    pinRefusal(v8, key, `v8.${key}`, FILES);
  if ("startupSnapshot" in v8) {
    const no = refuse("v8.startupSnapshot", PROCESS_WIDE);
    pin(
      v8,
      "startupSnapshot",
      Object.freeze({
        isBuildingSnapshot: () => false,
        addSerializeCallback: no,
        addDeserializeCallback: no,
        setDeserializeMainFunction: no,
      }),
    );
  }
}

function lockInspector(id: string): void {
  const inspector = loadBuiltin(id);
  if (!inspector) return;
  const why = "the inspector runs code in any thread of the host process";
  for (const key of ["open", "close", "waitForDebugger"])
    pinRefusal(inspector, key, `inspector.${key}`, why);
  pin(inspector, "url", () => undefined);
  pin(inspector, "Session", refuseClass("inspector.Session", why));
}

function lockWorkerThreads(): void {
  const wt = loadBuiltin("node:worker_threads");
  if (!wt) return;
  pinRefusal(wt, "setEnvironmentData", "worker_threads.setEnvironmentData", THREADS);
  pinRefusal(wt, "postMessageToThread", "worker_threads.postMessageToThread", THREADS);
  pin(wt, "BroadcastChannel", refuseClass("BroadcastChannel", THREADS));
  if ("locks" in wt) pin(wt, "locks", undefined);
}

function lockModule(): void {
  const mod = loadBuiltin("node:module");
  if (!mod) return;
  const why = "loader hooks and compile caches act beyond this thread";
  for (const key of ["register", "registerHooks", "enableCompileCache", "flushCompileCache"])
    pinRefusal(mod, key, `module.${key}`, why);
}

function lockOs(): void {
  const os = loadBuiltin("node:os");
  if (!os) return;
  pinRefusal(os, "setPriority", "os.setPriority", PROCESS_WIDE);
  pinRefusal(os, "userInfo", "os.userInfo", HOST_INFO);
  pin(os, "homedir", function homedir(): string {
    return "/";
  });
}

function lockOthers(): void {
  // WASI preopens reach host folders; Node 20's permission model does not cover WASI.
  const wasi = loadBuiltin("node:wasi");
  if (wasi && "WASI" in wasi) pin(wasi, "WASI", refuseClass("WASI", FILES));
  // node:sqlite (Node ≥ 22.5) opens and creates database files by path, and
  // the permission model does not cover it: an agent could read any database
  // the host user can and create files anywhere it can write.
  const sqlite = loadBuiltin("node:sqlite");
  if (sqlite)
    for (const key of Object.keys(sqlite))
      if (typeof sqlite[key] === "function")
        pin(
          sqlite,
          key,
          /^[A-Z]/.test(key) ? refuseClass(`sqlite.${key}`, FILES) : refuse(`sqlite.${key}`, FILES),
        );
  // Tracing is process-wide and writes files; Node refuses it in threads, but be sure.
  const trace = loadBuiltin("node:trace_events");
  if (trace) pinRefusal(trace, "createTracing", "trace_events.createTracing", FILES);
  const g = globalThis as unknown as Record<string, unknown>;
  if ("BroadcastChannel" in g) pin(g, "BroadcastChannel", refuseClass("BroadcastChannel", THREADS));
  // Web Locks are shared by every thread of the process (Node ≥ 24).
  const nav = g.navigator as Record<string, unknown> | undefined;
  if (nav && "locks" in nav) {
    try {
      pin(nav, "locks", undefined);
    } catch {
      // A getter on the prototype: shadowing it with an own property is enough.
    }
  }
}

lockProcess();
lockV8();
// The promises face subclasses the callback face's Session when first loaded: load it first.
lockInspector("node:inspector/promises");
lockInspector("node:inspector");
lockWorkerThreads();
lockModule();
lockOs();
lockOthers();
lockDescriptors();
// The ESM named exports (`import { kill } from "node:process"`) are copies
// made when first imported; bring them in line with the patched objects.
syncBuiltinESMExports();
