/**
 * Runs one agent in one fresh, hardened worker thread, and supervises it.
 *
 * The thread gets nothing but a `MessagePort` to a port server for its
 * sandbox, its input, and the URL of its module. Its stdout and stderr are
 * captured here (never written through: the MCP server owns the process's
 * stdout). A thread that throws, times out, is aborted, sends an oversized
 * message, exhausts its heap or exits early is terminated and reported with
 * an {@link AgentThreadError}; the host goes on. How it starts is in
 * `thread-start.ts`, what it posts is read in `thread-messages.ts`, the
 * supervision it shares with agent processes is in `supervisor.ts`.
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

import type { ThreadBootData } from "../port/protocol.js";
import { DeadlineExceeded, superviseAgent } from "./supervisor.js";
import type { AgentThreadOptions, AgentThreadResult } from "./thread-options.js";
import { captureOutput } from "./thread-output.js";
import { computeThreadExecArgv, resolveModulePath, startWorker } from "./thread-start.js";

export { DeadlineExceeded };

/**
 * Starts a fresh hardened thread for one agent, runs its module's worker
 * function with `input`, and resolves with its result. The thread is
 * terminated afterwards, whatever happened.
 * @throws AgentThreadError when the agent fails (the host is unaffected)
 */
export async function runAgentThread(opts: AgentThreadOptions): Promise<AgentThreadResult> {
  let exitReported = false;
  let started = false;
  const reportExit = (): void => {
    if (exitReported) return;
    exitReported = true;
    opts.onThreadExit?.();
  };
  try {
    const modulePath = resolveModulePath(opts.module);
    const execArgv = computeThreadExecArgv(opts, modulePath);
    const { port1: hostPort, port2: threadPort } = new MessageChannel();
    return await superviseAgent(opts, "parent port", (s) => {
      const boot: ThreadBootData = {
        moduleUrl: pathToFileURL(modulePath).href,
        input: opts.input,
        port: threadPort,
      };
      if (opts.attachments && opts.attachments.length > 0) boot.attachments = opts.attachments;
      let worker: Worker;
      try {
        worker = startWorker(opts, boot, threadPort, execArgv);
      } catch (err) {
        threadPort.close();
        // A spare was taken out of its pool for this agent: it must not outlive it.
        void opts.spare?.terminate();
        throw err;
      }
      started = true;
      captureOutput(worker, s.out, s.maxOutput, s.offerOutput);
      worker.on("message", s.onControl);
      // A message the host cannot deserialize (e.g. a result nested thousands
      // of levels deep) must fail the agent, not leave it waiting for its deadline.
      worker.on("messageerror", () =>
        s.fail(
          "threw",
          "The agent sent a message that could not be received (too deeply nested, or not cloneable).",
        ),
      );
      worker.on("error", (err: Error & { code?: string }) => {
        if (err.code === "ERR_WORKER_OUT_OF_MEMORY")
          s.fail("out_of_memory", "The agent ran out of memory and was stopped.");
        else {
          // The agent's own text, cut as its sent errors are (a 70-million-
          // character message aborted the host where it was escaped); Node's
          // own errors (ERR_*) name host paths.
          const name = String(err.name).slice(0, 100);
          const message = String(err.message).slice(0, 4096);
          s.fail(
            "crashed",
            `The agent's thread crashed: ${name}: ${isNodeErrorCode(err.code) ? hideHostPaths(message) : message}`,
          );
        }
      });
      worker.on("exit", (code) => {
        reportExit();
        s.fail("exited", `The agent's thread exited (code ${code}) without a result.`);
      });
      return {
        body: {
          tellAbort: (reason) => worker.postMessage({ kind: "abort", reason }),
          end: () => void worker.terminate(),
        },
        sandboxPort: hostPort,
      };
    });
  } finally {
    // Failed before a thread existed (or its start threw): nothing to wait for.
    if (!started) reportExit();
  }
}
