/**
 * Destructive tree operations: remove and move.
 *
 * Both act on the entry itself (a link stays a link), check the whole
 * subtree first — lexically and by where each entry really is — and change
 * nothing if any part of it is refused. Both hold the lock of the entry (and
 * a move that of its destination) so they never land in the middle of an
 * edit or a write of that file (file-lock.ts); mountbox's own temp files
 * are never copied (temp-names.ts).
 */
import {
  linkSync,
  lstatSync,
  readdirSync,
  renameSync,
  rmdirSync,
  statSync,
  unlinkSync,
} from "node:fs";
import { dirname, join } from "node:path";
import {
  alreadyExists,
  fileTooLarge,
  ioError,
  notWritable,
  secretWithheld,
  wrapFsError,
} from "../errors/index.js";
import { withFileLocks } from "./file-lock.js";
import { capFor, readBytes } from "./io-read.js";
import { ensureRealDir, writeFileWithoutLock } from "./io-write.js";
import { type Pace, startPace, yieldIfDue } from "./pace.js";
import type { Policy } from "./policy.js";
import { realpathLoose } from "./real-path.js";
import { isTempName, refuseTempName } from "./temp-names.js";
import { baseName, isWithin, joinVirtual, parentPath } from "./virtual-path.js";

/** Deepest tree remove/move will walk. */
const MAX_DEPTH = 4096;

/**
 * The real path of the entry *itself* at virtual `v` (a final link is not
 * followed): its parent's real location joined with the name. Permission is
 * checked on the entry's own location, so a child granted exactly one file
 * may remove or move it without reading its folder.
 */
function entryOf(policy: Policy, v: string): string {
  if (v === "/") throw ioError("change", v, "the sandbox root cannot be removed or moved");
  const mount = policy.table.lookup(v);
  if (mount?.target === v)
    throw ioError("change", v, "it is a mount point; it cannot be removed or moved");
  const parent = parentPath(v);
  const pm = policy.table.lookup(parent);
  if (!pm) throw policy.denialError("outside", v, "write");
  return join(realpathLoose(policy.table.toHost(pm, parent)), baseName(v));
}

/** Refuses a folder that holds a mount point, or a mount's source folder. */
function checkNoMountInside(policy: Policy, v: string, real: string): void {
  for (const m of policy.table.mounts) {
    if (m.target !== v && isWithin(m.target, v))
      throw ioError("change", v, `it contains the mount point '${m.target}'`);
    if (isWithin(m.source, real))
      throw ioError("change", v, `it contains the folder mounted at '${m.target}'`);
  }
}

/**
 * Refuses moving or removing `v`, or putting a moved entry at `v`, where a
 * protected path lies below it: present or absent, a link or a folder, it
 * must stay where it is (a link moved into its place would make it lead
 * elsewhere — the host's next start would run what it leads to).
 */
function checkHoldsNoProtected(policy: Policy, v: string): void {
  const entry = policy.table.protectedBelow(v);
  if (entry !== undefined)
    throw notWritable(v, policy.writableRoots, policy.table.holdingReason(entry));
}

/** Checks one entry for write access, at its lexical and its real location. */
function checkEntry(policy: Policy, v: string, real: string, isFile: boolean): void {
  const d = policy.deny(v, "write", isFile);
  if (d !== undefined) throw policy.denialError(d, v, "write");
  policy.checkReal(real, v, "write", isFile);
}

/**
 * Checks every entry of a subtree for write access (no links followed),
 * yielding to the event loop now and then (a big tree must not hold it).
 */
async function checkSubtree(
  policy: Policy,
  v: string,
  real: string,
  pace: Pace,
  depth = 0,
  top = v,
): Promise<void> {
  if (depth > MAX_DEPTH) throw ioError("change", v, "the directory tree is too deep");
  for (const e of readdirSync(real, { withFileTypes: true })) {
    await yieldIfDue(pace);
    // A secret goes nowhere, not even with its folder (a move across
    // mounts would read it); the message names the folder, not the secret.
    if (policy.secrets.matchesName(e.name)) throw secretWithheld(top, { access: "holds" });
    const child = joinVirtual(v, e.name);
    const childReal = join(real, e.name);
    checkEntry(policy, child, childReal, e.isFile());
    if (e.isDirectory()) await checkSubtree(policy, child, childReal, pace, depth + 1, top);
  }
}

/** Deletes a checked tree, yielding now and then; never stopped halfway on purpose. */
async function removeTree(real: string, pace: Pace): Promise<void> {
  for (const e of readdirSync(real, { withFileTypes: true })) {
    await yieldIfDue(pace);
    const p = join(real, e.name);
    if (e.isDirectory()) await removeTree(p, pace);
    else unlinkSync(p);
  }
  rmdirSync(real);
}

/** Throws if `signal` was aborted: the agent that asked is gone. */
function checkNotStopped(
  signal: AbortSignal | undefined,
  op: string,
  v: string,
  detail = "nothing was changed",
): void {
  if (signal?.aborted) throw ioError(op, v, `the agent stopped before it finished; ${detail}`);
}

/**
 * Removes a file or link, or a directory (with contents only if `recursive`).
 * `signal` is checked once the whole tree is checked, before anything is
 * deleted; deleting itself is synchronous, so it is never cut short.
 */
export async function remove(
  policy: Policy,
  path: string,
  recursive: boolean,
  signal?: AbortSignal,
): Promise<void> {
  const v = policy.normalize(path);
  if (v === null) throw policy.climbError(path, "write");
  await withFileLocks([lockKeyOf(policy, v)], () =>
    removeWithoutLock(policy, v, recursive, signal),
  );
}

/**
 * The lock key of the entry at `v` (its real path), or undefined where it
 * has none: the operation then fails on its own with the right message.
 */
function lockKeyOf(policy: Policy, v: string): string | undefined {
  try {
    return entryOf(policy, v);
  } catch {
    return undefined;
  }
}

/** {@link remove} of a canonical path, for a caller that holds its lock. */
async function removeWithoutLock(
  policy: Policy,
  v: string,
  recursive: boolean,
  signal?: AbortSignal,
): Promise<void> {
  try {
    const real = entryOf(policy, v);
    const st = lstatSync(real, { throwIfNoEntry: false });
    checkNoMountInside(policy, v, real);
    if (!st) throw policy.notFoundError(v);
    checkHoldsNoProtected(policy, v);
    checkEntry(policy, v, real, st.isFile());
    if (!st.isDirectory()) {
      unlinkSync(real);
      return;
    }
    if (!recursive) {
      rmdirSync(real);
      return;
    }
    const pace = startPace();
    await checkSubtree(policy, v, real, pace);
    checkNotStopped(signal, "remove", v);
    await removeTree(real, pace);
  } catch (err) {
    throw wrapFsError(err, "remove", v);
  }
}

/**
 * Checks what a moved tree would become at `dst`: every destination path
 * writable (protected names included) and every file within the size cap
 * there. Also refuses, before anything is copied, what cannot cross mounts.
 */
async function checkDestinationTree(
  policy: Policy,
  src: string,
  dst: string,
  real: string,
  acrossMounts: boolean,
  pace: Pace,
  depth = 0,
): Promise<void> {
  if (depth > MAX_DEPTH) throw ioError("move", src, "the directory tree is too deep");
  for (const e of readdirSync(real, { withFileTypes: true })) {
    await yieldIfDue(pace);
    if (isTempName(e.name)) continue; // never copied (see copyAcross)
    const target = joinVirtual(dst, e.name);
    const d = policy.deny(target, "write", e.isFile());
    if (d !== undefined) throw policy.denialError(d, target, "write");
    if (acrossMounts && !e.isFile() && !e.isDirectory()) {
      throw ioError(
        "move",
        joinVirtual(src, e.name),
        "only files and folders can be moved across mounts",
      );
    }
    const childReal = join(real, e.name);
    if (e.isFile()) checkSize(policy, target, statSync(childReal).size);
    if (e.isDirectory())
      await checkDestinationTree(
        policy,
        joinVirtual(src, e.name),
        target,
        childReal,
        acrossMounts,
        pace,
        depth + 1,
      );
  }
}

function checkSize(policy: Policy, dst: string, size: number): void {
  const cap = capFor(policy, dst);
  if (cap !== undefined && size > cap) throw fileTooLarge(dst, size, cap, "move");
}

/**
 * Moves a file, link or directory; across mounts by verified copy, then
 * delete. `signal` is checked once the source is checked, once the
 * destination is, between copied files and before the source is deleted:
 * an aborted move removes what it copied and leaves the source (folders it
 * made on the destination's way stay). Past the last check it finishes.
 */
export async function move(
  policy: Policy,
  from: string,
  to: string,
  overwrite: boolean,
  signal?: AbortSignal,
): Promise<void> {
  const src = policy.normalize(from);
  if (src === null) throw policy.climbError(from, "write");
  const dst = policy.normalize(to);
  if (dst === null) throw policy.climbError(to, "write");
  if (isWithin(dst, src)) throw ioError("move", src, `cannot move it into itself ('${dst}')`);
  refuseTempName(dst);
  await withFileLocks([lockKeyOf(policy, src), lockKeyOf(policy, dst)], () =>
    moveWithoutLock(policy, src, dst, overwrite, signal),
  );
}

/** {@link move} of canonical paths, for a caller that holds both locks. */
async function moveWithoutLock(
  policy: Policy,
  src: string,
  dst: string,
  overwrite: boolean,
  signal?: AbortSignal,
): Promise<void> {
  let stage = src;
  try {
    const sReal = entryOf(policy, src);
    const st = lstatSync(sReal, { throwIfNoEntry: false });
    checkNoMountInside(policy, src, sReal);
    if (!st) throw policy.notFoundError(src);
    checkHoldsNoProtected(policy, src);
    checkHoldsNoProtected(policy, dst);
    checkEntry(policy, src, sReal, st.isFile());
    const pace = startPace();
    if (st.isDirectory()) await checkSubtree(policy, src, sReal, pace);
    // Checking a big tree yields: a stop meanwhile ends the move here.
    checkNotStopped(signal, "move", src);
    stage = dst;
    // The destination: a new entry in a verified, writable real folder.
    const dParent = policy.resolveVirtual(parentPath(dst), "write", false);
    await ensureRealDir(policy, dParent.real, dst);
    const dReal = join(dParent.real, baseName(dst));
    checkEntry(policy, dst, dReal, !st.isDirectory());
    checkNoMountInside(policy, dst, dReal);
    const existing = lstatSync(dReal, { throwIfNoEntry: false });
    if (existing && !overwrite) throw alreadyExists(dst);
    if (existing?.isDirectory())
      throw ioError("move", dst, "a folder is already there; remove it first");
    const sameDevice = lstatSync(dirname(sReal)).dev === lstatSync(dirname(dReal)).dev;
    if (st.isFile()) checkSize(policy, dst, st.size);
    if (st.isDirectory()) await checkDestinationTree(policy, src, dst, sReal, !sameDevice, pace);
    // The last safe point before anything moves (issue 26: a move stopped
    // while it was checked used to happen after its agent was gone).
    checkNotStopped(signal, "move", src, "nothing was moved");
    if (sameDevice) {
      if (!existing && !st.isDirectory()) {
        // No-clobber on the same device: link() fails if the name is taken.
        try {
          linkSync(sReal, dReal);
          unlinkSync(sReal);
          return;
        } catch (err) {
          const code = (err as NodeJS.ErrnoException).code;
          if (code === "EEXIST") throw alreadyExists(dst);
          if (code !== "EPERM" && code !== "ENOTSUP" && code !== "EXDEV") throw err;
        }
      }
      renameSync(sReal, dReal);
      return;
    }
    if (st.isSymbolicLink()) throw ioError("move", src, "a link cannot be moved across mounts");
    try {
      await copyAcross(policy, src, dst, st.isDirectory(), signal);
      // A complete copy over an existing file cannot be undone: finish instead.
      if (!existing) checkNotStopped(signal, "move", src);
    } catch (err) {
      // Leave nothing half-copied behind. A file copy is atomic: only a
      // complete copy that was then stopped needs removing.
      try {
        if (!existing && st.isDirectory()) await removeTree(dReal, startPace());
        else if (!existing && signal?.aborted) unlinkSync(dReal);
      } catch {
        // best effort: the error below is what matters
      }
      throw err;
    }
    await removeWithoutLock(policy, src, true);
  } catch (err) {
    throw wrapFsError(err, "move", stage);
  }
}

async function copyAcross(
  policy: Policy,
  src: string,
  dst: string,
  isDir: boolean,
  signal: AbortSignal | undefined,
): Promise<void> {
  checkNotStopped(signal, "move", src);
  if (!isDir) {
    await writeFileWithoutLock(policy, dst, await readBytes(policy, src));
    return;
  }
  const { real } = policy.resolveVirtual(src, "read", false);
  const dstDir = policy.resolveVirtual(dst, "write", false);
  await ensureRealDir(policy, dstDir.real, dst);
  for (const e of readdirSync(real, { withFileTypes: true })) {
    // A write in progress there (or one a killed host left): not part of the tree.
    if (isTempName(e.name)) continue;
    await copyAcross(
      policy,
      joinVirtual(src, e.name),
      joinVirtual(dst, e.name),
      e.isDirectory(),
      signal,
    );
  }
}
