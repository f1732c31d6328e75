/**
 * The thread's own `ctx.log` budget: at most {@link THREAD_LOG_LINES} lines
 * and {@link THREAD_LOG_CHARS} characters per second leave the thread; the
 * rest are dropped here, where dropping costs nothing, and counted. One
 * summary line per second (and one before the result) says how many.
 *
 * A courtesy, not the boundary: a hostile thread can post on its parent port
 * past `ctx.log`, and the host applies its own budget (`src/threads/log-budget.ts`).
 * Without it a careless `for (;;) ctx.log(…)` would post millions of
 * messages the host must receive one by one.
 */

/** Lines per second a thread sends to the host through `ctx.log`. */
export const THREAD_LOG_LINES = 1000;
/** Characters per second a thread sends to the host through `ctx.log`. */
export const THREAD_LOG_CHARS = 1024 * 1024;

/** A log line as posted to the host. */
export interface LogLine {
  kind: "log";
  level: "debug" | "info" | "warn" | "error";
  message: string;
  dropped?: number;
}

/**
 * Makes the budgeted sender: `send(line)` posts or drops it; `flush()` posts
 * the pending summary, if any. `now` is captured at boot, before user code
 * could replace `Date.now`.
 */
export function createLogBudget(
  post: (line: LogLine) => void,
  now: () => number,
): { send(line: LogLine): void; flush(): void } {
  let window = -1;
  let lines = 0;
  let chars = 0;
  let dropped = 0;
  const flush = (): void => {
    if (dropped === 0) return;
    const n = dropped;
    dropped = 0;
    post({
      kind: "log",
      level: "warn",
      message: `mountbox: ${n} ctx.log line${n === 1 ? " was" : "s were"} dropped (an agent may log at most ${THREAD_LOG_LINES} lines or ${THREAD_LOG_CHARS} characters per second)`,
      dropped: n,
    });
  };
  return {
    send(line) {
      const w = Math.floor(now() / 1000);
      if (w !== window) {
        window = w;
        lines = 0;
        chars = 0;
        flush();
      }
      if (lines >= THREAD_LOG_LINES || chars + line.message.length > THREAD_LOG_CHARS) {
        dropped++;
        return;
      }
      lines++;
      chars += line.message.length;
      post(line);
    },
    flush,
  };
}
