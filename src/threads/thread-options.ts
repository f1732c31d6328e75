/**
 * What a run of one agent thread is given ({@link AgentThreadOptions}) and
 * gives back, and which of its options go on to the thread's port server.
 */
import type { ResourceLimits, Transferable, Worker } from "node:worker_threads";
import type { PortServerOptions } from "../port/port-options.js";
import type { Attachment, LogLevel } from "../port/protocol.js";
import type { Sandbox } from "../sandbox/sandbox.js";

/** One `ctx.log` line, or one line the thread wrote to its stdout or stderr. */
export interface AgentLogEntry {
  level: LogLevel;
  message: string;
  /** Where the line came from: `ctx.log` (absent), or the thread's stdout/stderr. */
  stream?: "stdout" | "stderr";
  /**
   * On a summary line only: how many lines were dropped over the agent's
   * log budget (see `docs/security.md`, budgets).
   */
  dropped?: number;
}

/** Options of `runAgentThread`. */
export interface AgentThreadOptions
  extends Pick<
    PortServerOptions,
    | "maxMessageBytes"
    | "maxInFlight"
    | "maxBytesInFlight"
    | "onDelegate"
    | "onModel"
    | "onRunCommand"
    | "onGit"
    | "onMcpCall"
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
  /**
   * Called once when the run ends (result, failure, abort or deadline),
   * before it waits for the operations still in flight: the owner stops
   * what its hooks still run (a delegation, a command, a model call), so
   * that wait ends. The run settles only once they have ended and been
   * reported.
   */
  onStop?: () => void;
  /** Deadline for the whole run, in ms. */
  timeoutMs?: number;
  /** Heap limits; defaults to `DEFAULT_RESOURCE_LIMITS`. */
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

/** Picks the options the thread's port server is given. */
export function pickPortServerOptions(opts: AgentThreadOptions): PortServerOptions {
  const o: PortServerOptions = {};
  if (opts.maxMessageBytes !== undefined) o.maxMessageBytes = opts.maxMessageBytes;
  if (opts.maxInFlight !== undefined) o.maxInFlight = opts.maxInFlight;
  if (opts.maxBytesInFlight !== undefined) o.maxBytesInFlight = opts.maxBytesInFlight;
  if (opts.onDelegate) o.onDelegate = opts.onDelegate;
  if (opts.onModel) o.onModel = opts.onModel;
  if (opts.onRunCommand) o.onRunCommand = opts.onRunCommand;
  if (opts.onGit) o.onGit = opts.onGit;
  if (opts.onMcpCall) o.onMcpCall = opts.onMcpCall;
  if (opts.onInternalError) o.onInternalError = opts.onInternalError;
  if (opts.onOperation) o.onOperation = opts.onOperation;
  if (opts.beforeOperation) o.beforeOperation = opts.beforeOperation;
  if (opts.scheduler) o.scheduler = opts.scheduler;
  return o;
}
