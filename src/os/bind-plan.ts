/**
 * The bind plan: which host folders and files a confined command sees under
 * `/workspace`, and whether each is writable.
 *
 * The plan is computed from the policy alone (plus a few `lstat`s), so what the
 * kernel enforces is exactly what the in-process checks permit, at area
 * granularity: every readable area is bound at `/workspace<virtual>`, read-only
 * unless the policy lets it be written; mounts nested inside an area are bound
 * over it (deeper binds overlay shallower ones); anything no area covers is
 * simply absent. The plan holds host paths: it never leaves the host process.
 */
import { setCovers } from "../sandbox/areas.js";
import type { Policy } from "../sandbox/policy.js";
import { isWithin } from "../sandbox/virtual-path.js";
import { hasLinkOnTheWay, readKind } from "./host-lookup.js";
import { addPillars } from "./pillars.js";
import {
  findEnclosingStep,
  joinHost,
  sortShallowFirst,
  sortStepsShallowFirst,
  splitBelow,
} from "./plan-steps.js";
import { dropHiddenGuards, planProtectedEntries } from "./protected-entries.js";

/** Where the sandbox's virtual `/` appears inside a confined command. */
export const WORKSPACE = "/workspace";

/** One mount of the plan, in the order it must be made. */
export interface BindStep {
  /**
   * `bind`: the host path appears at the virtual path. `mask`: an empty,
   * read-only placeholder hides what a shallower bind would otherwise show.
   */
  kind: "bind" | "mask";
  /** Canonical virtual path (`/` for the root). */
  virtual: string;
  /** Real host path (`bind` only; empty for `mask`). */
  host: string;
  /** True if the command may write here (`bind` only). */
  writable: boolean;
  /** True if this is a single file rather than a folder. */
  file: boolean;
  /**
   * True for a guard (see `protected-entries.ts`): a protected place inside
   * a writable bind, bound read-only as it is when the binds are pinned, or,
   * if absent then, as an empty read-only folder made for the command
   * (removed afterwards if still empty), so the command cannot create it.
   * Its `file` is settled when pinned (`bind` only).
   */
  placeholder?: boolean;
  /**
   * For a guard: hold an absent place with an empty read-only file rather
   * than a folder (`.yarnrc.yml`, which yarn fails to read as a folder:
   * see `protected-defaults.ts`).
   */
  absentAsFile?: boolean;
  /**
   * True for a pillar (see `pillars.ts`): a folder between the top of a
   * writable bind and a guard, bound onto itself read-write so that the
   * command cannot rename or remove it.
   */
  pillar?: boolean;
}

/** A point the plan left out, and why (virtual paths only). */
export interface SkippedPoint {
  virtual: string;
  reason: "write-only" | "missing" | "refused" | "link-in-parent" | "type-mismatch";
}

/**
 * The place of a mount inside a parent bind: checked (and, if `create`,
 * made) folder by folder through descriptors before bubblewrap runs, so
 * bubblewrap never has to make a folder on the host side.
 */
export interface MountPoint {
  /** Host folder of the parent bind. */
  base: string;
  /** Path components below `base`, walked one by one without following links. */
  rest: string[];
  /** Virtual path of the mount (for messages). */
  virtual: string;
  /** True if the last component may be missing and is then made (a folder). */
  create: boolean;
}

/** The full plan for one sandbox. */
export interface BindPlan {
  /** Mounts, shallow first, so deeper ones overlay. */
  steps: BindStep[];
  /**
   * The place of every mount that lies inside a shallower bind. Missing
   * folders among them are created before the command runs, as Docker does,
   * never through a link; existing ones are checked to be no link.
   */
  mountPoints: MountPoint[];
  /** Points not bound, for diagnostics and tests. */
  skipped: SkippedPoint[];
  /**
   * Virtual paths that must be read-only (a read-only mount, its source's
   * second place, a protected entry) inside a writable bind but could not be
   * bound as such (a link or something else in the way). A command must not
   * run then: the place would be writable (see `pinBinds`).
   */
  unsafe: string[];
  /**
   * Virtual paths of writable folder binds whose repository's git files
   * (a submodule's gitfile, index or config) are not what git writes: a
   * FIFO, a link, an oversized file, or a submodule's git folder outside
   * the repository's own. What git would run from cannot be told, so a
   * command must not run then (see `git-places.ts`).
   */
  gitUnreadable: string[];
}

/** The path a virtual path has inside a confined command. */
export function toWorkspacePath(virtual: string): string {
  return virtual === "/" ? WORKSPACE : `${WORKSPACE}${virtual}`;
}

/**
 * Computes the bind plan for a policy.
 *
 * Points: every read and write area root, every mount target inside a read
 * area, every read-only mount target inside a write area, every place where a
 * mount's source is also visible through another mount (so the most specific
 * mount's flags win, as in the policy), and guards at every place a
 * writable folder is bound (both places of a folder seen through two
 * mounts): protected names (such as `.git`) at its top, absolute protected
 * paths inside it, and what the host's git executes from (submodules'
 * `.git`, `.gitmodules`, a `core.hooksPath` in the work tree) — present or
 * absent (see `protected-entries.ts`). Protected names deeper than the top
 * of a bind are only enforced in-process.
 */
export function planBinds(policy: Policy): BindPlan {
  const points = new Map<string, boolean>();
  // A mount's source seen through another mount (its second place): true
  // if the mount is read-only. Leaving a mount's target out only hides the
  // mount; leaving its second place out inside a writable bind would make
  // its source writable there (or its protected entries).
  const secondPlaces = new Map<string, boolean>();
  const add = (v: string, exact: boolean, second?: boolean): void => {
    if (!points.has(v)) points.set(v, exact);
    if (second !== undefined) secondPlaces.set(v, second || secondPlaces.get(v) === true);
  };
  for (const a of policy.read) add(a.path, a.exact);
  for (const a of policy.write) add(a.path, a.exact);
  const mounts = policy.table.mounts;
  for (const m of mounts) {
    if (setCovers(policy.read, m.target)) add(m.target, false);
    else if (m.readonly && setCovers(policy.write, m.target)) add(m.target, false);
  }
  // A mount whose source lies inside another mount's source is also visible
  // at a second virtual location; the policy maps it back to the most
  // specific mount, so the kernel view must overlay that spot too.
  for (const inner of mounts) {
    for (const outer of mounts) {
      if (inner === outer || inner.source === outer.source) continue;
      if (!isWithin(inner.source, outer.source)) continue;
      const rest = outer.source === "/" ? inner.source : inner.source.slice(outer.source.length);
      const v = outer.target === "/" ? rest : outer.target + rest;
      if (policy.table.lookup(v) === outer && setCovers(policy.read, v))
        add(v, false, inner.readonly);
    }
  }

  const steps: BindStep[] = [];
  const skipped: SkippedPoint[] = [];
  const mountPoints: MountPoint[] = [];
  const unsafe: string[] = [];
  const gitUnreadable: string[] = [];
  const ordered = sortShallowFirst([...points.keys()]);
  const queue = [...ordered];
  const seen = new Set(queue);
  const protect = (place: BindStep): void => {
    for (const extra of planProtectedEntries(policy, place, unsafe, gitUnreadable)) {
      if (seen.has(extra.virtual)) continue;
      seen.add(extra.virtual);
      // Walked from the bind bubblewrap resolves it through (for a second
      // place, the bind above it, not the place itself).
      const above = findEnclosingStep(steps, extra.virtual);
      steps.push(extra);
      if (above?.kind === "bind")
        mountPoints.push({
          base: above.host,
          rest: splitBelow(above, extra.virtual),
          virtual: extra.virtual,
          create: false,
        });
    }
  };
  while (queue.length > 0) {
    const v = queue.shift()!;
    const parent = findEnclosingStep(steps, v);
    const step = planPoint(policy, v, points.get(v) ?? false, steps, skipped, mountPoints);
    // A second place inside a writable bind that could not be planned (a
    // link on its way, say, perhaps only for a moment while another command
    // swaps folders) would be writable, unprotected: never run like that.
    const readOnlySource = secondPlaces.get(v);
    if (
      readOnlySource !== undefined &&
      parent?.kind === "bind" &&
      parent.writable &&
      (step === undefined ||
        (readOnlySource && ("samePlace" in step || (step.kind === "bind" && step.writable))))
    ) {
      unsafe.push(v);
      continue;
    }
    if (step === undefined) continue;
    if ("samePlace" in step) {
      // Shown by its parent bind already, but it is a place where a writable
      // folder is bound too: its protected entries need protecting here as well.
      protect(step.samePlace);
      continue;
    }
    steps.push(step);
    if (step.kind === "bind" && step.writable && !step.file) protect(step);
  }
  dropHiddenGuards(steps, mountPoints);
  addPillars(steps, mountPoints);
  return { steps: sortStepsShallowFirst(steps), mountPoints, skipped, unsafe, gitUnreadable };
}

/**
 * Plans one point below the steps `done` so far: a bind, a mask, nothing
 * (recorded in `skipped`), or `samePlace` when its parent bind already shows
 * it as it is; adds its mount point, if any, to `mountPoints`.
 */
function planPoint(
  policy: Policy,
  v: string,
  exact: boolean,
  done: readonly BindStep[],
  skipped: SkippedPoint[],
  mountPoints: MountPoint[],
): BindStep | { samePlace: BindStep } | undefined {
  const parent = findEnclosingStep(done, v);
  let real: string;
  try {
    real = policy.resolveVirtual(v, "read", false).real;
  } catch {
    if (
      policy.deny(v, "read", false) !== undefined &&
      policy.deny(v, "write", false) === undefined
    ) {
      // Write-only areas cannot be expressed as a mount: skipped (documented).
      skipped.push({ virtual: v, reason: "write-only" });
      return undefined;
    }
    // The real location is refused (e.g. a link leading outside). If a
    // shallower bind would show it anyway, hide it behind an empty mask.
    if (parent?.kind === "mask")
      return { kind: "mask", virtual: v, host: "", writable: false, file: false };
    if (parent !== undefined) {
      const rest = splitBelow(parent, v);
      // A link on the way, or at the place itself, would have bubblewrap
      // (perhaps as root) make the mask's folder wherever it leads. Inside
      // the command a link resolves in the command's own view, which shows
      // only what the sandbox permits: nothing to hide there.
      const there = readKind(joinHost(parent, v));
      if (hasLinkOnTheWay(parent.host, rest) || there === "link") {
        skipped.push({ virtual: v, reason: "link-in-parent" });
        return undefined;
      }
      if (there === undefined) {
        // Nothing there to hide.
        skipped.push({ virtual: v, reason: "missing" });
        return undefined;
      }
      mountPoints.push({ base: parent.host, rest, virtual: v, create: false });
      return { kind: "mask", virtual: v, host: "", writable: false, file: there === "file" };
    }
    skipped.push({ virtual: v, reason: "refused" });
    return undefined;
  }
  const kind = readKind(real);
  if (kind === undefined || kind === "link") {
    skipped.push({ virtual: v, reason: "missing" });
    return undefined;
  }
  let writable = policy.deny(v, "write", false) === undefined;
  if (writable) {
    try {
      policy.resolveVirtual(v, "write", false);
    } catch {
      writable = false;
    }
  }
  const file = kind === "file" || (exact && kind !== "dir");
  if (parent !== undefined && parent.kind === "bind") {
    const at = joinHost(parent, v);
    // Same place with the same access: the parent bind already shows it.
    if (at === real && parent.writable === writable)
      return writable && !file
        ? { samePlace: { kind: "bind", virtual: v, host: real, writable, file } }
        : undefined;
    const rest = splitBelow(parent, v);
    // A link on the way (planted by a command, perhaps) would lead the mount
    // point, and the folders made for it, elsewhere: leave the mount out.
    if (hasLinkOnTheWay(parent.host, rest)) {
      skipped.push({ virtual: v, reason: "link-in-parent" });
      return undefined;
    }
    const there = readKind(at);
    if (there === undefined) {
      if (file) {
        skipped.push({ virtual: v, reason: "missing" });
        return undefined;
      }
      mountPoints.push({ base: parent.host, rest, virtual: v, create: true });
    } else if (there === "link") {
      // Mounting over a link would follow it: leave the link as it is.
      skipped.push({ virtual: v, reason: "link-in-parent" });
      return undefined;
    } else if ((there === "file") !== file) {
      skipped.push({ virtual: v, reason: "type-mismatch" });
      return undefined;
    } else {
      mountPoints.push({ base: parent.host, rest, virtual: v, create: false });
    }
  }
  return { kind: "bind", virtual: v, host: real, writable, file };
}
