/**
 * Settling a guard (see `protected-entries.ts`) when the binds are pinned:
 * what is at the guarded place then is bound read-only as it is; if nothing
 * is there, an empty placeholder is made — a folder, or an empty file for
 * a name a package manager fails to read as a folder (`.yarnrc.yml`, see
 * `protected-defaults.ts`) — and removed after the
 * command if it is still that empty folder or file.
 *
 * A placeholder is removed through a descriptor of its parent folder kept
 * from the moment it was made, never by path (issue 19, review finding D):
 * if its parent was renamed meanwhile, the placeholder is removed where it
 * is now, not left behind as an empty folder named `.npmrc` or
 * `package-lock.json` that breaks the tools there; and only the very folder
 * made (device and inode) is removed, and only if empty (`rmdir`).
 */
import {
  closeSync,
  constants,
  fstatSync,
  mkdirSync,
  openSync,
  rmdirSync,
  unlinkSync,
} from "node:fs";
import { IoError } from "../errors/index.js";
import type { BindStep, MountPoint } from "./bind-plan.js";
import { closeQuietly, OPEN_ANY, OPEN_DIR, openAt, pathOf, statQuietly } from "./fd-util.js";

/** A placeholder made by this process and not yet removed. */
export interface Placeholder {
  dev: number;
  ino: number;
  /** True for an empty file (see `BindStep.absentAsFile`), false for a folder. */
  file: boolean;
  /** How many running commands bind it: the last one removes it. */
  users: number;
  /** Descriptor of the folder it was made in (kept until it is removed). */
  parent: number;
  name: string;
  host: string;
}

/** A placeholder file: made here, never through a link, never over anything. */
const NEW_FILE = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;

/**
 * The current placeholder at each host path. A command that starts while
 * another one's placeholder exists binds the same folder; it is removed
 * when the last of them ends.
 */
const placeholders = new Map<string, Placeholder>();

/**
 * Settles the guard `step` seen through `mp`: walks to its folder from the
 * bind it is seen through, one folder at a time through descriptors (never
 * following a link; missing folders on the way are made, as for mount
 * points); sets `step.file` to what is there, making an empty placeholder if
 * nothing is. Returns the placeholder this command now holds (one of this
 * process's, made now or by a command still running), if the place is one.
 * @throws IoError if a link is in the way or the place cannot be held
 */
export function settleGuard(step: BindStep, mp: MountPoint): Placeholder | undefined {
  const name = mp.rest[mp.rest.length - 1];
  if (name === undefined) throw refuseGuard(step.virtual);
  const fd = openFolder(mp.base, mp.rest.slice(0, -1), true);
  if (fd === undefined) throw refuseGuard(step.virtual);
  let kept = false;
  try {
    const inside = `/proc/self/fd/${fd}/${name}`;
    let made = false;
    if (openAndClose(inside) === false) {
      try {
        if (step.absentAsFile === true) closeSync(openSync(inside, NEW_FILE, 0o444));
        else mkdirSync(inside, { mode: 0o755 });
        made = true;
      } catch (err) {
        // Something appeared meanwhile: it is bound read-only as it is.
        if ((err as NodeJS.ErrnoException).code !== "EEXIST")
          throw new IoError(
            `Cannot run the command: '${step.virtual}' is protected and absent, and it could not be held read-only for the command (its folder cannot be written by the host now; if a command changed its permissions, restore them, e.g. chmod u+rwx). The command was not run.`,
            step.virtual,
          );
      }
    }
    const there = openAt(inside, OPEN_ANY);
    if (there === undefined) throw refuseGuard(step.virtual);
    let st: ReturnType<typeof fstatSync>;
    try {
      st = fstatSync(there);
    } finally {
      closeQuietly(there);
    }
    if (st.isSymbolicLink()) throw refuseGuard(step.virtual);
    step.file = !st.isDirectory();
    if (made) {
      const p: Placeholder = {
        dev: st.dev,
        ino: st.ino,
        file: step.file,
        users: 1,
        parent: fd,
        name,
        host: step.host,
      };
      placeholders.set(step.host, p);
      kept = true;
      return p;
    }
    const known = placeholders.get(step.host);
    if (known !== undefined && known.dev === st.dev && known.ino === st.ino) {
      known.users++;
      return known;
    }
    return undefined;
  } finally {
    if (!kept) closeQuietly(fd);
  }
}

/**
 * One command is done with a placeholder: the last one removes it, through
 * the descriptor of the folder it was made in, if it is still the empty
 * folder made.
 */
export function dropPlaceholder(p: Placeholder): void {
  p.users--;
  if (p.users > 0) return;
  if (placeholders.get(p.host) === p) placeholders.delete(p.host);
  const inside = `/proc/self/fd/${p.parent}/${p.name}`;
  try {
    const st = statQuietly(inside, true);
    const same = st !== undefined && st.dev === p.dev && st.ino === p.ino;
    // rmdir removes only an empty folder, and never follows a link; the
    // file is removed only while it is still the empty one made.
    if (same && !p.file && st.isDirectory()) rmdirSync(inside);
    if (same && p.file && st.isFile() && st.size === 0) unlinkSync(inside);
  } catch {
    // not empty any more, or gone: left as it is
  } finally {
    closeQuietly(p.parent);
  }
}

/**
 * True if the place at `host` is a placeholder this process made and has
 * not removed (a guard on it keeps it until its last command is done).
 */
export function isPlaceholder(host: string): boolean {
  const p = placeholders.get(host);
  if (p === undefined) return false;
  const st = statQuietly(host, true);
  return st !== undefined && st.dev === p.dev && st.ino === p.ino;
}

function openAndClose(path: string): boolean {
  const fd = openAt(path, OPEN_ANY);
  if (fd === undefined) return false;
  closeQuietly(fd);
  return true;
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
