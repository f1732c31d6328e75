/**
 * Runs one worker module for one agent, wherever it runs: in an agent
 * thread (`entry.ts`) or in an agent process (`process-entry.ts`). Builds
 * `ctx` over the sandbox port, imports the module, runs its default export
 * once and posts the result (or the error) to the host. The host ends the
 * thread or process afterwards.
 */
import { hideHostPaths, isNodeErrorCode, SandboxError } from "../src/errors/index.js";
import type { PortLike } from "../src/port/frames.js";
import {
  DELEGATE_OP,
  GIT_OP,
  type LogLevel,
  MCP_CALL_OP,
  RUN_COMMAND_OP,
  type RunCommandReply,
  type ThreadBootData,
  type ThreadMessage,
} from "../src/port/protocol.js";
import type { GitToolName } from "../src/tools/types.js";
import {
  type DelegateOptions,
  WORKER_BRAND,
  type WorkerContext,
  type WorkerFunction,
} from "./index.js";
import { createLogBudget } from "./log-budget.js";
import {
  MCP_CALL,
  type McpCallFunction,
  MODEL_CALL,
  type ModelCallFunction,
} from "./model-client.js";
import { describeModuleLoadedAsCommonJs, findModuleLoadedAsCommonJs } from "./module-format.js";
import { createSandboxClient } from "./sandbox-client.js";

/** Longest log line sent to the host; the rest is cut. */
const MAX_LOG_CHARS = 8 * 1024;
/** Longest error message sent to the host. */
const MAX_ERROR_CHARS = 4 * 1024;

/** The host as the worker's runner sees it. */
export interface WorkerHost {
  /** Sends a log line, the result or the error. */
  post(msg: ThreadMessage): void;
  /** The port the sandbox (and delegation, models, commands) is served on. */
  sandboxPort: PortLike;
  /** Aborted when the host says so (the agent's `ctx.signal`). */
  signal: AbortSignal;
  /**
   * The clock of the log budget, taken before any worker code ran (a spare
   * imports its module ahead, and that code may replace `Date.now`).
   */
  now: () => number;
  /**
   * What an access Node refused (ERR_ACCESS_DENIED) means where the worker
   * runs: the permission model of a thread. Absent: none is expected.
   */
  deniedAdvice?: string;
  /**
   * True where a package the worker did not declare is not there at all
   * (an agent process sees only what it declared): a missing package is
   * then reported as undeclared.
   */
  seesOnlyDeclared?: boolean;
}

/** Runs the module of `boot` with its input; posts one result or one error. */
export async function runWorker(host: WorkerHost, boot: ThreadBootData): Promise<void> {
  const client = createSandboxClient(host.sandboxPort);
  // The entry took the clock before any worker code ran.
  const logs = createLogBudget(host.post, host.now);

  // The built-in LLM worker reaches its (host-held) model through this; for
  // any other worker the host refuses model operations.
  const callModel: ModelCallFunction = (op, options) => client.call(op, [options]);
  const callMcp: McpCallFunction = (server, tool, args) =>
    client.call(MCP_CALL_OP, [server, tool, args]) as Promise<string>;

  const ctx: WorkerContext = Object.freeze({
    [MODEL_CALL]: callModel,
    [MCP_CALL]: callMcp,
    sandbox: client.sandbox,
    signal: host.signal,
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
    git(tool: GitToolName, args?: Record<string, unknown>) {
      return client.call(GIT_OP, args === undefined ? [tool] : [tool, args]) as Promise<string>;
    },
    log(message: unknown, level: LogLevel = "info") {
      const text = typeof message === "string" ? message : safeStringify(message);
      logs.send({ kind: "log", level, message: text.slice(0, MAX_LOG_CHARS) });
    },
  });

  const describe = (err: unknown, prefix?: string) =>
    describeError(err, boot.moduleUrl, host, prefix);
  try {
    const mod = (await import(boot.moduleUrl)) as { default?: unknown };
    const fn = pickWorker(mod.default);
    const value = await fn(boot.input, ctx);
    logs.flush();
    try {
      host.post({ kind: "result", value });
    } catch (err) {
      // DataCloneError: the result holds a function, a class instance's
      // private state, … Report it rather than dying silently.
      host.post({ kind: "error", error: describe(err, "The worker's result could not be sent") });
    }
  } catch (err) {
    // Node 20 also rejects a promise of its loader's own with the error of a
    // failed import, and nothing handles that one: the error is reported
    // here, once, not a second time as a crash.
    process.on("unhandledRejection", (reason) => {
      if (reason !== err) throw reason;
    });
    logs.flush();
    host.post({ kind: "error", error: describe(err) });
  } finally {
    client.close();
  }
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
  moduleUrl: string,
  host: Pick<WorkerHost, "deniedAdvice" | "seesOnlyDeclared">,
  prefix?: string,
): { name: string; message: string; code?: string; path?: string } {
  if (err instanceof SandboxError) return err.toJSON();
  const loadedAsCommonJs = findModuleLoadedAsCommonJs(err, moduleUrl);
  if (loadedAsCommonJs !== undefined)
    return { name: "Error", message: describeModuleLoadedAsCommonJs(loadedAsCommonJs) };
  const name = err instanceof Error ? err.name : "Error";
  let raw = err instanceof Error ? err.message : String(err);
  const code = (err as { code?: unknown })?.code;
  const missing = /^Cannot find package '([^']+)'/.exec(raw)?.[1];
  if (code === "ERR_ACCESS_DENIED" && host.deniedAdvice !== undefined) {
    // Node's own text says nothing useful (and its `resource` is a host
    // path): name what could not be read, and say what the thread may do.
    raw = `${describeDenied((err as { resource?: unknown }).resource)} (ERR_ACCESS_DENIED: ${host.deniedAdvice})`;
  } else if (code === "ERR_MODULE_NOT_FOUND" && host.seesOnlyDeclared && missing !== undefined) {
    raw = `Cannot import '${missing}': it is not among the worker's declared 'dependencies' (add "${missing}" to them; an agent process sees only its module, mountbox/worker and what the worker declares)`;
  } else if (isNodeErrorCode((err as { code?: unknown } | null)?.code)) raw = hideHostPaths(raw);
  const message = (prefix ? `${prefix}: ${raw}` : raw).slice(0, MAX_ERROR_CHARS);
  return { name, message };
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
