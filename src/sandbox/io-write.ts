/**
 * Writes: writeFile (atomic) and mkdir (verified, one level at a time);
 * `editFile` (io-edit.ts) writes through {@link writeAtomic} too.
 *
 * A write goes to a temp file created with O_CREAT|O_EXCL|O_NOFOLLOW in the
 * target's real directory; where it was created is verified, the content is
 * written, the old file's mode is kept, and the temp file is renamed over the
 * target. A process killed mid-write leaves the old content or the new (and
 * a temp file nobody sees, see temp-names.ts). Writes of one file are
 * ordered with its edits, moves and removes (file-lock.ts).
 */
import {
  closeSync,
  fchmodSync,
  fstatSync,
  lstatSync,
  openSync,
  realpathSync,
  renameSync,
  statSync,
  unlinkSync,
  writeSync,
} from "node:fs";
import { mkdir as mkdirAsync } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { fileTooLarge, ioError, SandboxError, wrapFsError } from "../errors/index.js";
import { CREATE_FLAGS, realPathOfFd, runRaceHook } from "./fd-check.js";
import { withFileLocks } from "./file-lock.js";
import { capFor, type FileIdentity, sameFile } from "./io-read.js";
import type { Policy } from "./policy.js";
import { makeTempName, refuseTempName } from "./temp-names.js";

/**
 * Makes sure the real directory `realDir` exists, creating missing levels
 * one at a time. The deepest existing level is realpath'd once; each created
 * level must map back to a writable location and be a real directory (not a
 * link raced in) before the next is made under it. `asked` names the virtual
 * path in errors. Each level is created off the event loop: on a deep path
 * one mkdir costs the kernel O(depth), so a deep tree made in one call took
 * O(depth²) of the host's loop.
 */
export async function ensureRealDir(policy: Policy, realDir: string, asked: string): Promise<void> {
  const missing: string[] = [];
  let cur = realDir;
  for (;;) {
    let st: ReturnType<typeof lstatSync>;
    try {
      st = lstatSync(cur, { throwIfNoEntry: false });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOTDIR") throw inTheWay(asked);
      throw err;
    }
    if (st?.isDirectory()) break;
    if (st?.isSymbolicLink()) {
      // A link where a directory should be: allowed only if it leads to a
      // permitted directory (the policy decides where it really lands).
      const real = realpathSync.native(cur);
      policy.checkReal(real, asked, "write", false);
      if (!statSync(real).isDirectory()) throw inTheWay(asked);
      break;
    }
    if (st) throw inTheWay(asked);
    const parent = dirname(cur);
    if (parent === cur) throw ioError("mkdir", asked, "the top directory is missing");
    missing.push(basename(cur));
    cur = parent;
  }
  if (missing.length === 0) return;
  let real = realpathSync.native(cur);
  for (const name of missing.reverse()) {
    const next = join(real, name);
    policy.checkReal(next, asked, "write", false);
    try {
      await mkdirAsync(next);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    }
    if (!lstatSync(next).isDirectory()) throw policy.linkError(asked, "write", undefined);
    real = next;
  }
}

function inTheWay(asked: string) {
  return ioError("mkdir", asked, "a file is in the way of a directory");
}

/**
 * Thrown by {@link writeAtomic} when the target is no longer the file an
 * edit read: nothing was written, the caller reads it again.
 */
export class FileChangedError extends Error {}

/**
 * Atomically writes bytes to the real target of an already-resolved virtual
 * path. Verifies the temp file's real location before writing. With
 * `expected`, the target must still be that file, unchanged, just before the
 * rename, or {@link FileChangedError} is thrown and nothing is written.
 */
export async function writeAtomic(
  policy: Policy,
  v: string,
  realTarget: string,
  bytes: Uint8Array,
  expected?: FileIdentity,
): Promise<void> {
  const dir = dirname(realTarget);
  const base = basename(realTarget);
  const tmp = join(dir, makeTempName());
  let fd: number | undefined;
  let created = false;
  try {
    await ensureRealDir(policy, dir, v);
    const existing = lstatSync(realTarget, { throwIfNoEntry: false });
    if (existing?.isDirectory()) throw ioError("write", v, "it is a directory, not a file");
    fd = openSync(tmp, CREATE_FLAGS, 0o666);
    created = true;
    const stats = fstatSync(fd);
    const realTmp = realPathOfFd(fd, tmp, stats);
    if (realTmp === undefined) throw policy.linkError(v, "write", undefined);
    // The destination is the temp file's real directory plus the target name.
    const destVirtual = policy.checkReal(join(dirname(realTmp), base), v, "write");
    const cap = capFor(policy, v, destVirtual);
    if (cap !== undefined && bytes.byteLength > cap)
      throw fileTooLarge(v, bytes.byteLength, cap, "write");
    if (existing?.isFile()) fchmodSync(fd, existing.mode & 0o7777);
    let off = 0;
    while (off < bytes.byteLength) off += writeSync(fd, bytes, off, bytes.byteLength - off);
    closeSync(fd);
    fd = undefined;
    runRaceHook("before-rename", realTarget);
    const dest = join(dirname(realTmp), base);
    if (expected) {
      // The last look before the rename: a shell command or another process
      // that wrote the file since it was read would otherwise be undone.
      const now = lstatSync(dest, { bigint: true, throwIfNoEntry: false });
      if (!now || !sameFile(now, expected)) throw new FileChangedError();
    }
    renameSync(tmp, dest);
    created = false;
  } catch (err) {
    if (err instanceof SandboxError || err instanceof FileChangedError) throw err;
    throw wrapFsError(err, "write", v);
  } finally {
    if (fd !== undefined) closeSync(fd);
    if (created) {
      try {
        unlinkSync(tmp);
      } catch {
        // already gone; nothing more to clean
      }
    }
  }
}

function toBytes(content: string | Uint8Array, v: string): Uint8Array {
  if (typeof content === "string") return Buffer.from(content, "utf8");
  if (content instanceof Uint8Array) return content;
  throw ioError("write", v, "content must be a string or a Uint8Array");
}

/**
 * Writes a file atomically, creating parent directories; ordered with the
 * other writes, edits, moves and removes of the same file.
 */
export async function writeFile(
  policy: Policy,
  path: string,
  content: string | Uint8Array,
): Promise<void> {
  const r = policy.resolve(path, "write");
  refuseTempName(r.virtual);
  await withFileLocks([r.real], () => writeFileWithoutLock(policy, r.virtual, content));
}

/**
 * {@link writeFile} for a caller that already holds the file's lock (a move
 * across mounts); `path` is re-resolved, as `writeFile` does.
 */
export async function writeFileWithoutLock(
  policy: Policy,
  path: string,
  content: string | Uint8Array,
): Promise<void> {
  const r = policy.resolve(path, "write");
  const bytes = toBytes(content, r.virtual);
  const cap = capFor(policy, r.virtual);
  if (cap !== undefined && bytes.byteLength > cap)
    throw fileTooLarge(r.virtual, bytes.byteLength, cap, "write");
  await writeAtomic(policy, r.virtual, r.real, bytes);
}

/** Creates a directory and any missing parents; fine if it already exists. */
export async function mkdir(policy: Policy, path: string): Promise<void> {
  const r = policy.resolve(path, "write", false);
  refuseTempName(r.virtual);
  try {
    await ensureRealDir(policy, r.real, r.virtual);
  } catch (err) {
    throw wrapFsError(err, "mkdir", r.virtual);
  }
}
