/**
 * The thread entry: boots one worker module inside an agent thread.
 *
 * Receives the sandbox port, the module URL and the input via `workerData`
 * (or, for a warm spare, in its first message), then runs the module with
 * `run-worker.ts`, posting on `parentPort`. The host terminates the thread
 * afterwards.
 */
// First, while Node's module hooks are still there: ES modules that a
// CommonJS app's package.json calls CommonJS load as ES modules.
import "./esm-hook.js";
// Then: nothing of the process around the thread is reachable once user code runs.
import "./lockdown.js";
import { type MessagePort, parentPort, workerData } from "node:worker_threads";
import type { ThreadBootData, ThreadMessage } from "../src/port/protocol.js";
import { runWorker } from "./run-worker.js";

const parent = parentPort;
if (!parent) throw new Error("mountbox/workers/entry must run in a worker thread");
const controller = new AbortController();
// Taken before the worker's module runs (a spare imports it ahead, below):
// its code may replace Date.now, and the log budget must keep counting.
const now = Date.now.bind(Date);

const warm = workerData as { warm?: unknown; preload?: unknown } | undefined;
// A warm spare was started before its agent existed: its boot data (module,
// input, sandbox port) arrives in the first "boot" message.
const booted = warm?.warm
  ? new Promise<ThreadBootData>((resolve) => {
      const onBoot = (m: { kind?: unknown; boot?: ThreadBootData }) => {
        if (m?.kind !== "boot" || !m.boot) return;
        parent.off("message", onBoot);
        resolve(m.boot);
      };
      parent.on("message", onBoot);
    })
  : undefined;
// A spare imports its worker's module ahead (the lockdown above is complete:
// static imports run first), so its agent skips the import. Its grants are
// exactly that worker's. A failed import is the import's own error, reported
// when the agent's runWorker imports the same URL again.
if (booted && typeof warm?.preload === "string") await preloadModule(warm.preload);
const boot: ThreadBootData = booted ? await booted : (workerData as ThreadBootData);

parent.on("message", (m: { kind?: unknown; reason?: unknown }) => {
  if (m?.kind === "abort") controller.abort(String(m.reason ?? "aborted"));
});

await runWorker(
  {
    post: (msg: ThreadMessage) => parent.postMessage(msg),
    sandboxPort: boot.port as MessagePort,
    signal: controller.signal,
    now,
    deniedAdvice:
      "an agent thread may read only its module, mountbox/worker and the worker's declared 'dependencies'; it may not write files, start processes or workers — use ctx.sandbox for files",
  },
  boot,
);

/** Imports a spare's module ahead; its failure is left for the agent's own import to report. */
async function preloadModule(url: string): Promise<void> {
  try {
    await import(url);
  } catch (err) {
    // Node 20's loader also rejects a promise of its own with the error,
    // unhandled: an idle spare must not die of it (and be restarted, over
    // and over). runWorker reports the error to the agent.
    process.on("unhandledRejection", (reason) => {
      if (reason !== err) throw reason;
    });
  }
}
