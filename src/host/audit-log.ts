/**
 * The audit log (issue 13): one JSON line per operation, approval request,
 * decision, grant and denial (one per refused operation, issue 20). Lines
 * hold virtual paths, worker names and codes only — never host paths or file
 * contents.
 *
 * One writer per host: every line is written whole, in one call, by this
 * object, so concurrent agents never interleave. A failed write is never
 * dropped: the log turns `failed` and calls `onFailure` once (the host then
 * stops its agents and refuses further runs). A log file removed or replaced
 * under its path (checked by device and inode before each line) is a failed
 * write too, and so is one whose size is not what this writer left
 * (truncated, or appended to by anyone else): tampering stops the host
 * loudly instead of passing for a log. Agent threads cannot reach the log's
 * descriptor at all (`workers/lockdown-fds.ts`); this catches the rest.
 *
 * A line is in the file whole or not at all (issue 26): a write cut short
 * (a full disk: a short write, then ENOSPC) is truncated back to the line's
 * start before the log fails. A file opened with a torn last line (a host
 * killed mid-line) gets a newline first, so lines appended from here on are
 * whole lines of their own; the torn bytes are kept, never deleted.
 */
import {
  closeSync,
  fstatSync,
  ftruncateSync,
  openSync,
  readSync,
  statSync,
  writeSync,
} from "node:fs";
import type { Writable } from "node:stream";
import { escapeControl } from "../errors/index.js";

/** The types of audit line, in the order the docs list them. */
export const AUDIT_LINE_TYPES = [
  "operation",
  "approval_request",
  "approval_decision",
  "grant",
  "denial",
] as const;

/**
 * Error codes of a refused operation: the sandbox, an approver or the
 * host's rules said no (each gets a `denial` line beside its `operation`
 * line). Failures that are not refusals (`not_found`, `io_error`, …) do not.
 */
export const REFUSAL_CODES: ReadonlySet<string> = new Set([
  "path_not_in_sandbox",
  "path_not_writable",
  "suffix_not_allowed",
  "file_too_large",
  "invalid_path",
  "approval_denied",
  "permission_escalation",
  "delegation_refused",
]);

/** One audit line, before `time` is added. */
export interface AuditEntry {
  /** What happened. */
  type: (typeof AUDIT_LINE_TYPES)[number];
  agentId: string;
  /** Worker names from the top-level agent down to this one. */
  chain: readonly string[];
  /** The port operation (`readFile`, `runCommand`, …) or approval operation (`read`, `expand`, …). */
  op: string;
  /** The tool, when the call came through the in-process tool layer. */
  tool?: string;
  /** The worker a `delegate` operation called (as asked; control characters escaped). */
  callee?: string;
  /** Virtual path (control characters escaped). */
  path?: string;
  /** `read` or `write`, for an expansion. */
  access?: "read" | "write";
  /** `ok`, `error`, `asked`, `once`, `session`, `deny`, `denied`. */
  outcome: string;
  /** Error code, when the outcome is an error or a denial. */
  code?: string;
}

/** A sink of audit lines; see {@link openAuditLog}. */
export interface AuditLog {
  /** Writes one line; a no-op once the log has failed. */
  write(entry: AuditEntry): void;
  /** True once a write failed. */
  readonly failed: boolean;
  /** Closes a file the log opened itself (a stream given is left open). */
  close(): void;
}

/**
 * Opens an audit log on a file path (appended, created if missing; opened
 * now, so a bad path fails `createHost`) or a writable stream.
 */
export function openAuditLog(
  target: string | Writable,
  onFailure: (error: Error) => void,
): AuditLog {
  let failed = false;
  const fail = (err: unknown): void => {
    if (failed) return;
    failed = true;
    onFailure(err instanceof Error ? err : new Error(String(err)));
  };
  let put: (line: string) => void;
  let close = (): void => {};
  if (typeof target === "string") {
    // Read too, to see how the file ends; a log the host may only append to
    // (write-only for it) is opened for appending alone, unchecked.
    let readable = true;
    let fd: number;
    try {
      fd = openSync(target, "a+");
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EACCES") throw err;
      fd = openSync(target, "a");
      readable = false;
    }
    const opened = fstatSync(fd);
    // Every byte of the file from here on is ours: one writer per file.
    let size = opened.size;
    if (readable && !endsWithNewline(fd, size)) {
      writeWhole(fd, Buffer.from("\n"), size);
      size += 1;
    }
    put = (line) => {
      // The file at the path must still be the one open here: a log renamed
      // over, removed or replaced would take lines no one reads (an agent
      // that could do that is refused at createHost; this catches the rest).
      const now = statSync(target, { throwIfNoEntry: false });
      if (!now || now.dev !== opened.dev || now.ino !== opened.ino)
        throw new Error("the audit log file was removed or replaced");
      if (fstatSync(fd).size !== size)
        throw new Error("the audit log file was truncated or written by someone else");
      // Synchronous and whole: a line is on disk before the next one starts.
      const buf = Buffer.from(line);
      writeWhole(fd, buf, size);
      size += buf.length;
    };
    close = () => closeSync(fd);
  } else {
    target.on("error", fail);
    put = (line) => {
      // One write per line: a stream never splits a chunk it was given.
      target.write(line, (err) => {
        if (err) fail(err);
      });
    };
  }
  return {
    write(entry) {
      if (failed) return;
      try {
        put(`${JSON.stringify(formatAuditLine(entry))}\n`);
      } catch (err) {
        fail(err);
      }
    },
    get failed() {
      return failed;
    },
    close() {
      try {
        close();
      } catch {
        // Closing twice or after a failure: nothing left to lose.
      }
    },
  };
}

/** True if the file's last byte is a newline, or the file is empty. */
function endsWithNewline(fd: number, size: number): boolean {
  if (size === 0) return true;
  const last = Buffer.alloc(1);
  return readSync(fd, last, 0, 1, size - 1) === 1 && last[0] === 0x0a;
}

/**
 * Appends `buf` to the file (whose size is `start`) whole, or not at all: a
 * write cut short (ENOSPC, EIO, a quota) is truncated back to `start` and
 * the error thrown, so the file never ends in half a line.
 */
function writeWhole(fd: number, buf: Buffer, start: number): void {
  let off = 0;
  try {
    while (off < buf.length) off += writeSync(fd, buf, off);
  } catch (err) {
    if (off > 0) ftruncateSync(fd, start);
    throw err;
  }
}

/** An audit line's fields in a fixed order, `time` first, strings escaped (also for `mountbox mcp --audit`). */
export function formatAuditLine(e: AuditEntry): Record<string, unknown> {
  const out: Record<string, unknown> = {
    time: new Date().toISOString(),
    type: e.type,
    agentId: e.agentId,
    chain: e.chain.map((w) => escapeControl(w)),
    op: e.op,
  };
  if (e.callee !== undefined) out.callee = escapeControl(e.callee);
  if (e.tool !== undefined) out.tool = e.tool;
  if (e.path !== undefined) out.path = escapeControl(e.path);
  if (e.access !== undefined) out.access = e.access;
  out.outcome = e.outcome;
  if (e.code !== undefined) out.code = e.code;
  return out;
}
