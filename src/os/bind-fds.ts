/**
 * Pins what a confined command will see. A command can rename and replace
 * folders in its writable areas between runs, so the host paths in a bind
 * plan are not trusted as they stand:
 *
 * - every mount source a bind comes from must still be the folder (device
 *   and inode) it was when the sandbox was created;
 * - mount points are made one folder at a time through descriptors, never
 *   following a link (a planted link would have the host make folders
 *   elsewhere);
 * - each bind is opened (`O_PATH`, not following a final link), checked to
 *   be at its planned path, and handed to bubblewrap as a descriptor
 *   (`--bind-fd`), so what is checked is exactly what gets mounted.
 */
import { closeSync, constants, fstatSync, mkdirSync, openSync, readlinkSync } from "node:fs";
import { IoError } from "../errors.js";
import type { Policy } from "../sandbox/policy.js";
import { isWithin } from "../sandbox/virtual-path.js";
import type { BindPlan, MountPoint } from "./bind-plan.js";

/** Linux `O_PATH` (same value on x86_64 and arm64): a handle that reads nothing. */
const O_PATH = 0o10000000;
const OPEN_DIR = O_PATH | constants.O_NOFOLLOW | constants.O_DIRECTORY;
const OPEN_ANY = O_PATH | constants.O_NOFOLLOW;

/** Descriptors for the plan's binds (same index as `plan.steps`). */
export interface PinnedBinds {
  fds: (number | undefined)[];
  /** Closes every descriptor (after bubblewrap has started). */
  close(): void;
}

/**
 * Checks the mount sources the plan uses, creates its mount points and opens
 * a descriptor per bind.
 * @throws IoError (virtual paths only) if a source was replaced or a bind
 *   moved, or a mount point cannot be made without following a link
 */
export function pinBinds(policy: Policy, plan: BindPlan): PinnedBinds {
  checkMountSources(policy, plan);
  for (const mp of plan.mountPoints) createMountPoint(mp);
  const fds: (number | undefined)[] = [];
  let closed = false;
  // Once only: a number closed twice may by then be someone else's descriptor.
  const close = (): void => {
    if (closed) return;
    closed = true;
    for (const fd of fds) if (fd !== undefined) closeQuietly(fd);
  };
  try {
    for (const step of plan.steps) {
      if (step.kind !== "bind") {
        fds.push(undefined);
        continue;
      }
      const fd = openAt(step.host, step.file ? OPEN_ANY : OPEN_DIR);
      fds.push(fd);
      const st = fd === undefined ? undefined : fstatSync(fd);
      if (
        fd === undefined ||
        st === undefined ||
        st.isDirectory() === step.file ||
        st.isSymbolicLink() ||
        pathOf(fd) !== step.host
      )
        throw new IoError(
          `Cannot run the command: '${step.virtual}' was moved or replaced while the command was being prepared. Try again.`,
          step.virtual,
        );
    }
  } catch (err) {
    close();
    throw err;
  }
  return { fds, close };
}

/**
 * Every mount the command would see (a planned bind or mask lies inside it or
 * it inside one) must still be the folder recorded at creation. A source
 * replaced by a link leading outside would only be masked by the plan, but
 * running with a silently empty mount is worse than a clear refusal.
 */
function checkMountSources(policy: Policy, plan: BindPlan): void {
  for (const m of policy.table.mounts) {
    const seen = plan.steps.some(
      (s) => isWithin(s.virtual, m.target) || isWithin(m.target, s.virtual),
    );
    if (!seen) continue;
    const fd = openAt(m.source, OPEN_DIR);
    let same = false;
    if (fd !== undefined) {
      try {
        const st = fstatSync(fd);
        same = st.dev === m.dev && st.ino === m.ino && pathOf(fd) === m.source;
      } finally {
        closeQuietly(fd);
      }
    }
    if (!same)
      throw new IoError(
        `Cannot run the command: the folder mounted at '${m.target}' was moved or replaced since the sandbox was created; its path now leads to a different folder (or none). Create the sandbox again to use what is there now.`,
        m.target,
      );
  }
}

/** Makes `base/rest…` folder by folder through descriptors, refusing links. */
function createMountPoint(mp: MountPoint): void {
  const refuse = (): IoError =>
    new IoError(
      `Cannot run the command: the mount point for '${mp.virtual}' could not be created in its parent folder (a part of the way is missing, not a folder, or a link).`,
      mp.virtual,
    );
  let fd = openAt(mp.base, OPEN_DIR);
  if (fd === undefined || pathOf(fd) !== mp.base) {
    if (fd !== undefined) closeQuietly(fd);
    throw refuse();
  }
  try {
    for (const name of mp.rest) {
      // /proc/self/fd/N/name resolves `name` inside exactly the folder N is
      // (like mkdirat/openat), and O_NOFOLLOW refuses a link there.
      const inside = `/proc/self/fd/${fd}/${name}`;
      let next = openAt(inside, OPEN_DIR);
      if (next === undefined) {
        try {
          mkdirSync(inside, { mode: 0o755 });
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw refuse();
        }
        next = openAt(inside, OPEN_DIR);
        if (next === undefined) throw refuse();
      }
      closeQuietly(fd);
      fd = next;
    }
  } finally {
    closeQuietly(fd);
  }
}

/** Opens `path` with `flags`, or `undefined` if it cannot be (missing, a link, wrong type). */
function openAt(path: string, flags: number): number | undefined {
  try {
    return openSync(path, flags);
  } catch {
    return undefined;
  }
}

/** Where an open descriptor's object is now. */
function pathOf(fd: number): string {
  try {
    return readlinkSync(`/proc/self/fd/${fd}`);
  } catch {
    return "";
  }
}

function closeQuietly(fd: number): void {
  try {
    closeSync(fd);
  } catch {
    // already closed
  }
}
