/**
 * Real paths for targets that may not exist yet.
 *
 * `realpathLoose` returns where a host path really leads: the kernel's answer
 * when the path exists, otherwise the real location of its deepest existing
 * ancestor joined with the rest, following dangling links by hand. It is the
 * policy's prediction; the I/O layer still verifies what it actually opened.
 */
import { lstatSync, readlinkSync, realpathSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";

/** How many links may be followed by hand before giving up (as the kernel). */
const MAX_HOPS = 40;

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
 * @throws the fs error (ELOOP, EACCES, …) when it cannot be determined
 */
export function realpathLoose(hostPath: string): string {
  return follow(hostPath, { hops: 0 });
}

function follow(p: string, state: { hops: number }): string {
  try {
    return realpathSync.native(p);
  } catch (err) {
    const code = errnoOf(err);
    if (code !== "ENOENT" && code !== "ENOTDIR") throw err;
  }
  const parent = dirname(p);
  if (parent === p) return p;
  const realParent = follow(parent, state);
  const candidate = join(realParent, basename(p));
  let isLink = false;
  try {
    isLink = lstatSync(candidate, { throwIfNoEntry: false })?.isSymbolicLink() ?? false;
  } catch (err) {
    if (errnoOf(err) !== "ENOTDIR") throw err;
  }
  if (!isLink) return candidate;
  if (++state.hops > MAX_HOPS) throw loopError();
  return follow(resolve(realParent, readlinkSync(candidate)), state);
}
