/**
 * listFiles: readable regular files under a folder whose relative path
 * matches a glob. Walks never follow a directory link (no loops, no
 * escapes), list mounted files under their targets, and skip what a mount
 * shadows.
 *
 * A name containing `\` is never listed (nor anything below a folder so
 * named): virtual paths read `\` as `/`, so no path could read it back. The
 * same holds for a name that is not valid UTF-8 and for a path over 4096
 * bytes: every path listed reads back the file it names.
 *
 * mountbox's own temp files (a write in progress, or one a killed host left)
 * are never listed; a stale one met on the way is removed (temp-names.ts).
 *
 * A big tree must not hold the host's event loop: folders are read
 * asynchronously, and the walk yields (`setImmediate`) whenever it has run
 * for a few milliseconds since it last did, checking its `signal` each time.
 */
import {
  closeSync,
  constants,
  type Dirent,
  lstatSync,
  openSync,
  readlinkSync,
  realpathSync,
  statSync,
} from "node:fs";
import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { ioError } from "../errors/index.js";
import { HAS_PROC_FD } from "./fd-check.js";
import { compileGlob } from "./glob.js";
import { type Pace, startPace, yieldIfDue } from "./pace.js";
import type { Policy } from "./policy.js";
import { isTempName, removeIfStale } from "./temp-names.js";
import { isWithin, joinVirtual, MAX_PATH_BYTES } from "./virtual-path.js";

/** A folder opened to be listed: never through a final link. */
const DIR_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;

/** Where a walk stands: its pace and who may stop it. */
interface Walk extends Pace {
  signal: AbortSignal | undefined;
  start: string;
  /** Set when directories are listed too (listEntries): where they go, and how deep to walk. */
  dirs?: string[] | undefined;
  maxDepth?: number | undefined;
}

/** Yields to the event loop if this walk has run long enough; throws once stopped. */
async function breathe(pace: Walk): Promise<void> {
  if (!(await yieldIfDue(pace))) return;
  if (pace.signal?.aborted)
    throw ioError("list", pace.start, "the agent stopped before it finished");
}

/**
 * Lists readable regular files under `path` whose relative path matches
 * `pattern`; every path returned reads back the file it names (names with
 * `\` are left out). `signal` stops a long walk at its next yield.
 */
export async function listFiles(
  policy: Policy,
  path: string,
  pattern: string,
  signal?: AbortSignal,
): Promise<string[]> {
  const isMatch = compileGlob(pattern);
  const start = checkStart(policy, path);
  const out: string[] = [];
  const pace: Walk = { ...startPace(), signal, start };
  let found = false;
  for (const root of walkRoots(policy, start)) {
    const real = realDirOf(policy, root);
    if (real === undefined) continue;
    found = true;
    await walk(policy, root, real, start, isMatch, out, pace);
  }
  if (!found) {
    if (isFile(policy, start))
      throw ioError("list", start, "it is a file, not a directory (use readFile)");
    throw policy.notFoundError(start);
  }
  await breathe(pace);
  return [...new Set(out)].sort();
}

/** An entry of {@link listEntries}: a virtual path and what it is. */
export interface DirEntry {
  path: string;
  type: "file" | "directory";
}

/**
 * Readable files and directories under `path`, at most `maxDepth` levels
 * below it (1: its own entries), virtual and sorted. Same walk and same
 * refusals as {@link listFiles}; a mount target below `path` (and the folders
 * leading to it) shows as a directory. Directory links are never followed.
 */
export async function listEntries(
  policy: Policy,
  path: string,
  maxDepth = Number.POSITIVE_INFINITY,
  signal?: AbortSignal,
): Promise<DirEntry[]> {
  const start = checkStart(policy, path);
  const files: string[] = [];
  const dirs: string[] = [];
  const pace: Walk = { ...startPace(), signal, start, dirs, maxDepth };
  let found = false;
  for (const root of walkRoots(policy, start)) {
    const real = realDirOf(policy, root);
    if (real === undefined) continue;
    found = true;
    if (root !== start) {
      // The mount target and the folders leading to it, within the depth.
      for (let v: string = root; v !== start && isWithin(v, start); v = parentOf(v)) {
        if (depthBelow(start, v) <= maxDepth) dirs.push(v);
      }
      if (depthBelow(start, root) >= maxDepth) continue;
    }
    await walk(policy, root, real, start, () => true, files, pace);
  }
  if (!found) {
    if (isFile(policy, start))
      throw ioError("list", start, "it is a file, not a directory (use readFile)");
    throw policy.notFoundError(start);
  }
  await breathe(pace);
  const out = new Map<string, DirEntry>();
  for (const d of dirs) out.set(d, { path: d, type: "directory" });
  for (const f of files)
    if (depthBelow(start, f) <= maxDepth) out.set(f, { path: f, type: "file" });
  return [...out.values()].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/**
 * The canonical start of a walk, refused as a whole if nothing below it is
 * readable, or if it is (or lies in) a secret.
 */
function checkStart(policy: Policy, path: string): string {
  const start = policy.normalize(path);
  if (start === null) throw policy.climbError(path, "read");
  if (!policy.reachesBelow(start, "read")) throw policy.denialError("outside", start, "read");
  const d = policy.table.lookup(start) ? policy.deny(start, "read", false) : "outside";
  // A readable start that leads elsewhere (a link to outside) says so; a
  // secret one is withheld (or not found, as a read would say).
  if (d === undefined || d === "secret") policy.resolveVirtual(start, "read", false);
  return start;
}

/** Levels of `v` below `start` (a child is 1). */
function depthBelow(start: string, v: string): number {
  const rel = start === "/" ? v.slice(1) : v.slice(start.length + 1);
  return rel === "" ? 0 : rel.split("/").length;
}

function parentOf(v: string): string {
  const i = v.lastIndexOf("/");
  return i <= 0 ? "/" : v.slice(0, i);
}

/** The start plus every mount target below it that reads can reach. */
function walkRoots(policy: Policy, start: string): string[] {
  const roots = [start];
  for (const m of policy.table.mounts) {
    if (
      m.target !== start &&
      isWithin(m.target, start) &&
      policy.reachesBelow(m.target, "read") &&
      !policy.secrets.covers(m.target)
    )
      roots.push(m.target);
  }
  return roots;
}

/**
 * The verified real directory of a virtual directory to walk, or undefined
 * (absent, refused, or reached only through a link).
 */
function realDirOf(policy: Policy, v: string): string | undefined {
  const m = policy.table.lookup(v);
  if (!m) return undefined;
  try {
    if (policy.deny(v, "read", false) === undefined) {
      const { real } = policy.resolveVirtual(v, "read", false);
      return statSync(real).isDirectory() ? real : undefined;
    }
    // Not readable itself, but areas below are: walk towards them only
    // through real directories, never through a link.
    const real = realpathSync.native(policy.table.toHost(m, v));
    if (policy.table.mapBack(real) !== v) return undefined;
    return statSync(real).isDirectory() ? real : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The entries of the folder at `realDir`, read through a descriptor opened
 * without following a link and checked to be that folder: a folder swapped
 * for a link to outside between the parent's listing and this read lists
 * nothing (its names would otherwise show under inside paths). Undefined if
 * it cannot be read or is not where it was.
 */
async function readVerifiedDir(realDir: string): Promise<Dirent[] | undefined> {
  if (!HAS_PROC_FD) {
    try {
      const entries = await readdir(realDir, { withFileTypes: true });
      return realpathSync.native(realDir) === realDir ? entries : undefined;
    } catch {
      return undefined;
    }
  }
  let fd: number;
  try {
    fd = openSync(realDir, DIR_FLAGS);
  } catch {
    return undefined; // ELOOP: a link now; or gone, or unreadable
  }
  try {
    if (readlinkSync(`/proc/self/fd/${fd}`) !== realDir) return undefined;
    // Read the folder that was opened, whatever its path leads to now.
    return await readdir(`/proc/self/fd/${fd}`, { withFileTypes: true });
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}

/**
 * False for a name that is not valid UTF-8: Node decodes it with U+FFFD, and
 * that spelling names no file (or another one). Checked only for names that
 * hold U+FFFD, so the common case costs nothing.
 */
function readsBack(realDir: string, name: string): boolean {
  if (!name.includes("\uFFFD")) return true;
  try {
    lstatSync(join(realDir, name));
    return true;
  } catch {
    return false;
  }
}

function isFile(policy: Policy, v: string): boolean {
  try {
    return statSync(policy.resolveVirtual(v, "read", false).real).isFile();
  } catch {
    return false;
  }
}

/**
 * Removes a temp file a killed host left, where the mount is writable and
 * the place not the host's own code (the host cleans up after itself; the
 * agent that listed it gains nothing by it). Never throws.
 */
function sweepTemp(policy: Policy, v: string, real: string, name: string): void {
  const m = policy.table.lookup(v);
  if (!m || m.readonly || policy.table.isProtected(v)) return;
  removeIfStale(real, name);
}

async function walk(
  policy: Policy,
  vdir: string,
  realDir: string,
  start: string,
  isMatch: (s: string) => boolean,
  out: string[],
  pace: Walk,
): Promise<void> {
  const owner = policy.table.lookup(vdir);
  const entries = await readVerifiedDir(realDir);
  if (entries === undefined) return; // unreadable, vanished, or swapped for a link
  if (pace.signal?.aborted) throw ioError("list", start, "the agent stopped before it finished");
  for (const e of entries) {
    await breathe(pace);
    // A virtual path turns `\` into `/`, so a name holding `\` cannot be
    // addressed: listing it would hand out a path that reads another file (or
    // none). Such a file, and everything below such a folder, is not listed;
    // nor is a name that is not valid UTF-8, or a path too long to pass back.
    if (e.name.includes("\\") || !readsBack(realDir, e.name)) continue;
    if (isTempName(e.name)) {
      sweepTemp(policy, joinVirtual(vdir, e.name), join(realDir, e.name), e.name);
      continue;
    }
    // A secret is absent from every listing: not listed, not counted, and
    // nothing below a secret folder either.
    if (policy.secrets.matchesName(e.name)) continue;
    const v = joinVirtual(vdir, e.name);
    if (v.length > MAX_PATH_BYTES / 4 && Buffer.byteLength(v, "utf8") > MAX_PATH_BYTES) continue;
    if (policy.table.lookup(v) !== owner) continue; // shadowed by a mount (walked as its own root)
    if (e.isDirectory()) {
      if (!policy.reachesBelow(v, "read")) continue;
      if (pace.dirs !== undefined) {
        pace.dirs.push(v);
        if (depthBelow(start, v) >= (pace.maxDepth ?? Number.POSITIVE_INFINITY)) continue;
      }
      await walk(policy, v, join(realDir, e.name), start, isMatch, out, pace);
      continue;
    }
    if (!e.isFile() && !e.isSymbolicLink()) continue;
    const rel = start === "/" ? v.slice(1) : v.slice(start.length + 1);
    if (!isMatch(rel) || policy.deny(v, "read") !== undefined) continue;
    try {
      if (e.isSymbolicLink()) {
        // A link to a permitted regular file is listed; a directory link never.
        if (!statSync(policy.resolveVirtual(v, "read").real).isFile()) continue;
      } else {
        policy.checkReal(join(realDir, e.name), v, "read");
      }
    } catch {
      continue;
    }
    out.push(v);
  }
}
