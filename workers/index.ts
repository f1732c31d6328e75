/**
 * `mountbox/worker`: what a worker module imports inside its agent thread.
 *
 * ```js
 * import { defineWorker } from "mountbox/worker";
 * export default defineWorker(async (input, ctx) => {
 *   return ctx.sandbox.readFile("/src/a.ts");
 * });
 * ```
 *
 * This module (and everything it imports) runs inside the thread, so it stays
 * small and imports no host code: no zod, no sandbox, no fs.
 */
import type { Attachment, LogLevel, RunCommandReply } from "../src/port/protocol.js";
import type { GitToolName } from "../src/tools/types.js";
import type { WorkerSandbox } from "./sandbox-client.js";
import type { UntypedWorkers, WorkerArgs, WorkerName, WorkerOutput } from "./worker-types.js";

export {
  AgentThreadError,
  ApprovalDeniedError,
  ConfigError,
  DelegationRefusedError,
  EditFailedError,
  FileExistsError,
  FileNotFoundError,
  FileTooLargeError,
  InvalidPathError,
  InvalidRequestError,
  IoError,
  PathNotInSandboxError,
  PathNotWritableError,
  SandboxError,
  type SandboxErrorCode,
  SandboxPermissionEscalationError,
  SecretWithheldError,
  SuffixNotAllowedError,
} from "../src/errors/index.js";
export type { Attachment, LogLevel, RunCommandReply } from "../src/port/protocol.js";
export type { GitToolName } from "../src/tools/types.js";
export type {
  FileEdit,
  FileStat,
  GrepMatch,
  GrepOptions,
  GrepResult,
  SandboxDescription,
  WorkerSandbox,
} from "./sandbox-client.js";
export type {
  UntypedWorkers,
  WorkerArgs,
  WorkerInput,
  WorkerName,
  WorkerOutput,
} from "./worker-types.js";

/**
 * What a worker function receives besides its input. `Delegates` maps the
 * workers it may call to their types (each one's module type, see
 * `worker-types.ts`), which types `delegate` by name; without it any name
 * is accepted and results are `unknown`.
 */
export interface WorkerContext<Delegates extends object = UntypedWorkers> {
  /** The agent's sandbox, served by the host over a message port. */
  readonly sandbox: WorkerSandbox;
  /** Aborted when the host cancels this agent (timeout, caller's signal). */
  readonly signal: AbortSignal;
  /** Sends a log line to the host (never to the process's stdout). */
  log(message: unknown, level?: LogLevel): void;
  /** Files the caller attached to this agent (empty for a top-level run). */
  readonly attachments: readonly Attachment[];
  /**
   * Runs another worker (one listed in this worker's `delegates`) in its own
   * thread, with a sandbox derived from this one, and resolves with its
   * result. Rejects with `DelegationRefusedError`,
   * `SandboxPermissionEscalationError` or `AgentThreadError`. With a typed
   * `Delegates` map, an unknown name or a wrong input is a type error and
   * the result has the callee's result type.
   */
  delegate<N extends WorkerName<Delegates>>(
    worker: N,
    ...args: WorkerArgs<Delegates[N], DelegateOptions>
  ): Promise<WorkerOutput<Delegates[N]>>;
  /**
   * Runs `bash -c command` under the host's OS enforcement (bubblewrap) over
   * this agent's sandbox, its files under the working folder at their
   * virtual paths; network only if the worker has `network: true`. Only for
   * workers with `shell: true` (others get `DelegationRefusedError`).
   */
  runCommand(command: string, opts?: { timeoutMs?: number }): Promise<RunCommandReply>;
  /**
   * Runs a git tool (`git_status`, `git_diff`, `git_log`, `git_commit`)
   * with its arguments (those of the tool of the same name) and resolves
   * with its text; the host runs git under OS enforcement over this
   * agent's sandbox. Only for workers with `git: true` (others get
   * `DelegationRefusedError`); a refusal (the repository not wholly
   * readable, `.git` protected, …) rejects with a mountbox error. Also a
   * `git` option for the tool layer: `createSandboxTools(ctx.sandbox, { git: ctx.git })`.
   */
  git(tool: GitToolName, args?: Record<string, unknown>): Promise<string>;
}

/** Options of {@link WorkerContext.delegate}. */
export interface DelegateOptions {
  /** Narrows the callee's sandbox further (same keys as a worker's `sandbox`). */
  sandbox?: {
    restrict?: string;
    readonly?: boolean;
    allowRead?: string | string[];
    allowWrite?: string | string[];
    inherit?: boolean;
    /** Secret name patterns withheld from the callee in addition to this agent's. */
    secrets?: string[];
  };
  /** Virtual paths in this agent's sandbox to hand to the callee as bytes. */
  attachments?: string[];
  /** Deadline for the callee, in ms (never beyond this agent's own). */
  timeoutMs?: number;
}

/** The function a worker module defines; `D` types its `ctx.delegate` (see {@link WorkerContext}). */
export type WorkerFunction<I = unknown, O = unknown, D extends object = UntypedWorkers> = (
  input: I,
  ctx: WorkerContext<D>,
) => O | Promise<O>;

/** Marks a worker module's default export (a registry symbol, so copies agree). */
export const WORKER_BRAND: unique symbol = Symbol.for("mountbox.worker") as never;

/**
 * A worker definition, as returned by {@link defineWorker}. Its type is what
 * a host's worker map names (a module's type holds it as `default`): input
 * `I`, result `O`.
 */
export interface DefinedWorker<I = unknown, O = unknown, D extends object = UntypedWorkers> {
  readonly [WORKER_BRAND]: true;
  readonly run: WorkerFunction<I, O, D>;
}

/**
 * Defines the worker a module exports as its default. The function runs once,
 * in a fresh thread, with the agent's input and a {@link WorkerContext}; what
 * it returns (structured-cloneable) is the agent's result.
 *
 * Types: `defineWorker<In, Out>(…)`, or annotate the function's parameters
 * (`async (input: In, ctx: WorkerContext<Delegates>) => …`) and the types are
 * inferred. A host whose worker map names this module's type then checks
 * `host.run(name, input)` (see `worker-types.ts`).
 */
export function defineWorker<I = unknown, O = unknown, D extends object = UntypedWorkers>(
  fn: WorkerFunction<I, O, D>,
): DefinedWorker<I, O, D> {
  if (typeof fn !== "function") throw new TypeError("defineWorker expects a function");
  return Object.freeze({ [WORKER_BRAND]: true as const, run: fn });
}
