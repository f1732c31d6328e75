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
import {
  closeSync,
  constants,
  fstatSync,
  mkdirSync,
  openSync,
  readlinkSync,
  rmdirSync,
} from "node:fs";
import { IoError } from "../errors/index.js";
import type { Policy } from "../sandbox/policy.js";
import { isWithin } from "../sandbox/virtual-path.js";
import type { BindPlan, BindStep, MountPoint } from "./bind-plan.js";

/** Linux `O_PATH` (same value on x86_64 and arm64): a handle that reads nothing. */
const O_PATH = 0o10000000;
const OPEN_DIR = O_PATH | constants.O_NOFOLLOW | constants.O_DIRECTORY;
const OPEN_ANY = O_PATH | constants.O_NOFOLLOW;

/** Descriptors for the plan's binds (same index as `plan.steps`). */
export interface PinnedBinds {
  fds: (number | undefined)[];
  /** Closes every descriptor (after bubblewrap has started). */
  close(): void;
  /** Removes the placeholders this run made, if still unused and empty (after the command). */
  release(): void;
}

/**
 * Placeholders made by this process and not yet removed, by host path: the
 * folder's identity and how many running commands bind it. A command that
 * starts while another one's placeholder exists binds the same folder; it
 * is removed when the last of them ends.
 */
const placeholders = new Map<string, { dev: number; ino: number; users: number }>();

/**
 * Checks the mount sources the plan uses, creates its mount points and opens
 * a descriptor per bind.
 * @throws IoError (virtual paths only) if a source was replaced or a bind
 *   moved, or a mount point cannot be made without following a link
 */
export function pinBinds(policy: Policy, plan: BindPlan): PinnedBinds {
  checkMountSources(policy, plan);
  const first = plan.unsafe[0];
  if (first !== undefined)
    throw new IoError(
      `Cannot run the command: '${first}' must be read-only inside a writable folder, but a link or something else is in its way (perhaps made by a command running at the same time). The command was not run.`,
      first,
    );
  const held: string[] = [];
  let released = false;
  const release = (): void => {
    if (released) return;
    released = true;
    for (const host of held) dropPlaceholder(host);
  };
  const fds: (number | undefined)[] = [];
  try {
    // Guards are settled now, not when planned: whatever is there is bound
    // read-only, or a placeholder is made; a placeholder of another command
    // that ended meanwhile is no reason to fail (nor to leave a place open).
    for (const step of plan.steps) {
      if (step.kind !== "bind" || step.placeholder !== true) continue;
      const mp = plan.mountPoints.find((m) => m.virtual === step.virtual);
      if (mp === undefined) throw refuseGuard(step.virtual);
      settleGuard(step, mp);
      const p = placeholders.get(step.host);
      if (p === undefined || step.file) continue;
      const st = statQuietly(step.host, true);
      if (st !== undefined && st.dev === p.dev && st.ino === p.ino) {
        p.users++;
        held.push(step.host);
      }
    }
    for (const mp of plan.mountPoints) walkMountPoint(mp);
  } catch (err) {
    release();
    throw err;
  }
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
    release();
    throw err;
  }
  return { fds, close, release };
}

/**
 * Settles a guard (see `protected-entries.ts`): walks to its folder from the
 * bind it is seen through, one folder at a time through descriptors (never
 * following a link; missing folders on the way are made, as for mount
 * points); what is at the place is then bound read-only as it is (its
 * `file` set to match), and if nothing is there an empty folder is made.
 * @throws IoError if a link is in the way or the place cannot be held
 */
function settleGuard(step: BindStep, mp: MountPoint): void {
  const name = mp.rest[mp.rest.length - 1];
  if (name === undefined) throw refuseGuard(step.virtual);
  const fd = openFolder(mp.base, mp.rest.slice(0, -1), true);
  if (fd === undefined) throw refuseGuard(step.virtual);
  try {
    const inside = `/proc/self/fd/${fd}/${name}`;
    let there = openAt(inside, OPEN_ANY);
    if (there === undefined) {
      let made = false;
      try {
        mkdirSync(inside, { mode: 0o755 });
        made = true;
      } catch (err) {
        // Something appeared meanwhile: it is bound read-only as it is.
        if ((err as NodeJS.ErrnoException).code !== "EEXIST")
          throw new IoError(
            `Cannot run the command: '${step.virtual}' is protected and absent, and it could not be held read-only for the command (its folder cannot be written by the host now; if a command changed its permissions, restore them, e.g. chmod u+rwx). The command was not run.`,
            step.virtual,
          );
      }
      there = openAt(inside, OPEN_ANY);
      if (there === undefined) throw refuseGuard(step.virtual);
      try {
        const st = fstatSync(there);
        const known = placeholders.get(step.host);
        if (made && st.isDirectory() && (known?.ino !== st.ino || known.dev !== st.dev))
          placeholders.set(step.host, { dev: st.dev, ino: st.ino, users: 0 });
      } finally {
        closeQuietly(there);
      }
      there = openAt(inside, OPEN_ANY);
      if (there === undefined) throw refuseGuard(step.virtual);
    }
    try {
      const st = fstatSync(there);
      if (st.isSymbolicLink()) throw refuseGuard(step.virtual);
      step.file = !st.isDirectory();
    } finally {
      closeQuietly(there);
    }
  } finally {
    closeQuietly(fd);
  }
}

function refuseGuard(virtual: string): IoError {
  return new IoError(
    `Cannot run the command: '${virtual}' must be read-only for the command, but a link or something else is in its way (perhaps made by a command running at the same time). The command was not run.`,
    virtual,
  );
}

/**
 * Opens `base/rest…` folder by folder through descriptors, refusing links;
 * missing folders are made if `create`. `undefined` if it cannot be.
 */
function openFolder(base: string, rest: readonly string[], create: boolean): number | undefined {
  let fd = openAt(base, OPEN_DIR);
  if (fd === undefined || pathOf(fd) !== base) {
    if (fd !== undefined) closeQuietly(fd);
    return undefined;
  }
  for (const name of rest) {
    // /proc/self/fd/N/name resolves `name` inside exactly the folder N is
    // (like mkdirat/openat), and O_NOFOLLOW refuses a link there.
    const inside = `/proc/self/fd/${fd}/${name}`;
    let next = openAt(inside, OPEN_DIR);
    if (next === undefined && create) {
      try {
        mkdirSync(inside, { mode: 0o755 });
      } catch {
        // made meanwhile, or cannot be: the open below tells
      }
      next = openAt(inside, OPEN_DIR);
    }
    closeQuietly(fd);
    if (next === undefined) return undefined;
    fd = next;
  }
  return fd;
}

/** One command is done with a placeholder: the last one removes it if it is still the empty folder made. */
function dropPlaceholder(host: string): void {
  const p = placeholders.get(host);
  if (p === undefined) return;
  p.users--;
  if (p.users > 0) return;
  placeholders.delete(host);
  const cut = host.lastIndexOf("/");
  const parent = cut <= 0 ? "/" : host.slice(0, cut);
  const fd = openAt(parent, OPEN_DIR);
  if (fd === undefined) return;
  try {
    if (pathOf(fd) !== parent) return;
    const inside = `/proc/self/fd/${fd}/${host.slice(cut + 1)}`;
    const st = statQuietly(inside, true);
    // rmdir removes only an empty folder, and never follows a link.
    if (st?.isDirectory() && st.dev === p.dev && st.ino === p.ino) rmdirSync(inside);
  } catch {
    // not empty any more, or gone: left as it is
  } finally {
    closeQuietly(fd);
  }
}

function statQuietly(path: string, noFollow = false) {
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

/**
 * Walks `base/rest…` folder by folder through descriptors, refusing links;
 * a missing last folder is made if `mp.create`, so that bubblewrap never
 * has to make one on the host side.
 */
function walkMountPoint(mp: MountPoint): void {
  const refuse = (): IoError =>
    new IoError(
      `Cannot run the command: the mount point for '${mp.virtual}' could not be ${mp.create ? "created" : "checked"} in its parent folder (a part of the way is missing, not a folder, or a link).`,
      mp.virtual,
    );
  let fd = openAt(mp.base, OPEN_DIR);
  if (fd === undefined || pathOf(fd) !== mp.base) {
    if (fd !== undefined) closeQuietly(fd);
    throw refuse();
  }
  try {
    for (const [i, name] of mp.rest.entries()) {
      // /proc/self/fd/N/name resolves `name` inside exactly the folder N is
      // (like mkdirat/openat), and O_NOFOLLOW refuses a link there.
      const inside = `/proc/self/fd/${fd}/${name}`;
      if (i === mp.rest.length - 1 && !mp.create) {
        // The place itself (a folder or a file): present and not a link.
        const last = openAt(inside, OPEN_ANY);
        if (last === undefined) throw refuse();
        try {
          if (fstatSync(last).isSymbolicLink()) throw refuse();
        } finally {
          closeQuietly(last);
        }
        break;
      }
      let next = openAt(inside, OPEN_DIR);
      if (next === undefined) {
        if (!mp.create) throw refuse();
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
