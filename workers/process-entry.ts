/**
 * The process entry: boots one worker module inside an agent process
 * (`isolation: "process"`), started by the host under kernel confinement.
 *
 * Its only link to the host is the socket at the descriptor named by its
 * first argument, carrying two framed ports (`src/port/frames.ts`): lane 0
 * for control (boot and abort in; log lines, the result or the error out),
 * lane 1 for the sandbox. A warm spare (second argument: the module's URL)
 * imports its module ahead, then waits for its boot message. There is no
 * lockdown here: the kernel is the boundary (bubblewrap, seccomp, a
 * private network and process namespace, only this socket and stdio).
 */
// ES modules that a CommonJS app's package.json calls CommonJS load as ES modules.
import "./esm-hook.js";
import { Socket } from "node:net";
import { openFramedPorts } from "../src/port/frames.js";
import { encode } from "../src/port/plain-codec.js";
import type { ThreadBootData, ThreadMessage } from "../src/port/protocol.js";
import { runWorker } from "./run-worker.js";

/** Longest frame taken from the host (it is trusted; this only bounds a mistake). */
const MAX_FRAME_BYTES = 1024 * 1024 * 1024;

const fd = Number(process.argv[2]);
const preload = process.argv[3];
if (!Number.isInteger(fd) || fd < 3) throw new Error("mountbox process entry: no channel");
const socket = new Socket({ fd, readable: true, writable: true });
// What it sends is plain data (the host reads nothing else from a process).
const [control, sandboxPort] = openFramedPorts(socket, {
  lanes: 2,
  maxFrameBytes: MAX_FRAME_BYTES,
  encode,
});
const controller = new AbortController();
// Taken before the worker's module runs (a spare imports it ahead, below):
// its code may replace Date.now, and the log budget must keep counting.
const now = Date.now.bind(Date);
// The host going away ends the agent: nothing is left running.
control!.on("close" as "message", () => process.exit(1));

const boot = new Promise<ThreadBootData>((resolve) => {
  control!.on("message", (m) => {
    const msg = m as { kind?: unknown; boot?: ThreadBootData; reason?: unknown };
    if (msg?.kind === "boot" && msg.boot) resolve(msg.boot);
    else if (msg?.kind === "abort") controller.abort(String(msg.reason ?? "aborted"));
  });
});
// A spare imports its module before it is needed; an error there is the
// import's own, reported when the agent runs it.
if (preload) await import(preload).catch(() => {});

await runWorker(
  {
    post: (msg: ThreadMessage) => control!.postMessage(msg),
    sandboxPort: sandboxPort!,
    signal: controller.signal,
    now,
    seesOnlyDeclared: true,
  },
  await boot,
);
// Everything posted is on its way: end the channel, and the process.
socket.end(() => process.exit(0));
