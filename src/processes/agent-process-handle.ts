/**
 * One started agent process, from the host's side: its two framed ports
 * (control and sandbox), its output, how it ended, and a way to kill it
 * with everything it started. A warm spare is one of these started ahead;
 * the agent that takes it attaches its handlers then.
 */
import type { ChildProcess } from "node:child_process";
import { StringDecoder } from "node:string_decoder";
import type { AgentFailure } from "../errors/index.js";
import { type FramedPort, type FrameViolation, openFramedPorts } from "../port/frames.js";
import { CodecError, decode } from "../port/plain-codec.js";
import { DEFAULT_MAX_MESSAGE_BYTES } from "../port/port-options.js";
import type { PlannedLaunch } from "./process-code.js";
import { launchAgentProcess } from "./process-launch.js";

/** Room for framing beyond the largest message the port server takes. */
const FRAME_SLACK = 1024 * 1024;
/** Node's message when V8 gives up on the heap (it then aborts: exit status 128 + SIGABRT). */
const HEAP_EXHAUSTED = /JavaScript heap out of memory|Reached heap limit/;
const ABORTED = 134;
/**
 * The share of the host's time a process may spend having its messages
 * decoded: a budget of milliseconds that refills at this many per second
 * (a quarter of the host's time), and holds at most {@link DECODE_BURST_MS}.
 * Measured, not estimated: the cost of a value differs tenfold between
 * kinds (found by an adversarial review). One message is bounded by the
 * codec's own limits (≈ 0.5 s at worst).
 */
export const DECODE_MS_PER_SECOND = 250;
const DECODE_BURST_MS = 1000;
/** How long a frame may take to arrive once its header has (a half frame holds memory). */
const MAX_FRAME_MS = 10_000;

/** How a process ended, as a failure reason (a process ends only after its result when all is well). */
export interface ProcessEnd {
  reason: Extract<AgentFailure, "exited" | "crashed" | "out_of_memory">;
  exitCode: number;
  /** True if it never sent a frame (its runtime may not have started). */
  silent: boolean;
}

/** What an agent attaches to its process. */
export interface ProcessHandlers {
  onOutput(stream: "stdout" | "stderr", text: string): void;
  onControl(msg: unknown): void;
  /** A frame too long, or for no lane: the process is being killed. */
  onViolation(violation: FrameViolation): void;
  /** A control frame could not be deserialized. */
  onControlError(): void;
}

/** One agent process, started. */
export interface AgentProcess {
  readonly control: FramedPort;
  readonly sandbox: FramedPort;
  /** Settles once the process and everything it started are gone. */
  readonly exited: Promise<ProcessEnd>;
  /** Routes its output and control messages (until then they are dropped). */
  attach(handlers: ProcessHandlers): void;
  /** Kills it and everything it started. */
  kill(): void;
  /** Lets the host exit while it waits (an idle spare), or not (the default). */
  setRef(on: boolean): void;
  /** True once it is being killed (a spare so marked is never handed out). */
  readonly dead: boolean;
}

/**
 * Starts the planned process. Its channel carries frames of at most
 * `maxMessageBytes` (at least the 64 MiB a result may have, as a thread's)
 * and a little framing from the process.
 * @throws Error if the process could not be spawned
 */
export function startAgentProcess(
  plan: PlannedLaunch,
  maxMessageBytes = DEFAULT_MAX_MESSAGE_BYTES,
): AgentProcess {
  const stop = new AbortController();
  let handlers: ProcessHandlers | undefined;
  let ports: FramedPort[] | undefined;
  let violated = false;
  let stderrTail = "";
  let child: ChildProcess | undefined;
  let heard = false;
  let budgetMs = DECODE_BURST_MS;
  let last = performance.now();
  // Plain data only, read by the host's own bounded decoder (a process
  // writes raw bytes: in V8's format a few of them can stand for gigabytes
  // of heap), within its share of the host's time.
  const decodeFrame = (body: Uint8Array): unknown => {
    heard = true;
    const start = performance.now();
    budgetMs = Math.min(DECODE_BURST_MS, budgetMs + ((start - last) / 1000) * DECODE_MS_PER_SECOND);
    if (budgetMs < 0)
      throw new CodecError("it spent more than its share of the host's time on its messages");
    const { value } = decode(body);
    last = performance.now();
    budgetMs -= last - start;
    return value;
  };
  const decoders = { stdout: new StringDecoder("utf8"), stderr: new StringDecoder("utf8") };
  const done = launchAgentProcess({
    ...plan,
    channel: {
      attach: (socket) => {
        ports = openFramedPorts(socket, {
          lanes: 2,
          maxFrameBytes: Math.max(maxMessageBytes, DEFAULT_MAX_MESSAGE_BYTES) + FRAME_SLACK,
          pauseWhenBacklogged: true,
          decode: decodeFrame,
          // A spare says nothing before it is given an agent.
          guard: { accepts: () => handlers !== undefined, maxFrameMs: MAX_FRAME_MS },
          onViolation: (v) => {
            violated = true;
            stop.abort();
            handlers?.onViolation(v);
          },
        });
      },
    },
    onOutput: (stream, chunk) => {
      const text = decoders[stream].write(chunk);
      if (stream === "stderr") stderrTail = (stderrTail + text).slice(-4096);
      handlers?.onOutput(stream, text);
    },
    signal: stop.signal,
    onSpawned: (c) => {
      child = c;
    },
  });
  if (ports === undefined) {
    stop.abort();
    throw new Error("the agent's process could not be started");
  }
  const [control, sandbox] = ports as [FramedPort, FramedPort];
  control.on("message", (m) => handlers?.onControl(m));
  control.on("messageerror", () => handlers?.onControlError());
  const exited = done.then(
    (raw): ProcessEnd => ({
      reason:
        raw.exitCode === ABORTED && HEAP_EXHAUSTED.test(stderrTail)
          ? "out_of_memory"
          : raw.exitCode > 128 && !raw.aborted && !violated
            ? "crashed"
            : "exited",
      exitCode: raw.exitCode,
      silent: !heard,
    }),
    (): ProcessEnd => ({ reason: "crashed", exitCode: 125, silent: !heard }),
  );
  return {
    control,
    sandbox,
    exited,
    attach(h) {
      handlers = h;
    },
    kill: () => stop.abort(),
    get dead() {
      return stop.signal.aborted;
    },
    setRef(on) {
      // Its stdout and stderr are sockets (Node's pipes to a child).
      const handles = [child, child?.stdout, child?.stderr, control, sandbox] as (
        | { ref(): void; unref(): void }
        | null
        | undefined
      )[];
      for (const h of handles) if (h) on ? h.ref() : h.unref();
    },
  };
}
