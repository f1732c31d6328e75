/**
 * Checks made on what was actually opened, not on what a path said.
 *
 * Node has no openat/renameat, so between `resolve` and `open` another local
 * process could swap a path component for a link. Every open here uses
 * O_NOFOLLOW (the last component cannot be a link) and O_NONBLOCK (a FIFO
 * cannot hang us), and the descriptor's real path is then mapped back and
 * checked against the policy before a byte moves.
 */
import {
  closeSync,
  constants,
  fstatSync,
  openSync,
  readlinkSync,
  realpathSync,
  type Stats,
  statSync,
} from "node:fs";
import { wrapFsError } from "../errors/index.js";
import type { Access, Policy, Resolved } from "./policy.js";

const O_NOFOLLOW = constants.O_NOFOLLOW ?? 0;
const O_NONBLOCK = constants.O_NONBLOCK ?? 0;
/** Flags for opening an existing file or directory to read or inspect it. */
export const READ_FLAGS = constants.O_RDONLY | O_NOFOLLOW | O_NONBLOCK;
/** Flags for creating a fresh temp file that must not exist yet. */
export const CREATE_FLAGS = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | O_NOFOLLOW;

/** Linux: a descriptor's real path can be read from /proc/self/fd. */
export const HAS_PROC_FD = process.platform === "linux";

type Hook = (stage: "before-open" | "before-rename", realPath: string) => void;
let testHook: Hook | undefined;

/**
 * @internal Test seam: runs at the race windows (after resolve, before open;
 * after writing, before rename) so tests can swap files for links there.
 */
export function setRaceHookForTests(hook: Hook | undefined): void {
  testHook = hook;
}

/** @internal Calls the test seam, if set. */
export function runRaceHook(stage: "before-open" | "before-rename", realPath: string): void {
  testHook?.(stage, realPath);
}

/**
 * The real path of an open descriptor. On Linux from `/proc/self/fd/N`;
 * elsewhere the expected path is realpath'd and must be the same inode.
 * @returns `undefined` if it cannot be established (treat as refused)
 */
export function realPathOfFd(fd: number, expected: string, st: Stats): string | undefined {
  if (HAS_PROC_FD) {
    try {
      const p = readlinkSync(`/proc/self/fd/${fd}`);
      return p.endsWith(" (deleted)") ? undefined : p;
    } catch {
      // /proc not mounted: fall through to the portable check
    }
  }
  try {
    const real = realpathSync.native(expected);
    const again = statSync(real);
    return again.ino === st.ino && again.dev === st.dev ? real : undefined;
  } catch {
    return undefined;
  }
}

/** An opened, verified descriptor. Close it with `closeSync(fd)`. */
export interface VerifiedFd {
  fd: number;
  stats: Stats;
  /** Real path of the descriptor. */
  real: string;
  /** Virtual location of that real path. */
  realVirtual: string;
}

/**
 * Opens a resolved path (O_NOFOLLOW|O_NONBLOCK), then checks that what was
 * opened maps back to a location permitted for `access`.
 * @throws SandboxError; the descriptor is closed on any failure
 */
export function openVerified(
  policy: Policy,
  r: Resolved,
  access: Access,
  checkSuffix: boolean,
): VerifiedFd {
  runRaceHook("before-open", r.real);
  let fd: number;
  try {
    fd = openSync(r.real, READ_FLAGS);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    // ELOOP under O_NOFOLLOW: the path became a link after it was checked.
    if (code === "ELOOP") throw policy.linkError(r.virtual, access, undefined);
    // A socket cannot be opened; report it like other special files.
    if (code === "ENOENT") throw policy.notFoundError(r.virtual);
    if (code === "ENXIO")
      throw wrapFsError(Object.assign(new Error(), { code: "EINVAL" }), "open", r.virtual);
    throw wrapFsError(err, "open", r.virtual);
  }
  try {
    const stats = fstatSync(fd);
    const real = realPathOfFd(fd, r.real, stats);
    if (real === undefined) throw policy.linkError(r.virtual, access, undefined);
    const realVirtual = policy.checkReal(real, r.virtual, access, checkSuffix && stats.isFile());
    // The directory exemption from the suffix rule was decided before the
    // open; what was opened may be a file swapped in since.
    if (checkSuffix && stats.isFile()) {
      const m = policy.table.lookup(r.virtual);
      if (m && !policy.table.suffixAllowed(m, r.virtual))
        throw policy.denialError("suffix", r.virtual, access);
    }
    return { fd, stats, real, realVirtual };
  } catch (err) {
    closeSync(fd);
    throw wrapFsError(err, "open", r.virtual);
  }
}
