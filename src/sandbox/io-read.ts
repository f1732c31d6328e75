/**
 * Reads: readBytes, readText, stat, exists.
 *
 * A read opens the file without following a final link and without blocking
 * on a FIFO, requires a regular file, verifies the descriptor's real path,
 * and checks the size on the descriptor before reading a byte. Small files
 * are read with sync syscalls (a thread-pool hop costs more than the read).
 */
import { type BigIntStats, closeSync, fstatSync, read as readCb, readSync } from "node:fs";
import { promisify } from "node:util";
import {
  fileTooLarge,
  fileTooLargeToReadWhole,
  ioError,
  SandboxError,
  wrapFsError,
} from "../errors/index.js";
import { openVerified } from "./fd-check.js";
import type { Policy } from "./policy.js";
import type { ReadOptions } from "./types.js";

const readAsync = promisify(readCb);

/** Files up to this size are read with sync syscalls. */
const SYNC_READ_LIMIT = 256 * 1024;
const ASYNC_CHUNK = 1024 * 1024;

/** The byte cap for a file seen at two virtual locations (lexical, real). */
export function capFor(policy: Policy, ...virtuals: string[]): number | undefined {
  let cap: number | undefined;
  for (const v of virtuals) {
    const c = policy.table.lookup(v)?.maxFileBytes;
    if (c !== undefined && (cap === undefined || c < cap)) cap = c;
  }
  return cap;
}

/** Reads a whole regular file through the policy. */
export async function readBytes(
  policy: Policy,
  path: string,
  limits: ReadOptions = {},
): Promise<Uint8Array> {
  return (await readVerified(policy, path, limits)).bytes;
}

/**
 * Which file was read, and as it was before its first byte was read (its
 * timestamps in nanoseconds): a write after that, in place or by rename,
 * changes one of these (see `sameFile`).
 */
export type FileIdentity = Pick<BigIntStats, "dev" | "ino" | "size" | "mtimeNs" | "ctimeNs">;

/** True if two identities name the same, unchanged file. */
export function sameFile(a: FileIdentity, b: FileIdentity): boolean {
  return (
    a.dev === b.dev &&
    a.ino === b.ino &&
    a.size === b.size &&
    a.mtimeNs === b.mtimeNs &&
    a.ctimeNs === b.ctimeNs
  );
}

/** {@link readBytes}, also returning the identity of what was read (for `editFile`). */
export async function readVerified(
  policy: Policy,
  path: string,
  limits: ReadOptions = {},
): Promise<{ bytes: Uint8Array; identity: FileIdentity }> {
  const r = policy.resolve(path, "read");
  const opened = openVerified(policy, r, "read", true);
  const { fd, stats } = opened;
  let sync = true;
  try {
    // Taken before reading: a write that lands while the bytes are read
    // changes the file's timestamps after this, so it is never missed.
    const identity: FileIdentity = fstatSync(fd, { bigint: true });
    if (!stats.isFile()) {
      throw ioError(
        "read",
        r.virtual,
        stats.isDirectory()
          ? "it is a directory, not a file (use listFiles)"
          : "it is not a regular file",
      );
    }
    const mountCap = capFor(policy, r.virtual, opened.realVirtual);
    const cap = mountCap ?? limits.defaultMaxBytes;
    if (cap !== undefined && stats.size > cap)
      throw mountCap === undefined
        ? fileTooLargeToReadWhole(r.virtual, stats.size, cap)
        : fileTooLarge(r.virtual, stats.size, cap);
    if (limits.beforeLoad) await limits.beforeLoad(stats.size);
    // Read up to one byte past the cap (or the size) so a file that grew
    // after fstat is still caught.
    const limit = cap === undefined ? Number.MAX_SAFE_INTEGER : cap + 1;
    if (stats.size <= SYNC_READ_LIMIT)
      return { bytes: readAllSync(fd, stats.size, limit, r.virtual, cap), identity };
    sync = false;
    const bytes = await readAllAsync(fd, limit, r.virtual, cap).finally(() => closeSync(fd));
    return { bytes, identity };
  } catch (err) {
    throw err instanceof SandboxError ? err : wrapFsError(err, "read", r.virtual);
  } finally {
    if (sync) closeSync(fd);
  }
}

function readAllSync(
  fd: number,
  size: number,
  limit: number,
  v: string,
  cap: number | undefined,
): Uint8Array {
  let buf = Buffer.allocUnsafe(Math.min(Math.max(size, 1), limit));
  let len = 0;
  for (;;) {
    if (len === buf.length) {
      if (buf.length >= limit) break;
      const bigger = Buffer.allocUnsafe(Math.min(buf.length * 2, limit));
      buf.copy(bigger, 0, 0, len);
      buf = bigger;
    }
    const n = readSync(fd, buf, len, buf.length - len, null);
    if (n === 0) break;
    len += n;
  }
  if (cap !== undefined && len > cap) throw fileTooLarge(v, len, cap);
  return new Uint8Array(buf.buffer, buf.byteOffset, len);
}

async function readAllAsync(
  fd: number,
  limit: number,
  v: string,
  cap: number | undefined,
): Promise<Uint8Array> {
  const chunks: Buffer[] = [];
  let total = 0;
  for (;;) {
    const want = Math.min(ASYNC_CHUNK, Math.max(limit - total, 0));
    if (want === 0) break;
    const buf = Buffer.allocUnsafe(want);
    const { bytesRead } = await readAsync(fd, buf, 0, want, null);
    if (bytesRead === 0) break;
    chunks.push(buf.subarray(0, bytesRead));
    total += bytesRead;
  }
  if (cap !== undefined && total > cap) throw fileTooLarge(v, total, cap);
  const out = Buffer.concat(chunks, total);
  return new Uint8Array(out.buffer, out.byteOffset, out.length);
}

const decoder = new TextDecoder("utf-8");

/** Reads a file as UTF-8 text. */
export async function readText(
  policy: Policy,
  path: string,
  limits: ReadOptions = {},
): Promise<string> {
  return decoder.decode(await readBytes(policy, path, limits));
}

/** Type, size and mtime of a readable file or directory. */
export async function stat(
  policy: Policy,
  path: string,
): Promise<{ type: "file" | "directory"; size: number; mtimeMs: number }> {
  const r = policy.resolve(path, "read", false);
  // Suffix rule for files only: checked on what was opened.
  const { fd, stats } = openVerified(policy, r, "read", true);
  closeSync(fd);
  if (stats.isFile()) return { type: "file", size: stats.size, mtimeMs: stats.mtimeMs };
  if (stats.isDirectory()) return { type: "directory", size: stats.size, mtimeMs: stats.mtimeMs };
  throw ioError("stat", r.virtual, "it is not a regular file or directory");
}

/**
 * True if something readable exists at `path`. Missing and refused paths are
 * both `false`; a malformed path still throws `InvalidPathError`.
 */
export async function exists(policy: Policy, path: string): Promise<boolean> {
  try {
    await stat(policy, path);
    return true;
  } catch (err) {
    if (err instanceof SandboxError && err.code === "invalid_path") throw err;
    return false;
  }
}
