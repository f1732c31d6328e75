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
  for (const stream of ["stdout", "stderr"] as const) {
    const lines = new LineSplitter((message) =>
      onLog?.({ level: stream === "stdout" ? "info" : "warn", message, stream }),
    );
    worker[stream].setEncoding("utf8");
    worker[stream].on("data", (chunk: string) => {
      if (out[stream].length >= maxOutput) return;
      const kept = chunk.slice(0, maxOutput - out[stream].length);
      out[stream] += kept;
      lines.push(kept);
    });
    worker[stream].on("end", () => lines.flush());
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
