/**
 * Runs one agent in one fresh, hardened worker thread, and supervises it.
 *
 * The thread gets nothing but a `MessagePort` to a port server for its
 * sandbox, its input, and the URL of its module. Its stdout and stderr are
 * captured here (never written through: the MCP server owns the process's
 * stdout). A thread that throws, times out, is aborted, sends an oversized
 * message, exhausts its heap or exits early is terminated and reported with
 * an {@link AgentThreadError}; the host goes on. How it starts is in
 * `thread-start.ts`, what it posts is read in `thread-messages.ts`.
 */
import { pathToFileURL } from "node:url";
import { MessageChannel, type Worker } from "node:worker_threads";
import {
  type AgentFailure,
  AgentThreadError,
  hideHostPaths,
  isNodeErrorCode,
} from "../errors/index.js";

export { type AgentFailure, AgentThreadError };

import { serveSandbox } from "../port/port-server.js";
import type { ThreadBootData } from "../port/protocol.js";
import { createFloodGuard, FLOOD_BYTES, FLOOD_MESSAGES, LogBudget } from "./log-budget.js";
import { readThreadMessage } from "./thread-messages.js";
import {
  type AgentLogEntry,
  type AgentThreadOptions,
  type AgentThreadResult,
  pickPortServerOptions,
} from "./thread-options.js";
import { captureOutput, DEFAULT_MAX_OUTPUT_BYTES, type ThreadOutput } from "./thread-output.js";
import { computeThreadExecArgv, resolveModulePath, startWorker } from "./thread-start.js";

/** Most log lines kept from one thread in its result (the events get them all). */
const MAX_LOG_LINES = 10_000;
/** Longest delay setTimeout honours (≈ 24.8 days). */
const MAX_TIMER_MS = 2_147_483_647;

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

/** Starts the agent's thread and supervises it until it settles (see {@link runAgentThread}). */
async function startAgentThread(
  opts: AgentThreadOptions,
  reportExit: () => void,
): Promise<AgentThreadResult> {
  if (opts.signal?.aborted) throw abortFailure(opts.signal.reason, { stdout: "", stderr: "" });
  const modulePath = resolveModulePath(opts.module);
  const execArgv = computeThreadExecArgv(opts, modulePath);

  const { port1: hostPort, port2: threadPort } = new MessageChannel();
  const out: ThreadOutput = { stdout: "", stderr: "" };
  const logs: AgentLogEntry[] = [];
  const maxOutput = opts.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES;
  let logChars = 0;
  // ctx.log lines and stdout/stderr lines share one budget; the result keeps
  // ctx.log lines (and summaries) up to MAX_LOG_LINES and as many characters
  // as the stdout cap.
  const budget = new LogBudget((entry) => {
    if (entry.stream === undefined && logs.length < MAX_LOG_LINES && logChars < maxOutput) {
      logChars += entry.message.length;
      logs.push(entry);
    }
    opts.onLog?.(entry);
  });
  const flood = createFloodGuard();

  return new Promise<AgentThreadResult>((resolve, reject) => {
    let settled = false;
    let timer: NodeJS.Timeout | undefined;
    let worker: Worker;

    const finish = (err: AgentThreadError | null, value?: unknown): void => {
      if (settled) return;
      settled = true;
      if (timer) clearTimeout(timer);
      opts.signal?.removeEventListener("abort", onAbort);
      const ended = server.close();
      budget.flush();
      // Terminate in every case: a thread that returned may still have
      // timers or pending work, and a thread is never reused.
      void worker.terminate();
      opts.onStop?.();
      // The run settles once every operation it started has ended and been
      // reported (issue 26): nothing of a stopped agent happens afterwards.
      void ended.then(() => {
        if (err) reject(err);
        else resolve({ value, stdout: out.stdout, stderr: out.stderr, logs });
      });
    };
    const fail = (reason: AgentFailure, message: string, cause?: unknown): void =>
      finish(new AgentThreadError(reason, message, out, cause));

    const server = serveSandbox(hostPort, opts.sandbox, {
      ...pickPortServerOptions(opts),
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
      worker = startWorker(opts, boot, threadPort, execArgv);
    } catch (err) {
      void server.close();
      threadPort.close();
      // A spare was taken out of its pool for this agent: it must not outlive it.
      void opts.spare?.terminate();
      reject(err);
      return;
    }
    startedThreads.add(reportExit);

    captureOutput(worker, out, maxOutput, (entry) => budget.offer(entry));

    worker.on("message", (msg: unknown) => {
      // After the end (or a flood) every further message costs as little as can be.
      if (settled) return;
      let flooding = false;
      const m = readThreadMessage(msg, (bytes) => {
        flooding = !flood.count(bytes);
      });
      if (flooding)
        return fail(
          "oversize",
          `The agent posted more than ${FLOOD_MESSAGES} messages or ${FLOOD_BYTES} bytes on its parent port within a second; it was stopped (ctx.log drops lines past its budget instead).`,
        );
      if (m === "oversize")
        return fail(
          "oversize",
          "The agent sent an oversized message on its parent port; it was stopped.",
        );
      if (m === null) return; // not ours to act on; a hostile thread may post anything
      if (m.kind === "log") {
        const { level, message, dropped } = m;
        budget.offer(dropped === undefined ? { level, message } : { level, message, dropped });
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
      // Node's own errors (ERR_*) name host paths; the agent's own text is kept.
      else
        fail(
          "crashed",
          `The agent's thread crashed: ${err.name}: ${isNodeErrorCode(err.code) ? hideHostPaths(err.message) : err.message}`,
        );
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
function abortFailure(reason: unknown, out: ThreadOutput): AgentThreadError {
  return reason instanceof DeadlineExceeded
    ? new AgentThreadError(
        "timeout",
        `The agent did not finish within ${reason.timeoutMs} ms and was stopped.`,
        out,
      )
    : new AgentThreadError("aborted", "The agent was aborted.", out, reason);
}
