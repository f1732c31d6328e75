/**
 * The host's budget for an agent thread's log lines (`ctx.log` and the lines
 * of its stdout and stderr), and its guard against a flood of its parent
 * port. The thread is hostile: it can post on the parent port past
 * `ctx.log`'s own budget (`workers/log-budget.ts`), so the host counts again.
 *
 * - Within {@link HOST_LOG_LINES} lines and {@link HOST_LOG_CHARS} characters
 *   per second a line is passed on; past it the line is dropped and counted,
 *   and one summary line per second (and one when the agent ends) says how
 *   many were dropped. Twice the thread's own budget, so an honest thread's
 *   summaries and a second's window straddling the host's never hit it.
 * - Past {@link FLOOD_MESSAGES} messages or {@link FLOOD_BYTES} bytes per
 *   second on the parent port the thread is flooding, not logging: each
 *   message costs the host a receive it cannot refuse, and one the host has
 *   not yet received costs memory. The agent is stopped.
 */
import type { AgentLogEntry } from "./thread-options.js";

/** Lines per second passed on from one agent (ctx.log, stdout and stderr together). */
export const HOST_LOG_LINES = 2000;
/** Characters per second passed on from one agent. */
export const HOST_LOG_CHARS = 2 * 1024 * 1024;
/** Messages per second on a thread's parent port past which it is stopped. */
export const FLOOD_MESSAGES = 5_000;
/** Bytes per second on a thread's parent port (its result aside) past which it is stopped. */
export const FLOOD_BYTES = 32 * 1024 * 1024;

/** A per-second budget of log lines, passing lines on to `emit`. */
export class LogBudget {
  #window = -1;
  #lines = 0;
  #chars = 0;
  #dropped = 0;
  #timer: NodeJS.Timeout | undefined;

  constructor(private readonly emit: (entry: AgentLogEntry) => void) {}

  /**
   * Passes `entry` on, or drops and counts it. A summary the thread sent
   * (`dropped`) that is itself over budget adds its count, plus one for
   * itself, so that no dropped line goes unreported.
   */
  offer(entry: AgentLogEntry): void {
    const w = Math.floor(Date.now() / 1000);
    if (w !== this.#window) {
      this.#window = w;
      this.#lines = 0;
      this.#chars = 0;
    }
    if (this.#lines >= HOST_LOG_LINES || this.#chars + entry.message.length > HOST_LOG_CHARS) {
      this.#dropped += 1 + (entry.dropped ?? 0);
      // One summary when the window ends, not one per dropped line.
      this.#timer ??= setTimeout(
        () => {
          this.#timer = undefined;
          this.#summarize();
        },
        1000 - (Date.now() % 1000),
      ).unref();
      return;
    }
    this.#lines++;
    this.#chars += entry.message.length;
    this.emit(entry);
  }

  /**
   * Emits the pending summary now (the agent ended). Lines may still come
   * (its stdout drains after its result) and are budgeted as before.
   */
  flush(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#summarize();
  }

  #summarize(): void {
    if (this.#dropped === 0) return;
    const n = this.#dropped;
    this.#dropped = 0;
    this.emit({
      level: "warn",
      message: `mountbox: ${n} log line${n === 1 ? " was" : "s were"} dropped (an agent's log lines are passed on up to ${HOST_LOG_LINES} lines or ${HOST_LOG_CHARS} characters per second)`,
      dropped: n,
    });
  }
}

/**
 * Counts what arrives on a thread's parent port per second; `count` returns
 * false once the thread floods it (see {@link FLOOD_MESSAGES}).
 */
export function createFloodGuard(): { count(bytes: number): boolean } {
  let window = -1;
  let messages = 0;
  let bytes = 0;
  return {
    count(size) {
      const w = Math.floor(Date.now() / 1000);
      if (w !== window) {
        window = w;
        messages = 0;
        bytes = 0;
      }
      messages++;
      bytes += size;
      return messages <= FLOOD_MESSAGES && bytes <= FLOOD_BYTES;
    },
  };
}
