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
import { fstatSync, mkdirSync } from "node:fs";
import { IoError } from "../errors/index.js";
import type { Policy } from "../sandbox/policy.js";
import { isWithin } from "../sandbox/virtual-path.js";
import type { BindPlan, MountPoint } from "./bind-plan.js";
import { closeQuietly, OPEN_ANY, OPEN_DIR, openAt, pathOf } from "./fd-util.js";
import { dropPlaceholder, type Placeholder, settleGuard } from "./guard-settle.js";

/** Descriptors for the plan's binds (same index as `plan.steps`). */
export interface PinnedBinds {
  fds: (number | undefined)[];
  /** Closes every descriptor (after bubblewrap has started). */
  close(): void;
  /** Removes the placeholders this run made, if still unused and empty (after the command). */
  release(): void;
}

/**
 * Refuses a plan with a place that must be read-only but cannot be held
 * (a link in its way), or a repository whose git files cannot be read
 * safely (what the host's git would run from cannot be told then). Shared
 * with the macOS sandbox, which holds the same places with deny rules.
 * @throws IoError (virtual paths only)
 */
export function refuseUnsafePlan(plan: BindPlan): void {
  const git = plan.gitUnreadable[0];
  if (git !== undefined)
    throw new IoError(
      `Cannot run the command: what git would run from in the repository holding '${git}' cannot be told: a submodule's git files (its '.git' file, index or config) are not plain files as git writes them (a FIFO, a link or an oversized file), or a submodule's '.git' file leads outside the repository's own git folder. The command was not run. Check the submodules with the host's git (\`git submodule status\`; \`git submodule absorbgitdirs\` moves their git folders where they belong) and remove what a command left there, then try again.`,
      git,
    );
  const first = plan.unsafe[0];
  if (first !== undefined)
    throw new IoError(
      `Cannot run the command: '${first}' must be read-only inside a writable folder, but a link or something else is in its way (perhaps made by a command running at the same time). The command was not run.`,
      first,
    );
}

/**
 * Checks the mount sources the plan uses, creates its mount points and opens
 * a descriptor per bind.
 * @throws IoError (virtual paths only) if a source was replaced or a bind
 *   moved, or a mount point cannot be made without following a link
 */
export function pinBinds(policy: Policy, plan: BindPlan): PinnedBinds {
  checkMountSources(policy, plan);
  refuseUnsafePlan(plan);
  const held: Placeholder[] = [];
  let released = false;
  const release = (): void => {
    if (released) return;
    released = true;
    for (const p of held) dropPlaceholder(p);
  };
  const fds: (number | undefined)[] = [];
  try {
    // Guards are settled now, not when planned: whatever is there is bound
    // read-only, or a placeholder is made; a placeholder of another command
    // that ended meanwhile is no reason to fail (nor to leave a place open).
    for (const step of plan.steps) {
      if (step.kind !== "bind" || step.placeholder !== true) continue;
      const mp = plan.mountPoints.find((m) => m.virtual === step.virtual);
      if (mp === undefined)
        throw new IoError(
          `Cannot run the command: '${step.virtual}' must be read-only for the command, but its place could not be found. The command was not run.`,
          step.virtual,
        );
      const p = settleGuard(step, mp);
      if (p !== undefined) held.push(p);
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
