/**
 * What the owner of a port server chooses: the budgets a worker gets and the
 * hooks that serve what only the host can do (delegation, model calls, shell
 * commands, approvals, events).
 */
import type { SandboxError } from "../errors/index.js";
import type { Sandbox } from "../sandbox/sandbox.js";
import type { GitToolName } from "../tools/types.js";
import type { FairScheduler } from "./fair-scheduler.js";
import type { RunCommandReply, RunCommandRequest } from "./protocol.js";

/** Default cap on one message's payload (strings count 2 bytes per code unit). */
export const DEFAULT_MAX_MESSAGE_BYTES = 64 * 1024 * 1024;
/** Default cap on requests one worker may have in flight at once. */
export const DEFAULT_MAX_IN_FLIGHT = 256;
/**
 * Default budget of bytes one worker may have in flight: requests received
 * and not yet answered, plus big replies not yet acknowledged.
 */
export const DEFAULT_MAX_BYTES_IN_FLIGHT = 128 * 1024 * 1024;
/** Why the server gave up on a worker (the owner should terminate it). */
export interface PortViolation {
  kind: "oversize";
  /** Lower bound of the message's size, in bytes. */
  bytes: number;
  limit: number;
}

/** Options of {@link serveSandbox}. */
export interface PortServerOptions {
  /** Payload cap per message; a bigger message is a violation. Default 64 MiB. */
  maxMessageBytes?: number;
  /** Requests in flight per worker; more are refused with an error. Default 256. */
  maxInFlight?: number;
  /**
   * Bytes in flight per worker: requests not yet answered plus replies of
   * 64 KiB or more not yet acknowledged by the thread. A request that would
   * exceed it is refused; no operation starts while it is exceeded. Default
   * 128 MiB; at least `maxMessageBytes` is used.
   */
  maxBytesInFlight?: number;
  /**
   * The scheduler that shares the host among agents: give every port server
   * of one host the same one ({@link createFairScheduler}). Default: one
   * scheduler shared by the whole process.
   */
  scheduler?: FairScheduler;
  /**
   * Called once for an oversized message, which is then dropped. A thread's
   * `resourceLimits` do not cover ArrayBuffers, so the owner should terminate
   * the sender. The server stops serving after a violation.
   */
  onViolation?: (violation: PortViolation) => void;
  /**
   * Called with any non-mountbox error an operation threw (a bug, or an fs
   * error the I/O layer did not wrap). The worker only ever sees a generic
   * `IoError`, because such errors may carry host paths.
   */
  onInternalError?: (error: unknown, op: string) => void;
  /**
   * Runtime II hook: serves `ctx.delegate(worker, input, opts)`. Without it
   * the `delegate` operation is refused like any unknown operation.
   */
  onDelegate?: (worker: string, input: unknown, opts: Record<string, unknown>) => Promise<unknown>;
  /**
   * Serves an LLM agent's model calls (`model.generate`, `model.stream`) with
   * the call options checked by `checkModelCallOptions`. Without it both
   * operations are refused like any unknown operation: only LLM workers get it.
   */
  onModel?: (kind: "generate" | "stream", options: Record<string, unknown>) => Promise<unknown>;
  /**
   * Serves an LLM agent's MCP tool calls (`mcp.call`) with checked
   * arguments. Without it `mcp.call` is refused like any unknown operation.
   */
  onMcpCall?: (server: string, tool: string, args: Record<string, unknown>) => Promise<string>;
  /**
   * Serves `ctx.runCommand(command, opts)`. Without it `runCommand` is
   * refused like any unknown operation.
   */
  onRunCommand?: (command: string, opts: RunCommandRequest) => Promise<RunCommandReply>;
  /**
   * Serves `ctx.git(tool, args)` (a git tool's name and checked arguments)
   * with the tool's text. Without it `git` is refused like any unknown
   * operation.
   */
  onGit?: (tool: GitToolName, args: Record<string, unknown>) => Promise<string>;
  /**
   * Called once for each sandbox operation accepted (not `delegate`, model
   * calls or `runCommand`) with its outcome, for events and audit. `path` is
   * the worker's own (virtual) argument and `error.path` the error's, both
   * raw: escape them before showing them. `aborted` is true when it did not
   * complete because the server was closed: stopped at a safe point while
   * it ran, or never started (queued, or waiting on its approval). An
   * operation that completed after the close is reported as done.
   */
  onOperation?: (
    op: string,
    path: string | undefined,
    error: SandboxError | undefined,
    aborted: boolean,
  ) => void;
  /**
   * Called before each sandbox operation (not `delegate`, model calls or
   * `runCommand`) with its checked arguments: it may wait (an approver),
   * reject (the operation fails with that error, unrun), or return the
   * sandbox to serve it with (the agent's sandbox widened by grants). While
   * it waits the operation holds no running slot and no scheduler turn, so a
   * slow approver stalls only this worker's gated operations.
   */
  beforeOperation?: (
    op: string,
    args: readonly unknown[],
  ) => Sandbox | undefined | Promise<Sandbox | undefined>;
}

/** A running server; see {@link serveSandbox}. */
export interface PortServer {
  /** Requests currently being served. */
  readonly inFlight: number;
  /**
   * Stops serving and closes the port. Queued operations never start;
   * running ones stop at their next safe point (a move or tree operation is
   * rolled back) or finish; replies still pending are dropped. Every
   * accepted operation is reported (`onOperation`) by the time the promise
   * resolves, which is once every operation that had started has ended —
   * hook operations too, so their owner must stop them (see
   * `AgentThreadOptions.onStop`). Calling it again returns the same promise.
   */
  close(): Promise<void>;
}
