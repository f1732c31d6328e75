/**
 * Writes: writeFile (atomic), mkdir (verified, one level at a time), editFile.
 *
 * A write goes to a temp file created with O_CREAT|O_EXCL|O_NOFOLLOW in the
 * target's real directory; where it was created is verified, the content is
 * written, the old file's mode is kept, and the temp file is renamed over the
 * target. A process killed mid-write leaves the old content or the new.
 */
import { randomBytes } from "node:crypto";
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
import {
  editFailed,
  editTooMuchWork,
  fileTooLarge,
  ioError,
  SandboxError,
  wrapFsError,
} from "../errors/index.js";
import { CREATE_FLAGS, realPathOfFd, runRaceHook } from "./fd-check.js";
import { capFor, readBytes } from "./io-read.js";
import type { Policy } from "./policy.js";
import { diffTexts } from "./unified-diff.js";

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
 * Atomically writes bytes to the real target of an already-resolved virtual
 * path. Verifies the temp file's real location before writing.
 */
async function writeAtomic(
  policy: Policy,
  v: string,
  realTarget: string,
  bytes: Uint8Array,
): Promise<void> {
  const dir = dirname(realTarget);
  const base = basename(realTarget);
  // Short and fixed-length, so a 255-byte target name still fits.
  const tmp = join(dir, `.mountbox-${randomBytes(8).toString("hex")}.tmp`);
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
    renameSync(tmp, join(dirname(realTmp), base));
    created = false;
  } catch (err) {
    throw err instanceof SandboxError ? err : wrapFsError(err, "write", v);
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

/** Writes a file atomically, creating parent directories. */
export async function writeFile(
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
  try {
    await ensureRealDir(policy, r.real, r.virtual);
  } catch (err) {
    throw wrapFsError(err, "mkdir", r.virtual);
  }
}

const decoder = new TextDecoder("utf-8");

/**
 * Most work one editFile call may do, in characters scanned: each edit scans
 * (and rebuilds) the whole text as it stands, about 1 ns per character on a
 * 2-core machine, so this keeps the edits to ~10-15 ms of the host's event
 * loop, leaving room for the diff after them (bounded on its own, ~20-30 ms
 * on a large file) under the ~50 ms a request may hold it.
 */
export const EDIT_WORK_BUDGET = 10_000_000;

/**
 * Applies exact-text edits in order. Each `oldText` must occur exactly once
 * in the text as it stands after the previous edits. Nothing is written
 * unless every edit applies; `dryRun` only returns the diff. The work is
 * bounded by {@link EDIT_WORK_BUDGET}: more edits × characters are refused
 * (before any is applied) with a message saying how to split them.
 */
export async function editFile(
  policy: Policy,
  path: string,
  edits: { oldText: string; newText: string }[],
  dryRun: boolean,
): Promise<{ diff: string }> {
  const r = policy.resolve(path, "write");
  if (!Array.isArray(edits) || edits.length === 0) {
    throw ioError("edit", r.virtual, "edits must be a non-empty array of { oldText, newText }");
  }
  const before = decoder.decode(await readBytes(policy, path));
  const refuse = (chars: number) =>
    editTooMuchWork(
      r.virtual,
      edits.length,
      chars,
      EDIT_WORK_BUDGET,
      Math.floor(EDIT_WORK_BUDGET / Math.max(chars, 1)),
    );
  // Up front on the text as read; then as the text grows with the edits.
  if (edits.length * Math.max(before.length, 1) > EDIT_WORK_BUDGET) throw refuse(before.length);
  let after = before;
  let work = 0;
  edits.forEach((e, i) => {
    if (typeof e?.oldText !== "string" || typeof e?.newText !== "string") {
      throw ioError("edit", r.virtual, `edit #${i + 1} needs string oldText and newText`);
    }
    if (e.oldText === "") throw editFailed(r.virtual, i, e.oldText, 2);
    work += Math.max(after.length, 1);
    if (work > EDIT_WORK_BUDGET) throw refuse(after.length);
    const first = after.indexOf(e.oldText);
    if (first < 0) throw editFailed(r.virtual, i, e.oldText, 0);
    if (after.indexOf(e.oldText, first + 1) >= 0) {
      throw editFailed(r.virtual, i, e.oldText, countOccurrences(after, e.oldText, first));
    }
    after = after.slice(0, first) + e.newText + after.slice(first + e.oldText.length);
  });
  const diff = diffTexts(r.virtual, before, after);
  if (!dryRun) await writeAtomic(policy, r.virtual, r.real, Buffer.from(after, "utf8"));
  return { diff };
}

function countOccurrences(text: string, needle: string, first: number): number {
  let count = 0;
  for (let i = first; i >= 0; i = text.indexOf(needle, i + 1)) count++;
  return count;
}
