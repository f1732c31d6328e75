/**
 * Tree operations: listFiles, remove, move.
 *
 * Walks never follow a directory link (no loops, no escapes), list mounted
 * files under their targets, and skip what a mount shadows. Destructive
 * operations check the whole subtree first and change nothing if any part
 * of it is refused.
 */
import {
  type Dirent,
  linkSync,
  lstatSync,
  readdirSync,
  realpathSync,
  renameSync,
  rmdirSync,
  statSync,
  unlinkSync,
} from "node:fs";
import { dirname, join } from "node:path";
import picomatch from "picomatch";
import { alreadyExists, ioError, SandboxError, wrapFsError } from "../errors.js";
import { setCovers } from "./areas.js";
import { readBytes } from "./io-read.js";
import { ensureRealDir, writeFile } from "./io-write.js";
import type { Mount } from "./mount-table.js";
import type { Policy } from "./policy.js";
import { baseName, isWithin, joinVirtual, parentPath } from "./virtual-path.js";

const MAX_PATTERN = 1000;

/** Lists readable regular files under `path` whose relative path matches `pattern`. */
export async function listFiles(policy: Policy, path: string, pattern: string): Promise<string[]> {
  if (typeof pattern !== "string" || pattern === "" || pattern.length > MAX_PATTERN) {
    throw ioError(
      "list",
      undefined,
      `pattern must be a non-empty glob of at most ${MAX_PATTERN} characters, such as '**/*.ts'`,
    );
  }
  const start = policy.normalize(path);
  if (start === null) throw policy.climbError(path, "read");
  if (!policy.reachesBelow(start, "read")) throw policy.denialError("outside", start, "read");
  const isMatch = picomatch(pattern, { dot: true });
  const out: string[] = [];
  const roots = walkRoots(policy, start);
  let found = false;
  for (const root of roots) {
    const real = realDirOf(policy, root);
    if (real === undefined) continue;
    found = true;
    walk(policy, root, real, start, isMatch, out);
  }
  if (!found) {
    if (policy.table.lookup(start) && statKind(policy, start) === "file") {
      throw ioError("list", start, "it is a file, not a directory (use readFile)");
    }
    throw policy.notFoundError(start);
  }
  return [...new Set(out)].sort();
}

/** The start plus every mount target below it that reads can reach. */
function walkRoots(policy: Policy, start: string): string[] {
  const roots = [start];
  for (const m of policy.table.mounts) {
    if (m.target !== start && isWithin(m.target, start) && policy.reachesBelow(m.target, "read"))
      roots.push(m.target);
  }
  return roots;
}

/** Real directory of a virtual directory, verified; undefined if absent or refused. */
function realDirOf(policy: Policy, v: string): string | undefined {
  if (!policy.table.lookup(v)) return undefined;
  try {
    const { real } = policy.resolveVirtual(v, "read", false);
    return statSync(real, { throwIfNoEntry: false })?.isDirectory() ? real : undefined;
  } catch (err) {
    // Not readable at the directory itself, but maybe below it: walk it
    // lexically, every entry is checked on its own.
    if (
      err instanceof SandboxError &&
      err.code === "path_not_in_sandbox" &&
      policy.reachesBelow(v, "read")
    ) {
      // Use the real path so every entry below maps back truthfully.
      const m = policy.table.lookup(v)!;
      try {
        const real = realpathSync.native(policy.table.toHost(m, v));
        return statSync(real).isDirectory() ? real : undefined;
      } catch {
        return undefined;
      }
    }
    return undefined;
  }
}

function statKind(policy: Policy, v: string): "file" | "other" {
  try {
    const { real } = policy.resolveVirtual(v, "read", false);
    return statSync(real).isFile() ? "file" : "other";
  } catch {
    return "other";
  }
}

function walk(
  policy: Policy,
  vdir: string,
  realDir: string,
  start: string,
  isMatch: (s: string) => boolean,
  out: string[],
): void {
  const owner = policy.table.lookup(vdir);
  let entries: Dirent[];
  try {
    entries = readdirSync(realDir, { withFileTypes: true });
  } catch {
    return; // unreadable or vanished directory: nothing to list there
  }
  for (const e of entries) {
    const v = joinVirtual(vdir, e.name);
    if (policy.table.lookup(v) !== owner) continue; // shadowed by a mount (walked as its own root)
    if (e.isDirectory()) {
      if (policy.reachesBelow(v, "read"))
        walk(policy, v, join(realDir, e.name), start, isMatch, out);
      continue;
    }
    if (!e.isFile() && !e.isSymbolicLink()) continue;
    const rel = start === "/" ? v.slice(1) : v.slice(start.length + 1);
    if (!isMatch(rel) || policy.deny(v, "read") !== undefined) continue;
    if (e.isSymbolicLink()) {
      // A link to a permitted regular file is listed; a directory link never.
      try {
        const { real } = policy.resolveVirtual(v, "read");
        if (!statSync(real).isFile()) continue;
      } catch {
        continue;
      }
    } else if (!setCovers(policy.read, v) || !isRealPermitted(policy, join(realDir, e.name), v)) {
      continue;
    }
    out.push(v);
  }
}

function isRealPermitted(policy: Policy, real: string, v: string): boolean {
  try {
    policy.checkReal(real, v, "read");
    return true;
  } catch {
    return false;
  }
}

/**
 * The real path of the entry *itself* at virtual `v` (a link stays a link):
 * the verified real parent directory joined with the name.
 */
function entryOf(policy: Policy, v: string): { real: string; mount: Mount } {
  if (v === "/") throw ioError("change", v, "the sandbox root cannot be removed or moved");
  const mount = policy.table.lookup(v);
  if (mount && mount.target === v)
    throw ioError("change", v, "it is a mount point; it cannot be removed or moved");
  const parent = policy.resolveVirtual(parentPath(v), "read", false);
  return { real: join(parent.real, baseName(v)), mount: parent.mount };
}

/** Refuses to remove or move a folder that holds a mount point. */
function checkNoMountInside(policy: Policy, v: string): void {
  for (const m of policy.table.mounts) {
    if (m.target !== v && isWithin(m.target, v)) {
      throw ioError("change", v, `it contains the mount point '${m.target}'`);
    }
  }
}

/** Checks a whole subtree for write access; refuses if any part is refused. */
function checkSubtree(policy: Policy, v: string, real: string, depth = 0): void {
  if (depth > 256) throw ioError("change", v, "the directory tree is too deep");
  for (const e of readdirSync(real, { withFileTypes: true })) {
    const child = joinVirtual(v, e.name);
    const d = policy.deny(child, "write", e.isFile());
    if (d !== undefined) throw policy.denialError(d, child, "write");
    if (e.isDirectory()) checkSubtree(policy, child, join(real, e.name), depth + 1);
  }
}

function removeTree(real: string): void {
  for (const e of readdirSync(real, { withFileTypes: true })) {
    const p = join(real, e.name);
    if (e.isDirectory()) removeTree(p);
    else unlinkSync(p);
  }
  rmdirSync(real);
}

/** Removes a file or link, or a directory (with contents only if `recursive`). */
export async function remove(policy: Policy, path: string, recursive: boolean): Promise<void> {
  const v = policy.normalize(path);
  if (v === null) throw policy.climbError(path, "write");
  try {
    const { real } = entryOf(policy, v);
    checkNoMountInside(policy, v);
    const st = lstatSync(real, { throwIfNoEntry: false });
    if (!st) throw policy.notFoundError(v);
    const d = policy.deny(v, "write", st.isFile());
    if (d !== undefined) throw policy.denialError(d, v, "write");
    policy.checkReal(real, v, "write", st.isFile());
    if (!st.isDirectory()) {
      unlinkSync(real);
      return;
    }
    if (!recursive) {
      rmdirSync(real);
      return;
    }
    checkSubtree(policy, v, real);
    removeTree(real);
  } catch (err) {
    throw wrapFsError(err, "remove", v);
  }
}

/** Moves a file, link or directory; across mounts by copy-then-delete. */
export async function move(
  policy: Policy,
  from: string,
  to: string,
  overwrite: boolean,
): Promise<void> {
  const src = policy.normalize(from);
  if (src === null) throw policy.climbError(from, "write");
  const dst = policy.normalize(to);
  if (dst === null) throw policy.climbError(to, "write");
  if (isWithin(dst, src)) throw ioError("move", src, `cannot move it into itself ('${dst}')`);
  let stage = src;
  try {
    const s = entryOf(policy, src);
    checkNoMountInside(policy, src);
    const st = lstatSync(s.real, { throwIfNoEntry: false });
    if (!st) throw policy.notFoundError(src);
    const ds = policy.deny(src, "write", st.isFile());
    if (ds !== undefined) throw policy.denialError(ds, src, "write");
    policy.checkReal(s.real, src, "write", st.isFile());
    if (st.isDirectory()) checkSubtree(policy, src, s.real);
    stage = dst;
    // The destination: a new entry in a verified, writable real directory.
    const dd = policy.deny(dst, "write", !st.isDirectory());
    if (dd !== undefined) throw policy.denialError(dd, dst, "write");
    const dstEntryParent = policy.resolveVirtual(parentPath(dst), "write", false);
    ensureRealDir(policy, dstEntryParent.real, dst);
    const dReal = join(dstEntryParent.real, baseName(dst));
    policy.checkReal(dReal, dst, "write", !st.isDirectory());
    if (st.isDirectory()) checkNoProtectedInside(policy, src, dst, s.real);
    const existing = lstatSync(dReal, { throwIfNoEntry: false });
    if (existing && !overwrite) throw alreadyExists(dst);
    if (existing?.isDirectory())
      throw ioError("move", dst, "a directory is already there; remove it first");

    if (lstatSync(dirname(s.real)).dev === lstatSync(dirname(dReal)).dev) {
      if (!existing && !st.isDirectory()) {
        // No-clobber on the same device: link() fails if the name is taken.
        try {
          linkSync(s.real, dReal);
          unlinkSync(s.real);
          return;
        } catch (err) {
          const code = (err as NodeJS.ErrnoException).code;
          if (code === "EEXIST") throw alreadyExists(dst);
          if (code !== "EPERM" && code !== "ENOTSUP" && code !== "EXDEV") throw err;
        }
      }
      renameSync(s.real, dReal);
      return;
    }
    // Across devices: copy through the verified I/O paths, then delete.
    if (st.isSymbolicLink()) throw ioError("move", src, "a link cannot be moved across mounts");
    await copyAcross(policy, src, dst, st.isDirectory());
    await remove(policy, src, true);
  } catch (err) {
    throw wrapFsError(err, "move", stage);
  }
}

/** Protected names must not appear under the destination either. */
function checkNoProtectedInside(
  policy: Policy,
  src: string,
  dst: string,
  real: string,
  depth = 0,
): void {
  if (depth > 256) return;
  for (const e of readdirSync(real, { withFileTypes: true })) {
    const rel = joinVirtual(src, e.name).slice(src.length);
    const target = dst + rel;
    const d = policy.deny(target, "write", e.isFile());
    if (d !== undefined) throw policy.denialError(d, target, "write");
    if (e.isDirectory())
      checkNoProtectedInside(
        policy,
        joinVirtual(src, e.name),
        target,
        join(real, e.name),
        depth + 1,
      );
  }
}

async function copyAcross(policy: Policy, src: string, dst: string, isDir: boolean): Promise<void> {
  if (!isDir) {
    await writeFile(policy, dst, await readBytes(policy, src));
    return;
  }
  const { real } = policy.resolveVirtual(src, "read", false);
  const dstParent = policy.resolveVirtual(dst, "write", false);
  ensureRealDir(policy, dstParent.real, dst);
  for (const e of readdirSync(real, { withFileTypes: true })) {
    const from = joinVirtual(src, e.name);
    const to = joinVirtual(dst, e.name);
    if (e.isDirectory()) await copyAcross(policy, from, to, true);
    else if (e.isFile()) await copyAcross(policy, from, to, false);
    else throw ioError("move", from, "only files and directories can be moved across mounts");
  }
}
