/**
 * Real paths for targets that may not exist yet.
 *
 * `realpathLoose` returns where a host path really leads: the kernel's answer
 * when the path exists, otherwise the real location of its deepest existing
 * ancestor joined with the rest, following dangling links by hand. It is the
 * policy's prediction; the I/O layer still verifies what it actually opened.
 *
 * The work is bounded for deep paths (up to ~2000 levels fit in 4096 bytes):
 * the deepest existing ancestor is found with O(log n) lstat probes and, in
 * the common case, one realpath (existence is monotone along a path's
 * prefixes: a prefix resolves whenever a longer one does), then the missing
 * rest is walked down once, one lstat per level until nothing is there. On
 * Linux, realpath itself is asked of the kernel through /proc/self/fd, O(n),
 * instead of glibc's per-level readlinks, O(n²).
 */
import { closeSync, constants, lstatSync, openSync, readlinkSync, realpathSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";

/** How many links may be followed by hand before giving up (as the kernel). */
const MAX_HOPS = 40;

/**
 * Results already computed for host paths (and the hand-followed links they
 * took), so a caller resolving every ancestor of one path, such as the
 * not-found message's climb, pays for the walk once. Use one per operation:
 * it assumes the file system did not change meanwhile.
 */
export type RealpathMemo = Map<string, MemoEntry>;

/** One remembered result; `absent` when nothing exists at `real` (as seen). */
export interface MemoEntry {
  real: string;
  hops: number;
  absent: boolean;
}

function errnoOf(err: unknown): string {
  return typeof err === "object" && err !== null && "code" in err
    ? String((err as { code: unknown }).code)
    : "";
}

function loopError(): NodeJS.ErrnoException {
  const e = new Error("too many levels of symbolic links") as NodeJS.ErrnoException;
  e.code = "ELOOP";
  return e;
}

/**
 * The real location of `hostPath`, existing or not.
 * @param memo results shared between calls of one operation (optional)
 * @throws the fs error (ELOOP, EACCES, …) when it cannot be determined
 */
export function realpathLoose(hostPath: string, memo?: RealpathMemo): string {
  return follow(hostPath, { hops: 0 }, memo);
}

/**
 * Depth past which glibc's realpath (a readlink per level, each a walk from
 * the root) costs more than asking the kernel through /proc/self/fd.
 */
const DEEP_PATH = 64;

/**
 * True if a host path is deeper than {@link DEEP_PATH} (counting `/`). A
 * path with no more characters than that is not (the common case: no scan).
 */
function isDeep(p: string): boolean {
  if (p.length <= DEEP_PATH) return false;
  let n = 0;
  for (let i = p.indexOf("/"); i >= 0; i = p.indexOf("/", i + 1)) if (++n > DEEP_PATH) return true;
  return false;
}

/** Opening a folder to ask the kernel where it is (never a FIFO or a file). */
const DIR_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY | (constants.O_NONBLOCK ?? 0);
const HAS_PROC_FD = process.platform === "linux";

/**
 * The real path of an existing folder in O(depth): one open and a readlink
 * of `/proc/self/fd/N`. glibc's realpath does a readlink per level, each a
 * walk from the root: O(depth²), ~140 ms at 2000 levels. `undefined` when
 * not a folder or not answerable this way (the caller asks realpath).
 */
function folderRealpath(p: string): string | undefined {
  let fd: number;
  try {
    fd = openSync(p, DIR_FLAGS);
  } catch {
    return undefined;
  }
  try {
    const r = readlinkSync(`/proc/self/fd/${fd}`);
    return r.charCodeAt(0) === 47 && !r.endsWith(" (deleted)") ? r : undefined;
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}

/**
 * realpath(3)'s answer for `p`, computed in O(depth) where possible: a folder
 * directly, a non-link entry as its folder's real path plus its name.
 * `plainEntry`: lstat just saw neither a folder nor a link there.
 */
function realpathOf(p: string, plainEntry = false): string {
  // Shallow paths (nearly all): one realpath syscall is cheapest.
  if (HAS_PROC_FD && isDeep(p)) {
    const dir = plainEntry ? undefined : folderRealpath(p);
    if (dir !== undefined) return dir;
    const name = basename(p);
    if (name !== "" && name !== "." && name !== ".." && !p.endsWith("/")) {
      const parent = folderRealpath(dirname(p));
      if (parent !== undefined) {
        const entry = joinName(parent, name);
        let st: ReturnType<typeof lstatSync>;
        try {
          st = lstatSync(entry, { throwIfNoEntry: false });
        } catch {
          st = undefined;
        }
        if (st !== undefined && !st.isSymbolicLink()) return entry;
      }
    }
  }
  return realpathSync.native(p);
}

/** The kernel's realpath, or `undefined` when the path does not exist. */
function realpathOrMissing(p: string, plainEntry = false): string | undefined {
  try {
    return realpathOf(p, plainEntry);
  } catch (err) {
    const code = errnoOf(err);
    if (code !== "ENOENT" && code !== "ENOTDIR") throw err;
    return undefined;
  }
}

/**
 * False if `p` certainly names no entry (lstat: ENOENT or ENOTDIR; a final
 * link is not followed). A cheap probe: lstat is one kernel walk, glibc's
 * realpath one readlink per level. Where realpath succeeds lstat does too,
 * and where lstat finds nothing realpath fails the same way (same walk). Any
 * other lstat error counts as present: realpath, called next, has the last
 * word (and throws it as before).
 */
function mayExist(p: string): boolean {
  try {
    return lstatSync(p, { throwIfNoEntry: false }) !== undefined;
  } catch (err) {
    const code = errnoOf(err);
    return code !== "ENOENT" && code !== "ENOTDIR";
  }
}

/**
 * The nearest index in `(lo, hi)` where `ok` holds, or `hi`, given that `ok`
 * is false at `lo` and, being monotone along the chain, stays true beyond the
 * first index where it holds: gallop up from `lo`, then bisect.
 */
function firstFrom(lo: number, hi: number, ok: (i: number) => boolean): number {
  for (let step = 1; lo + step < hi; step *= 2) {
    if (ok(lo + step)) {
      hi = lo + step;
      break;
    }
    lo += step;
  }
  while (hi - lo > 1) {
    const mid = (lo + hi) >>> 1;
    if (ok(mid)) hi = mid;
    else lo = mid;
  }
  return hi;
}

/** `join(dir, name)` without rescanning `dir` when the result is plain. */
function joinName(dir: string, name: string): string {
  if (name === "." || name === ".." || name === "" || dir.charCodeAt(0) !== 47) {
    return join(dir, name);
  }
  return dir === "/" ? `/${name}` : `${dir}/${name}`;
}

/**
 * Same answer as the recursive definition
 *   follow(p) = realpath(p) if it exists, else step(follow(dirname(p)), basename(p))
 * where `step` joins the name and follows a (dangling) link found there by
 * hand, but with O(log n) realpath calls and one lstat per missing level.
 * `memo` is only used at the top level (`state.hops` starts at 0 there).
 */
function follow(p: string, state: { hops: number }, memo?: RealpathMemo): string {
  const known = memo?.get(p);
  if (known !== undefined) {
    state.hops += known.hops;
    return known.real;
  }
  // The hot path: an existing, shallow path is one realpath syscall.
  if (!isDeep(p)) {
    const direct = realpathOrMissing(p);
    if (direct !== undefined) {
      memo?.set(p, { real: direct, hops: 0, absent: false });
      return direct;
    }
  }
  // realpath(p) succeeds only if lstat(p) does: skip it for a missing path
  // (on a deep path glibc's realpath costs O(depth²) kernel steps).
  let seen: ReturnType<typeof lstatSync> | "unknown";
  try {
    seen = lstatSync(p, { throwIfNoEntry: false });
  } catch (err) {
    const code = errnoOf(err);
    seen = code === "ENOENT" || code === "ENOTDIR" ? undefined : "unknown";
  }
  const plainEntry =
    seen !== undefined && seen !== "unknown" && !seen.isDirectory() && !seen.isSymbolicLink();
  const direct = seen !== undefined ? realpathOrMissing(p, plainEntry) : undefined;
  if (direct !== undefined) {
    memo?.set(p, { real: direct, hops: 0, absent: false });
    return direct;
  }
  // chain[0] = p, chain[i + 1] = dirname(chain[i]): the paths the recursion
  // visits, up to the root or to a remembered result.
  const chain: string[] = [p];
  let topKnown: MemoEntry | undefined;
  for (;;) {
    const cur = chain[chain.length - 1]!;
    const parent = dirname(cur);
    if (parent === cur) break;
    chain.push(parent);
    topKnown = memo?.get(parent);
    if (topKnown !== undefined) break;
  }
  const top = chain.length - 1;
  if (top === 0) return p; // the root itself, missing
  // Whether a chain entry resolves (realpath) or exists (lstat) is monotone:
  // the walk of a prefix is a prefix of the walk. realpath fails at index 0;
  // find the nearest index where it succeeds (or the top). The entries that
  // exist come first: no index nearer than the nearest existing one resolves.
  const reals = new Map<number, string>();
  const resolves = (i: number): boolean => {
    const r = realpathOrMissing(chain[i]!);
    if (r !== undefined) reals.set(i, r);
    return r !== undefined;
  };
  const existing = firstFrom(0, top, (i) => mayExist(chain[i]!));
  const hi = existing < top && resolves(existing) ? existing : firstFrom(existing, top, resolves);
  const hiReal = reals.get(hi);
  let cur: string;
  let absent = false;
  if (hiReal !== undefined) {
    cur = hiReal;
  } else if (topKnown !== undefined) {
    cur = topKnown.real;
    absent = topKnown.absent;
    state.hops += topKnown.hops;
  } else {
    // The root: as the recursion, its realpath, or itself if that is missing.
    cur = realpathOrMissing(chain[top]!) ?? chain[top]!;
  }
  memo?.set(chain[hi]!, { real: cur, hops: state.hops, absent });
  // Walk down the missing levels. Below a name found absent, a plain name is
  // absent too (no lstat needed: it would fail the same way).
  for (let i = hi - 1; i >= 0; i--) {
    const name = basename(chain[i]!);
    const candidate = joinName(cur, name);
    const plain = name !== "." && name !== ".." && name !== "";
    let isLink = false;
    if (!(absent && plain)) {
      absent = false;
      try {
        const st = lstatSync(candidate, { throwIfNoEntry: false });
        isLink = st?.isSymbolicLink() ?? false;
        absent = st === undefined;
      } catch (err) {
        if (errnoOf(err) !== "ENOTDIR") throw err;
        absent = true;
      }
    }
    if (!isLink) {
      cur = candidate;
    } else {
      if (++state.hops > MAX_HOPS) throw loopError();
      cur = follow(resolve(cur, readlinkSync(candidate)), state);
    }
    memo?.set(chain[i]!, { real: cur, hops: state.hops, absent });
  }
  return cur;
}
