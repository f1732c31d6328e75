/**
 * An agent thread's stdout and stderr, captured by the host (never written
 * through: the MCP server owns the process's stdout): drained, kept up to a
 * cap, and passed on line by line as log entries.
 */
import type { Worker } from "node:worker_threads";
import type { AgentLogEntry } from "./thread-options.js";

/** Default cap on captured stdout (and, separately, stderr) per thread. */
export const DEFAULT_MAX_OUTPUT_BYTES = 1024 * 1024;
/** Longest line passed on from a thread's stdout or stderr. */
const MAX_LINE_CHARS = 8 * 1024;

/** What a thread wrote to its stdout and stderr, so far. */
export interface ThreadOutput {
  stdout: string;
  stderr: string;
}

/** Where one agent's stdout and stderr text goes, chunk by chunk. */
export interface OutputSink {
  push(stream: "stdout" | "stderr", chunk: string): void;
  end(stream: "stdout" | "stderr"): void;
}

/**
 * Keeps a bounded prefix of each stream in `out` and passes its lines on
 * as log entries (stdout as `info`, stderr as `warn`).
 */
export function createOutputSink(
  out: ThreadOutput,
  maxOutput: number,
  onLog: ((entry: AgentLogEntry) => void) | undefined,
): OutputSink {
  const lines = {
    stdout: new LineSplitter((message) => onLog?.({ level: "info", message, stream: "stdout" })),
    stderr: new LineSplitter((message) => onLog?.({ level: "warn", message, stream: "stderr" })),
  };
  return {
    push(stream, chunk) {
      if (out[stream].length >= maxOutput) return;
      const kept = chunk.slice(0, maxOutput - out[stream].length);
      out[stream] += kept;
      lines[stream].push(kept);
    },
    end: (stream) => lines[stream].flush(),
  };
}

/**
 * Captures `worker`'s stdout and stderr into `out`: drains both streams (an
 * undrained pipe stalls the thread), keeps a bounded prefix of each, and
 * passes its lines on as log entries.
 */
export function captureOutput(
  worker: Worker,
  out: ThreadOutput,
  maxOutput: number,
  onLog: ((entry: AgentLogEntry) => void) | undefined,
): void {
  const sink = createOutputSink(out, maxOutput, onLog);
  for (const stream of ["stdout", "stderr"] as const) {
    worker[stream].setEncoding("utf8");
    worker[stream].on("data", (chunk: string) => sink.push(stream, chunk));
    worker[stream].on("end", () => sink.end(stream));
  }
}

/** Cuts a text stream into lines (each at most {@link MAX_LINE_CHARS}). */
class LineSplitter {
  #rest = "";
  constructor(private readonly onLine: (line: string) => void) {}
  push(chunk: string): void {
    const parts = (this.#rest + chunk).split("\n");
    this.#rest = (parts.pop() ?? "").slice(0, MAX_LINE_CHARS);
    for (const line of parts) this.onLine(line.slice(0, MAX_LINE_CHARS));
  }
  flush(): void {
    if (this.#rest !== "") this.onLine(this.#rest);
    this.#rest = "";
  }
}
