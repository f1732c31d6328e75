/**
 * Runs one agent in one fresh, hardened worker thread.
 *
 * The thread gets nothing but a `MessagePort` to a port server for its
 * sandbox, its input, and the URL of its module. Its stdout and stderr are
 * captured here (never written through: the MCP server owns the process's
 * stdout). A thread that throws, times out, is aborted, sends an oversized
 * message, exhausts its heap or exits early is terminated and reported with
 * an {@link AgentThreadError}; the host goes on.
 */
import { realpathSync } from "node:fs";
import { fileURLToPath, pathToFileURL } from "node:url";
import {
  MessageChannel,
  type ResourceLimits,
  type Transferable,
  Worker,
} from "node:worker_threads";
import { type AgentFailure, AgentThreadError, SandboxError } from "../errors/index.js";

export { type AgentFailure, AgentThreadError };

import { type PortServerOptions, serveSandbox } from "../port/port-server.js";
import type { Attachment, LogLevel, ThreadBootData } from "../port/protocol.js";
import type { Sandbox } from "../sandbox/sandbox.js";
import { measureMessage } from "./message-size.js";
import {
  checkReadGrants,
  computeExecArgv,
  computeWorkerGrants,
  threadEntryUrl,
} from "./permissions.js";

/** Default heap limits of an agent thread. */
export const DEFAULT_RESOURCE_LIMITS: ResourceLimits = {
  maxOldGenerationSizeMb: 256,
  maxYoungGenerationSizeMb: 32,
  stackSizeMb: 4,
};
/** Default cap on captured stdout (and, separately, stderr) per thread. */
export const DEFAULT_MAX_OUTPUT_BYTES = 1024 * 1024;
/** Most log lines kept from one thread (later ones are counted, not kept). */
const MAX_LOG_LINES = 10_000;
/** Cap on any one message a thread posts on its parent port. */
const DEFAULT_MAX_RESULT_BYTES = 64 * 1024 * 1024;
/** Cap on one log message (longer lines are abuse, not logging). */
const MAX_LOG_MESSAGE_BYTES = 1024 * 1024;
/** Longest delay setTimeout honours (≈ 24.8 days). */
const MAX_TIMER_MS = 2_147_483_647;

/** One `ctx.log` line, or one line the thread wrote to its stdout or stderr. */
export interface AgentLogEntry {
  level: LogLevel;
  message: string;
  /** Where the line came from: `ctx.log` (absent), or the thread's stdout/stderr. */
  stream?: "stdout" | "stderr";
}

/**
 * The abort reason of an agent whose deadline passed. Callees inherit their
 * caller's signal, so the whole subtree fails with reason `timeout` at once,
 * whatever any agent in it catches.
 */
export class DeadlineExceeded extends Error {
  constructor(readonly timeoutMs: number) {
    super(`deadline of ${timeoutMs} ms exceeded`);
    this.name = "DeadlineExceeded";
  }
}

/** Options of {@link runAgentThread}. */
export interface AgentThreadOptions
  extends Pick<
    PortServerOptions,
    | "maxMessageBytes"
    | "maxInFlight"
    | "maxBytesInFlight"
    | "onDelegate"
    | "onModel"
    | "onRunCommand"
    | "onInternalError"
    | "onOperation"
    | "beforeOperation"
    | "scheduler"
  > {
  /** The worker module: a host path or `file:` URL of built JS. */
  module: string | URL;
  /** The agent's input (structured-cloned into the thread). */
  input?: unknown;
  /** The agent's sandbox; the host keeps it, the thread gets a port. */
  sandbox: Sandbox;
  /** Aborts the agent (the thread is told, then terminated). */
  signal?: AbortSignal;
  /** Deadline for the whole run, in ms. */
  timeoutMs?: number;
  /** Heap limits; defaults to {@link DEFAULT_RESOURCE_LIMITS}. */
  resourceLimits?: ResourceLimits;
  /**
   * What the module imports besides `mountbox/worker`: package names
   * (`zod`; found from the module's folder as Node does, with everything
   * they depend on) or host paths of helper files and folders. The thread
   * may read exactly these, the module, and its own code.
   */
  dependencies?: string[];
  /**
   * Give the thread the network. Enforced only where Node can take it away
   * (Node ≥ 25, `--allow-net`); before that a thread always has it.
   */
  network?: boolean;
  /** Cap on captured stdout and on captured stderr. Default 1 MiB each. */
  maxOutputBytes?: number;
  /**
   * Objects in `input` to transfer rather than copy (e.g. a `MessagePort` the
   * embedder wants to hand the agent). Host-side choice only.
   */
  transferList?: Transferable[];
  /**
   * Called once when the agent's thread has really exited (or could not be
   * started). A thread blocked in native code (a read on an inherited
   * descriptor) ignores `terminate()` and lives on after the agent failed:
   * the host counts it until this is called.
   */
  onThreadExit?: () => void;
  /** Called with each `ctx.log` line, and each stdout/stderr line, as it arrives. */
  onLog?: (entry: AgentLogEntry) => void;
  /** Files handed to the agent as `ctx.attachments`. */
  attachments?: Attachment[];
  /**
   * @internal A warm spare thread (started with `warm: true` workerData and
   * grants covering `module`) to use instead of starting a new one. It is
   * used for this agent only, then terminated.
   */
  spare?: Worker;
}

/** What a finished agent thread produced. */
export interface AgentThreadResult {
  /** The worker function's return value. */
  value: unknown;
  /** Captured stdout and stderr (`console.log` inside the thread lands here). */
  stdout: string;
  stderr: string;
  /** `ctx.log` lines. */
  logs: AgentLogEntry[];
}

/**
 * Starts a fresh hardened thread for one agent, runs its module's worker
 * function with `input`, and resolves with its result. The thread is
 * terminated afterwards, whatever happened.
 * @throws AgentThreadError when the agent fails (the host is unaffected)
 */
export async function runAgentThread(opts: AgentThreadOptions): Promise<AgentThreadResult> {
  let exitReported = false;
  const reportExit = (): void => {
    if (exitReported) return;
    exitReported = true;
    opts.onThreadExit?.();
  };
  try {
    return await startAgentThread(opts, reportExit);
  } catch (err) {
    // Failed before a thread existed (or its start threw): nothing to wait for.
    if (!startedThreads.has(reportExit)) reportExit();
    throw err;
  }
}

/** Which runs got as far as a thread (whose `exit` event reports it). */
const startedThreads = new WeakSet<() => void>();

async function startAgentThread(
  opts: AgentThreadOptions,
  reportExit: () => void,
): Promise<AgentThreadResult> {
  if (opts.signal?.aborted) throw abortFailure(opts.signal.reason, { stdout: "", stderr: "" });
  const modulePath = realpathSync(
    typeof opts.module === "string" && !opts.module.startsWith("file:")
      ? opts.module
      : fileURLToPath(opts.module),
  );
  // A spare was hardened when it started, with grants the host computed.
  const execArgv = opts.spare
    ? []
    : computeExecArgv({
        readPaths: checkReadGrants(
          computeWorkerGrants({ module: modulePath, dependencies: opts.dependencies ?? [] }),
          opts.sandbox,
        ),
        network: opts.network === true,
      });

  const { port1: hostPort, port2: threadPort } = new MessageChannel();
  const out = { stdout: "", stderr: "" };
  const logs: AgentLogEntry[] = [];
  const maxOutput = opts.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES;

  return new Promise<AgentThreadResult>((resolve, reject) => {
    let settled = false;
    let timer: NodeJS.Timeout | undefined;
    let worker: Worker;

    const finish = (err: AgentThreadError | null, value?: unknown): void => {
      if (settled) return;
      settled = true;
      if (timer) clearTimeout(timer);
      opts.signal?.removeEventListener("abort", onAbort);
      server.close();
      // Terminate in every case: a thread that returned may still have
      // timers or pending work, and a thread is never reused.
      void worker.terminate();
      if (err) reject(err);
      else resolve({ value, stdout: out.stdout, stderr: out.stderr, logs });
    };
    const fail = (reason: AgentFailure, message: string, cause?: unknown): void =>
      finish(new AgentThreadError(reason, message, out, cause));

    const server = serveSandbox(hostPort, opts.sandbox, {
      ...pick(opts),
      onViolation: (v) =>
        fail(
          "oversize",
          `The agent sent a message of ${v.bytes} bytes (limit ${v.limit}); it was stopped.`,
        ),
    });

    const boot: ThreadBootData = {
      moduleUrl: pathToFileURL(modulePath).href,
      input: opts.input,
      port: threadPort,
    };
    if (opts.attachments && opts.attachments.length > 0) boot.attachments = opts.attachments;
    try {
      if (opts.spare) {
        worker = opts.spare;
        worker.removeAllListeners();
        worker.postMessage({ kind: "boot", boot }, [threadPort, ...(opts.transferList ?? [])]);
      } else
        worker = new Worker(threadEntryUrl(), {
          workerData: boot,
          transferList: [threadPort, ...(opts.transferList ?? [])],
          execArgv,
          env: {},
          argv: [],
          stdout: true,
          stderr: true,
          stdin: false,
          resourceLimits: { ...DEFAULT_RESOURCE_LIMITS, ...opts.resourceLimits },
          // The thread must not inherit the host's own `--require`/`--import`
          // hooks through process.execArgv: execArgv above replaces them.
        });
    } catch (err) {
      server.close();
      threadPort.close();
      // A spare was taken out of its pool for this agent: it must not outlive it.
      void opts.spare?.terminate();
      reject(err);
      return;
    }
    startedThreads.add(reportExit);

    // Drain both streams (an undrained pipe stalls the thread), keep a
    // bounded prefix, and pass its lines on as log entries.
    for (const stream of ["stdout", "stderr"] as const) {
      const lines = new LineSplitter((message) =>
        opts.onLog?.({ level: stream === "stdout" ? "info" : "warn", message, stream }),
      );
      worker[stream].setEncoding("utf8");
      worker[stream].on("data", (chunk: string) => {
        if (out[stream].length >= maxOutput) return;
        const kept = chunk.slice(0, maxOutput - out[stream].length);
        out[stream] += kept;
        lines.push(kept);
      });
      worker[stream].on("end", () => lines.flush());
    }

    worker.on("message", (msg: unknown) => {
      const m = readThreadMessage(msg);
      if (m === "oversize")
        return fail(
          "oversize",
          "The agent sent an oversized message on its parent port; it was stopped.",
        );
      if (m === null) return; // not ours to act on; a hostile thread may post anything
      if (m.kind === "log") {
        if (logs.length < MAX_LOG_LINES) logs.push({ level: m.level, message: m.message });
        opts.onLog?.({ level: m.level, message: m.message });
      } else if (m.kind === "result") finish(null, m.value);
      else fail("threw", `The agent failed: ${m.error.name}: ${m.error.message}`, m.cause);
    });
    // A message the host cannot deserialize (e.g. a result nested thousands
    // of levels deep) must fail the agent, not leave it waiting for its deadline.
    worker.on("messageerror", () =>
      fail(
        "threw",
        "The agent sent a message that could not be received (too deeply nested, or not cloneable).",
      ),
    );
    worker.on("error", (err: Error & { code?: string }) => {
      if (err.code === "ERR_WORKER_OUT_OF_MEMORY")
        fail("out_of_memory", "The agent ran out of memory and was stopped.");
      else fail("crashed", `The agent's thread crashed: ${err.name}: ${err.message}`);
    });
    worker.on("exit", (code) => {
      reportExit();
      fail("exited", `The agent's thread exited (code ${code}) without a result.`);
    });

    const onAbort = (): void => {
      const err = abortFailure(opts.signal?.reason, out);
      worker.postMessage({ kind: "abort", reason: err.reason });
      finish(err);
    };
    opts.signal?.addEventListener("abort", onAbort, { once: true });
    if (opts.timeoutMs !== undefined)
      timer = setTimeout(
        () => {
          worker.postMessage({ kind: "abort", reason: "timeout" });
          fail("timeout", `The agent did not finish within ${opts.timeoutMs} ms and was stopped.`);
        },
        Math.min(opts.timeoutMs, MAX_TIMER_MS),
      ); // setTimeout fires at once past 2^31-1 ms
  });
}

/** The failure of an agent stopped through its signal: a deadline, or an abort. */
function abortFailure(reason: unknown, out: { stdout: string; stderr: string }): AgentThreadError {
  return reason instanceof DeadlineExceeded
    ? new AgentThreadError(
        "timeout",
        `The agent did not finish within ${reason.timeoutMs} ms and was stopped.`,
        out,
      )
    : new AgentThreadError("aborted", "The agent was aborted.", out, reason);
}

/** Longest line passed on from a thread's stdout or stderr. */
const MAX_LINE_CHARS = 8 * 1024;

/** Cuts a text stream into lines (each at most {@link MAX_LINE_CHARS}). */
class LineSplitter {
  #rest = "";
  constructor(private readonly onLine: (line: string) => void) {}
  push(chunk: string): void {
    const parts = (this.#rest + chunk).split("\n");
    this.#rest = (parts.pop() ?? "").slice(0, MAX_LINE_CHARS);
    for (const line of parts) this.onLine(line.slice(0, MAX_LINE_CHARS));
  }
  flush(): void {
    if (this.#rest !== "") this.onLine(this.#rest);
    this.#rest = "";
  }
}

function pick(opts: AgentThreadOptions): PortServerOptions {
  const o: PortServerOptions = {};
  if (opts.maxMessageBytes !== undefined) o.maxMessageBytes = opts.maxMessageBytes;
  if (opts.maxInFlight !== undefined) o.maxInFlight = opts.maxInFlight;
  if (opts.maxBytesInFlight !== undefined) o.maxBytesInFlight = opts.maxBytesInFlight;
  if (opts.onDelegate) o.onDelegate = opts.onDelegate;
  if (opts.onModel) o.onModel = opts.onModel;
  if (opts.onRunCommand) o.onRunCommand = opts.onRunCommand;
  if (opts.onInternalError) o.onInternalError = opts.onInternalError;
  if (opts.onOperation) o.onOperation = opts.onOperation;
  if (opts.beforeOperation) o.beforeOperation = opts.beforeOperation;
  if (opts.scheduler) o.scheduler = opts.scheduler;
  return o;
}

const LEVELS = new Set<string>(["debug", "info", "warn", "error"]);

type ReadMessage =
  | { kind: "result"; value: unknown }
  | { kind: "log"; level: LogLevel; message: string }
  | { kind: "error"; error: { name: string; message: string }; cause: unknown };

/**
 * Reads a message from the thread's parent port. The thread is untrusted:
 * only the three known shapes count, strings are cut, and an error keeps its
 * mountbox class (as `cause`) only through `SandboxError.fromJSON`.
 */
function readThreadMessage(msg: unknown): ReadMessage | "oversize" | null {
  // Every message is measured, whatever it claims to be: the thread's heap
  // limit does not cover ArrayBuffers, and dropping a message after it
  // arrived does not undo its cost.
  let hasPort = false;
  const size = measureMessage(msg, DEFAULT_MAX_RESULT_BYTES, 1_000_000, () => {
    hasPort = true;
  });
  if (size > DEFAULT_MAX_RESULT_BYTES) return "oversize";
  if (typeof msg !== "object" || msg === null) return null;
  const m = msg as Record<string, unknown>;
  if (m.kind === "log") {
    if (size > MAX_LOG_MESSAGE_BYTES) return "oversize";
    const level =
      typeof m.level === "string" && LEVELS.has(m.level) ? (m.level as LogLevel) : "info";
    const message = typeof m.message === "string" ? m.message.slice(0, 8192) : "";
    return { kind: "log", level, message };
  }
  if (m.kind === "result") {
    if (hasPort) {
      const message = "The agent's result holds a message port, which cannot be passed on.";
      return { kind: "error", error: { name: "Error", message }, cause: new Error(message) };
    }
    return { kind: "result", value: m.value };
  }
  if (m.kind === "error") {
    const e = (typeof m.error === "object" && m.error !== null ? m.error : {}) as Record<
      string,
      unknown
    >;
    const name = typeof e.name === "string" ? e.name.slice(0, 100) : "Error";
    const message = typeof e.message === "string" ? e.message.slice(0, 4096) : "unknown error";
    const cause =
      typeof e.code === "string" && e.code !== ""
        ? SandboxError.fromJSON({ ...e, message })
        : Object.assign(new Error(message), { name });
    return { kind: "error", error: { name, message }, cause };
  }
  return null;
}
