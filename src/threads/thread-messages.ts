/**
 * What an agent thread posts on its parent port (its result, its error, its
 * `ctx.log` lines), read as from a hostile sender: measured first, then
 * checked against the three known shapes.
 */
import { SandboxError } from "../errors/index.js";
import type { LogLevel } from "../port/protocol.js";
import { measureMessage } from "./message-size.js";

/** Cap on any one message a thread posts on its parent port. */
const DEFAULT_MAX_RESULT_BYTES = 64 * 1024 * 1024;
/**
 * Cap on one log message: `ctx.log` cuts a line at 8 Ki characters (16 KiB),
 * so anything much longer is abuse, not logging.
 */
const MAX_LOG_MESSAGE_BYTES = 64 * 1024;

const LEVELS = new Set<string>(["debug", "info", "warn", "error"]);

/** A message of the thread, read. */
export type ThreadMessage =
  | { kind: "result"; value: unknown }
  | { kind: "log"; level: LogLevel; message: string; dropped?: number }
  | { kind: "error"; error: { name: string; message: string }; cause: unknown };

/**
 * Reads a message from the thread's parent port. The thread is untrusted:
 * only the three known shapes count, strings are cut, and an error keeps its
 * mountbox class (as `cause`) only through `SandboxError.fromJSON`.
 */
export function readThreadMessage(
  msg: unknown,
  onSize?: (bytes: number) => void,
): ThreadMessage | "oversize" | null {
  // Every message is measured, whatever it claims to be: the thread's heap
  // limit does not cover ArrayBuffers, and dropping a message after it
  // arrived does not undo its cost.
  let hasPort = false;
  const size = measureMessage(msg, DEFAULT_MAX_RESULT_BYTES, 1_000_000, () => {
    hasPort = true;
  });
  if (size > DEFAULT_MAX_RESULT_BYTES) return "oversize";
  const m = (typeof msg === "object" && msg !== null ? msg : {}) as Record<string, unknown>;
  // The result is the one big message a thread sends; the rest are counted.
  if (m.kind !== "result") onSize?.(size);
  if (m.kind === "log") {
    if (size > MAX_LOG_MESSAGE_BYTES) return "oversize";
    const level =
      typeof m.level === "string" && LEVELS.has(m.level) ? (m.level as LogLevel) : "info";
    const message = typeof m.message === "string" ? m.message.slice(0, 8192) : "";
    // A summary of the thread's own budget: only its count is taken.
    const dropped = m.dropped;
    return typeof dropped === "number" && Number.isSafeInteger(dropped) && dropped > 0
      ? { kind: "log", level, message, dropped }
      : { kind: "log", level, message };
  }
  if (m.kind === "result") {
    if (hasPort) {
      const message = "The agent's result holds a message port, which cannot be passed on.";
      return { kind: "error", error: { name: "Error", message }, cause: new Error(message) };
    }
    return { kind: "result", value: m.value };
  }
  if (m.kind === "error") {
    const e = (typeof m.error === "object" && m.error !== null ? m.error : {}) as Record<
      string,
      unknown
    >;
    const name = typeof e.name === "string" ? e.name.slice(0, 100) : "Error";
    const message = typeof e.message === "string" ? e.message.slice(0, 4096) : "unknown error";
    const cause =
      typeof e.code === "string" && e.code !== ""
        ? SandboxError.fromJSON({ ...e, message })
        : Object.assign(new Error(message), { name });
    return { kind: "error", error: { name, message }, cause };
  }
  return null;
}
