/**
 * Descriptor helpers for pinning binds (`bind-fds.ts`, `guard-settle.ts`):
 * open without following links, where a descriptor's object is now, close
 * quietly.
 */
import { closeSync, constants, fstatSync, openSync, readlinkSync, type Stats } from "node:fs";

/** Linux `O_PATH` (same value on x86_64 and arm64): a handle that reads nothing. */
export const O_PATH = 0o10000000;
/** A folder, not following a final link. */
export const OPEN_DIR = O_PATH | constants.O_NOFOLLOW | constants.O_DIRECTORY;
/** Anything, not following a final link. */
export const OPEN_ANY = O_PATH | constants.O_NOFOLLOW;

/** Opens `path` with `flags`, or `undefined` if it cannot be (missing, a link, wrong type). */
export function openAt(path: string, flags: number): number | undefined {
  try {
    return openSync(path, flags);
  } catch {
    return undefined;
  }
}

/** Where an open descriptor's object is now. */
export function pathOf(fd: number): string {
  try {
    return readlinkSync(`/proc/self/fd/${fd}`);
  } catch {
    return "";
  }
}

/** Closes `fd`, ignoring a descriptor already closed. */
export function closeQuietly(fd: number): void {
  try {
    closeSync(fd);
  } catch {
    // already closed
  }
}

/** What is at `path` (a final link not followed if `noFollow`), or `undefined`. */
export function statQuietly(path: string, noFollow = false): Stats | undefined {
  const fd = openAt(path, noFollow ? OPEN_ANY : O_PATH);
  if (fd === undefined) return undefined;
  try {
    return fstatSync(fd);
  } catch {
    return undefined;
  } finally {
    closeQuietly(fd);
  }
}
