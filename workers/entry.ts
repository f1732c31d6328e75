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

parent.on("message", (m: { kind?: unknown; reason?: unknown }) => {
  if (m?.kind === "abort") controller.abort(String(m.reason ?? "aborted"));
});

await runWorker(
  {
    post: (msg: ThreadMessage) => parent.postMessage(msg),
    sandboxPort: boot.port as MessagePort,
    signal: controller.signal,
    deniedAdvice:
      "an agent thread may read only its module, mountbox/worker and the worker's declared 'dependencies'; it may not write files, start processes or workers — use ctx.sandbox for files",
  },
  boot,
);
