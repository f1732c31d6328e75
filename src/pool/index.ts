/**
 * Heavy host-side operations for tools: grep and big listings, run in a
 * piscina pool of trusted host threads so one agent's search never holds the
 * event loop that serves the others — or in-process, with identical results.
 *
 * A pooled task receives the sandbox's policy serialized, rebuilds it (and
 * refuses unless it resolves exactly as the host's), and runs the very code
 * the in-process path runs: `listFiles`' walk and the verified open of every
 * file. Nothing returned holds a host path.
 */
import { ioError, SandboxError, wrapFsError } from "../errors/index.js";
import { serializePolicy } from "../sandbox/policy-wire.js";
import { policyOf, type Sandbox } from "../sandbox/sandbox.js";
import { type GrepOptions, type GrepResult, prepareGrep, runGrep } from "./grep.js";
import { HeavyPool, isPoolBuilt, PoolTimeoutError } from "./heavy-pool.js";
import type { GrepTask, ListFilesTask, TaskName } from "./tasks.js";

export type { GrepMatch, GrepOptions, GrepResult } from "./grep.js";
export { BINARY_PROBE_BYTES, MAX_LINE_CHARS } from "./grep.js";
export {
  HeavyPool,
  type HeavyPoolOptions,
  isPoolBuilt,
  type PoolRunOptions,
  PoolTimeoutError,
} from "./heavy-pool.js";

/** How a pooled call runs. */
export interface PooledCallOptions {
  /** Stops the call: a running task's thread is terminated. */
  signal?: AbortSignal | undefined;
  /** The pool to use. Default: the process-wide {@link sharedPool}. */
  pool?: HeavyPool | undefined;
  /**
   * Whose call it is: one task per owner runs at a time, owners take turns
   * (see {@link HeavyPool.run}). Default: `signal` (one agent's port server
   * passes its own), else the call is an owner of its own.
   */
  owner?: object | undefined;
  /** Longest wait for a free pool thread, in ms. Default 60 000. */
  queueTimeoutMs?: number | undefined;
}

/** How long past its own time budget a pooled grep may run before its thread is killed. */
const GREP_GRACE_MS = 2_000;
/** Default hard limit of a pooled listing. */
const LIST_TIMEOUT_MS = 60_000;
/** Longest a pooled call waits for a free thread before it fails. */
const QUEUE_TIMEOUT_MS = 60_000;

let shared: HeavyPool | undefined;

/**
 * The process-wide pool (2 threads, started on first use). It never keeps the
 * process alive; {@link closeSharedPool} ends it at once.
 */
export function sharedPool(): HeavyPool {
  shared ??= new HeavyPool();
  return shared;
}

/** Terminates the process-wide pool's threads (a later call starts a new one). */
export async function closeSharedPool(): Promise<void> {
  const p = shared;
  shared = undefined;
  await p?.close();
}

/**
 * Searches the files a sandbox may read for a regular expression, line by
 * line, in a pool thread. Results (virtual paths, 1-based lines, text cut at
 * 500 characters) are identical to {@link grepInProcess}. Binary files (a NUL
 * byte in the first 8 KiB) are skipped; every file is opened through the
 * sandbox's verified read path with its size cap. Budgets (`maxMatches`,
 * `maxBytes`, `timeBudgetMs`) end the search with `truncated: true` and a
 * `notice` for the model; a pattern that runs far past the time budget has
 * its thread terminated.
 * @throws SandboxError: InvalidRequestError for bad options, the sandbox's
 *   path errors (not readable, not found, …), IoError if stopped
 */
export async function grepSandbox(
  sandbox: Sandbox,
  opts: GrepOptions,
  call: PooledCallOptions = {},
): Promise<GrepResult> {
  const policy = policyOf(sandbox);
  const request = guard("grep", opts?.path, () => prepareGrep(policy, opts));
  const task: GrepTask = { policy: serializePolicy(policy), request };
  return runPooled<GrepResult>(
    "grep",
    task,
    request.path,
    request.timeBudgetMs + GREP_GRACE_MS,
    call,
  );
}

/**
 * {@link grepSandbox} on the calling thread (yielding to its event loop every
 * few ms): same checks, same results. For hosts that want no pool, and as the
 * reference the pool is tested against. A pattern with catastrophic
 * backtracking cannot be interrupted here; prefer the pool on a shared host.
 */
export async function grepInProcess(
  sandbox: Sandbox,
  opts: GrepOptions,
  call: { signal?: AbortSignal | undefined } = {},
): Promise<GrepResult> {
  const policy = policyOf(sandbox);
  const request = guard("grep", opts?.path, () => prepareGrep(policy, opts));
  try {
    return await runGrep(policy, request, call.signal);
  } catch (err) {
    throw wrapFsError(err, "grep", request.path);
  }
}

/**
 * {@link grepSandbox} when pool threads can run here (built code), else
 * {@link grepInProcess}: the two give identical results, so callers such as
 * the `grep` tool and the port's `grep` operation need not care which ran.
 * @throws as {@link grepSandbox}
 */
export function searchSandbox(
  sandbox: Sandbox,
  opts: GrepOptions,
  call: PooledCallOptions = {},
): Promise<GrepResult> {
  return call.pool !== undefined || isPoolBuilt()
    ? grepSandbox(sandbox, opts, call)
    : grepInProcess(sandbox, opts, call);
}

/**
 * `sandbox.listFiles(path, pattern)` run in a pool thread: the same walk, the
 * same result. `timeoutMs` (default 60 000) bounds it.
 * @throws SandboxError as `Sandbox.listFiles`; IoError if stopped or too slow
 */
export async function listFilesPooled(
  sandbox: Sandbox,
  path = "/",
  pattern = "**/*",
  call: PooledCallOptions & { timeoutMs?: number | undefined } = {},
): Promise<string[]> {
  const policy = policyOf(sandbox);
  const v = guard("listFiles", path, () => {
    if (typeof path !== "string" || typeof pattern !== "string")
      throw new TypeError("path and pattern must be strings");
    const n = policy.normalize(path);
    if (n === null) throw policy.climbError(path, "read");
    return n;
  });
  const task: ListFilesTask = { policy: serializePolicy(policy), path: v, pattern };
  return runPooled<string[]>("listFiles", task, v, call.timeoutMs ?? LIST_TIMEOUT_MS, call);
}

/**
 * Runs a task with a hard deadline counted from when it starts running (not
 * while it waits for a thread); rebuilds the error it ended with.
 */
async function runPooled<T>(
  name: TaskName,
  task: unknown,
  path: string,
  limitMs: number,
  call: PooledCallOptions,
): Promise<T> {
  const op = name === "grep" ? "grep" : "listFiles";
  // Outside the try: a pool that cannot start (no build) is the host's own
  // error, not the agent's.
  const pending = (call.pool ?? sharedPool()).run<T>(name, task, call.signal, {
    owner: call.owner ?? call.signal,
    timeoutMs: limitMs,
    queueTimeoutMs: call.queueTimeoutMs ?? QUEUE_TIMEOUT_MS,
  });
  let outcome: Awaited<typeof pending>;
  try {
    outcome = await pending;
  } catch (err) {
    if (call.signal?.aborted) throw ioError(op, path, "it was stopped before it finished");
    if (err instanceof PoolTimeoutError && err.phase === "preempted")
      throw ioError(
        op,
        path,
        `it ran for more than ${err.limitMs} ms while other agents waited for the host's search threads, and was stopped to let them run; narrow the path, the glob or the pattern, or try again`,
      );
    if (err instanceof PoolTimeoutError && err.phase === "queued")
      throw ioError(
        op,
        path,
        `it waited ${err.limitMs} ms for a free host thread (busy with other requests) and was not started; try again later`,
      );
    if (err instanceof PoolTimeoutError)
      throw ioError(
        op,
        path,
        `it did not finish within ${limitMs} ms of running and was stopped; narrow the path, the glob or the pattern`,
      );
    throw ioError(op, path, "the host thread running it failed");
  }
  if (!outcome.ok) throw SandboxError.fromJSON(outcome.error);
  return outcome.value as T;
}

/** Runs a synchronous edge check; anything thrown becomes a mountbox error. */
function guard<T>(op: string, path: unknown, run: () => T): T {
  try {
    return run();
  } catch (err) {
    throw wrapFsError(err, op, typeof path === "string" ? path : String(path));
  }
}
