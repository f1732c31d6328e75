/**
 * The wire protocol between an agent thread and the host.
 *
 * Shared by both sides, so it has no imports: the thread side must stay free
 * of host code (and fast to load). Everything here is plain data, and this is
 * the one home of every type that crosses the port — the sandbox's own data
 * types (`SandboxDescription`, `FileStat`, `FileEdit`) included, which
 * `Sandbox` returns in-process too.
 *
 * Sandbox port (one `MessagePort` per agent):
 *   request `{ id, op, args }` → reply `{ id, ok: true, value }` or
 *   `{ id, ok: false, error }`. `id` is a non-negative safe integer chosen by
 *   the worker; a reply to a message whose id could not be read has `id: null`.
 *
 * Parent port (`parentPort` of the thread), thread → host:
 *   `{ kind: "result", value }`, `{ kind: "error", error }`, `{ kind: "log", level, message }`.
 * Host → thread: `{ kind: "abort", reason }`.
 */

// ---- Plain data of the sandbox API (also what `Sandbox` itself returns) ----

/** What a sandbox permits, in virtual paths only. */
export interface SandboxDescription {
  /** Readable virtual areas, e.g. `["/src", "/cache"]`. */
  readable: string[];
  /** Writable virtual areas. */
  writable: string[];
  /** Visible mounts (the root is `/`); never a source path. */
  mounts: { target: string; readonly: boolean }[];
  suffixes?: string[];
  maxFileBytes?: number;
}

/** One exact-text replacement for {@link Sandbox.editFile}. */
export interface FileEdit {
  oldText: string;
  newText: string;
}

/** Result of {@link Sandbox.stat}. */
export interface FileStat {
  type: "file" | "directory";
  size: number;
  mtimeMs: number;
}

// ---- The protocol ----

/** Operations the host serves on a sandbox port. Anything else is refused. */
export const SANDBOX_OPS = [
  "readFile",
  "readBytes",
  "writeFile",
  "editFile",
  "listFiles",
  "stat",
  "exists",
  "mkdir",
  "remove",
  "move",
  "canRead",
  "canWrite",
  "readableRoots",
  "writableRoots",
  "describe",
] as const;

/** One allowlisted sandbox operation. */
export type SandboxOp = (typeof SANDBOX_OPS)[number];

/**
 * Reserved for Runtime II: `ctx.delegate(worker, input, opts)` travels as op
 * `"delegate"` on the same port and is served only when the host was given a
 * delegate handler.
 */
export const DELEGATE_OP = "delegate";

/** A request from the worker. */
export interface PortRequest {
  id: number;
  op: string;
  args: unknown[];
}

/** The wire form of an error (a `SandboxError`'s `toJSON()`, or a protocol error). */
export interface WireError {
  name: string;
  code: string;
  message: string;
  path?: string;
}

/**
 * A reply from the host. A big value comes with `ack: true`: its bytes count
 * against the agent's budget until the thread answers with an {@link ACK_OP}
 * request of the same id (no reply), so a thread that stops reading its port
 * cannot make the host pile up replies.
 */
export type PortReply =
  | { id: number; ok: true; value: unknown; ack?: true }
  | { id: number | null; ok: false; error: WireError };

/** The op by which a thread acknowledges a reply sent with `ack: true`. */
export const ACK_OP = "ack";

/** Code of errors about the request itself (bad op, bad arguments, too many in flight). */
export const INVALID_REQUEST = "invalid_request";

/** Messages the thread posts on its `parentPort`. */
export type ThreadMessage =
  | { kind: "result"; value: unknown }
  | { kind: "error"; error: { name: string; message: string; code?: string; path?: string } }
  | { kind: "log"; level: LogLevel; message: string };

/** Levels of `ctx.log`. */
export type LogLevel = "debug" | "info" | "warn" | "error";

/** A file handed to a callee by its caller (read through the caller's sandbox). */
export interface Attachment {
  /** Virtual path in the caller's sandbox. */
  path: string;
  /** Guessed from the name, e.g. `application/pdf`. */
  mediaType: string;
  bytes: Uint8Array;
}

/**
 * What the thread entry receives: as `workerData` for a fresh thread, or in a
 * `{ kind: "boot", boot }` message for a warm spare started ahead of need.
 */
export interface ThreadBootData {
  /** `file:` URL of the worker module to import. */
  moduleUrl: string;
  /** The agent's input (structured-cloned). */
  input: unknown;
  /** The sandbox port (transferred). */
  port: unknown;
  /** Files its caller attached (delegation only). */
  attachments?: Attachment[];
}

/** `workerData` of a warm spare: it waits for its boot message. */
export interface WarmBootData {
  warm: true;
}

export { InvalidRequestError } from "../errors.js";
