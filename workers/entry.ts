/**
 * The thread entry: boots one worker module inside an agent thread.
 *
 * Receives the sandbox port, the module URL and the input via `workerData`,
 * imports the module, runs its default export once and posts the result (or
 * the error) on `parentPort`. The host terminates the thread afterwards.
 */
// First, while Node's module hooks are still there: ES modules that a
// CommonJS app's package.json calls CommonJS load as ES modules.
import "./esm-hook.js";
// Then: nothing of the process around the thread is reachable once user code runs.
import "./lockdown.js";
import { type MessagePort, parentPort, workerData } from "node:worker_threads";
import { hideHostPaths, isNodeErrorCode, SandboxError } from "../src/errors/index.js";
import {
  DELEGATE_OP,
  type LogLevel,
  RUN_COMMAND_OP,
  type RunCommandReply,
  type ThreadBootData,
  type ThreadMessage,
} from "../src/port/protocol.js";
import {
  type DelegateOptions,
  WORKER_BRAND,
  type WorkerContext,
  type WorkerFunction,
} from "./index.js";
import { createLogBudget } from "./log-budget.js";
import { MODEL_CALL, type ModelCallFunction } from "./model-client.js";
import { describeModuleLoadedAsCommonJs, findModuleLoadedAsCommonJs } from "./module-format.js";
import { createSandboxClient } from "./sandbox-client.js";

/** Longest log line sent to the host; the rest is cut. */
const MAX_LOG_CHARS = 8 * 1024;
/** Longest error message sent to the host. */
const MAX_ERROR_CHARS = 4 * 1024;

const parent = parentPort;
if (!parent) throw new Error("mountbox/workers/entry must run in a worker thread");
const controller = new AbortController();

// A warm spare was started before its agent existed: its boot data (module,
// input, sandbox port) arrives in the first "boot" message.
const boot: ThreadBootData = (workerData as { warm?: unknown })?.warm
  ? await new Promise<ThreadBootData>((resolve) => {
      const onBoot = (m: { kind?: unknown; boot?: ThreadBootData }) => {
        if (m?.kind !== "boot" || !m.boot) return;
        parent.off("message", onBoot);
        resolve(m.boot);
      };
      parent.on("message", onBoot);
    })
  : (workerData as ThreadBootData);
const client = createSandboxClient(boot.port as MessagePort);

parent.on("message", (m: { kind?: unknown; reason?: unknown }) => {
  if (m?.kind === "abort") controller.abort(String(m.reason ?? "aborted"));
});

const post = (msg: ThreadMessage): void => parent.postMessage(msg);
// Bound at boot: worker code may replace Date.now later.
const logs = createLogBudget(post, Date.now.bind(Date));

// The built-in LLM worker reaches its (host-held) model through this; for
// any other worker the host refuses model operations.
const callModel: ModelCallFunction = (op, options) => client.call(op, [options]);

const ctx: WorkerContext = Object.freeze({
  [MODEL_CALL]: callModel,
  sandbox: client.sandbox,
  signal: controller.signal,
  attachments: Object.freeze([...(boot.attachments ?? [])]),
  delegate(worker: string, input?: unknown, opts?: DelegateOptions) {
    return client.call(DELEGATE_OP, opts === undefined ? [worker, input] : [worker, input, opts]);
  },
  runCommand(command: string, opts?: { timeoutMs?: number }) {
    return client.call(
      RUN_COMMAND_OP,
      opts === undefined ? [command] : [command, opts],
    ) as Promise<RunCommandReply>;
  },
  log(message: unknown, level: LogLevel = "info") {
    const text = typeof message === "string" ? message : safeStringify(message);
    logs.send({ kind: "log", level, message: text.slice(0, MAX_LOG_CHARS) });
  },
});

try {
  const mod = (await import(boot.moduleUrl)) as { default?: unknown };
  const fn = pickWorker(mod.default);
  const value = await fn(boot.input, ctx);
  logs.flush();
  try {
    post({ kind: "result", value });
  } catch (err) {
    // DataCloneError: the result holds a function, a class instance's
    // private state, … Report it rather than dying silently.
    post({ kind: "error", error: describeError(err, "The worker's result could not be sent") });
  }
} catch (err) {
  // Node 20 also rejects a promise of its loader's own with the error of a
  // failed import, and nothing handles that one: the error is reported
  // here, once, not a second time as a crash of the thread.
  process.on("unhandledRejection", (reason) => {
    if (reason !== err) throw reason;
  });
  logs.flush();
  post({ kind: "error", error: describeError(err) });
} finally {
  client.close();
}

function pickWorker(def: unknown): WorkerFunction {
  if (typeof def === "object" && def !== null && WORKER_BRAND in def) {
    const run = (def as unknown as { run: unknown }).run;
    if (typeof run === "function") return run as WorkerFunction;
  }
  if (typeof def === "function") return def as WorkerFunction;
  throw new TypeError(
    "The worker module must `export default defineWorker(async (input, ctx) => …)`.",
  );
}

function describeError(
  err: unknown,
  prefix?: string,
): { name: string; message: string; code?: string; path?: string } {
  if (err instanceof SandboxError) return err.toJSON();
  const loadedAsCommonJs = findModuleLoadedAsCommonJs(err, boot.moduleUrl);
  if (loadedAsCommonJs !== undefined)
    return { name: "Error", message: describeModuleLoadedAsCommonJs(loadedAsCommonJs) };
  const name = err instanceof Error ? err.name : "Error";
  let raw = err instanceof Error ? err.message : String(err);
  if ((err as { code?: unknown })?.code === "ERR_ACCESS_DENIED") {
    // Node's own text says nothing useful (and its `resource` is a host
    // path): name what could not be read, and say what the thread may do.
    raw = `${describeDenied((err as { resource?: unknown }).resource)} (ERR_ACCESS_DENIED: an agent thread may read only its module, mountbox/worker and the worker's declared 'dependencies'; it may not write files, start processes or workers — use ctx.sandbox for files)`;
  } else if (isNodeError(err)) raw = hideHostPaths(raw);
  const message = (prefix ? `${prefix}: ${raw}` : raw).slice(0, MAX_ERROR_CHARS);
  return { name, message };
}

/** An error Node made (module loading, …): its `code` is Node's, and its text may hold host paths. */
function isNodeError(err: unknown): boolean {
  return isNodeErrorCode((err as { code?: unknown } | null)?.code);
}

/**
 * "Cannot import 'zod'" for a file inside a package folder, else the file's
 * name — never the host path Node reports.
 */
function describeDenied(resource: unknown): string {
  if (typeof resource !== "string") return "Access denied";
  const at = resource.lastIndexOf("/node_modules/");
  if (at >= 0) {
    const parts = resource.slice(at + "/node_modules/".length).split("/");
    const name = parts[0]?.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0];
    return `Cannot import '${name}': it is not among the worker's declared 'dependencies' (add "${name}" to them)`;
  }
  return `Cannot read '${resource.slice(resource.lastIndexOf("/") + 1)}' from the agent thread`;
}

function safeStringify(v: unknown): string {
  try {
    return JSON.stringify(v) ?? String(v);
  } catch {
    return String(v);
  }
}
