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
import { lstatSync, readdirSync } from "node:fs";
import { setCovers } from "../sandbox/areas.js";
import type { Policy } from "../sandbox/policy.js";
import { isWithin } from "../sandbox/virtual-path.js";

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
}

/** A point the plan left out, and why (virtual paths only). */
export interface SkippedPoint {
  virtual: string;
  reason: "write-only" | "missing" | "refused" | "link-in-parent" | "type-mismatch";
}

/** A mount-point folder to create inside a parent bind before the command runs. */
export interface MountPoint {
  /** Host folder of the parent bind. */
  base: string;
  /** Path components below `base`, created one by one without following links. */
  rest: string[];
  /** Virtual path of the mount (for messages). */
  virtual: string;
}

/** The full plan for one sandbox. */
export interface BindPlan {
  /** Mounts, shallow first, so deeper ones overlay. */
  steps: BindStep[];
  /**
   * Folders that must exist as mount points inside a shallower bind and do
   * not yet (a mount whose target has no folder in the parent area). They
   * are created before the command runs, as Docker does, never through a link.
   */
  mountPoints: MountPoint[];
  /** Points not bound, for diagnostics and tests. */
  skipped: SkippedPoint[];
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
 * mount's flags win, as in the policy), and existing protected entries (such
 * as `.git`) at the top of each writable bind, which are bound read-only.
 * Deeper protected folders are only enforced in-process.
 */
export function planBinds(policy: Policy): BindPlan {
  const points = new Map<string, boolean>();
  const add = (v: string, exact: boolean): void => {
    if (!points.has(v)) points.set(v, exact);
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
      if (policy.table.lookup(v) === outer && setCovers(policy.read, v)) add(v, false);
    }
  }

  const steps: BindStep[] = [];
  const skipped: SkippedPoint[] = [];
  const mountPoints: MountPoint[] = [];
  const ordered = sortShallowFirst([...points.keys()]);
  const queue = [...ordered];
  const seen = new Set(queue);
  while (queue.length > 0) {
    const v = queue.shift()!;
    const step = planPoint(policy, v, points.get(v) ?? false, steps, skipped, mountPoints);
    if (step === undefined) continue;
    steps.push(step);
    if (step.kind === "bind" && step.writable && !step.file) {
      for (const extra of protectedEntries(policy, step)) {
        if (seen.has(extra.virtual)) continue;
        seen.add(extra.virtual);
        steps.push(extra);
      }
    }
  }
  return { steps: sortStepsShallowFirst(steps), mountPoints, skipped };
}

function planPoint(
  policy: Policy,
  v: string,
  exact: boolean,
  done: readonly BindStep[],
  skipped: SkippedPoint[],
  mountPoints: MountPoint[],
): BindStep | undefined {
  const parent = nearestAncestor(done, v);
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
    if (parent !== undefined) {
      const file = parent.kind === "bind" && kindOf(joinHost(parent, v)) === "file";
      return { kind: "mask", virtual: v, host: "", writable: false, file };
    }
    skipped.push({ virtual: v, reason: "refused" });
    return undefined;
  }
  const kind = kindOf(real);
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
    if (at === real && parent.writable === writable) return undefined;
    const rest = (parent.virtual === "/" ? v : v.slice(parent.virtual.length)).split("/").slice(1);
    // A link on the way (planted by a command, perhaps) would lead the mount
    // point, and the folders made for it, elsewhere: leave the mount out.
    if (hasLinkOnTheWay(parent.host, rest)) {
      skipped.push({ virtual: v, reason: "link-in-parent" });
      return undefined;
    }
    const there = kindOf(at);
    if (there === undefined) {
      if (file) {
        skipped.push({ virtual: v, reason: "missing" });
        return undefined;
      }
      mountPoints.push({ base: parent.host, rest, virtual: v });
    } else if (there === "link") {
      // Mounting over a link would follow it: leave the link as it is.
      skipped.push({ virtual: v, reason: "link-in-parent" });
      return undefined;
    } else if ((there === "file") !== file) {
      skipped.push({ virtual: v, reason: "type-mismatch" });
      return undefined;
    }
  }
  return { kind: "bind", virtual: v, host: real, writable, file };
}

/** Existing protected entries (e.g. `.git`) directly inside a writable bind. */
function protectedEntries(policy: Policy, step: BindStep): BindStep[] {
  const out: BindStep[] = [];
  let names: string[];
  try {
    names = readdirSync(step.host);
  } catch {
    return out;
  }
  for (const name of names) {
    const v = step.virtual === "/" ? `/${name}` : `${step.virtual}/${name}`;
    if (!policy.table.isProtected(v)) continue;
    const host = `${step.host === "/" ? "" : step.host}/${name}`;
    const kind = kindOf(host);
    if (kind !== "dir" && kind !== "file") continue;
    out.push({ kind: "bind", virtual: v, host, writable: false, file: kind === "file" });
  }
  return out;
}

/**
 * The deepest already-planned folder step (bind or mask) that contains `v`.
 * Inside a mask (a tmpfs) bubblewrap makes its own mount points.
 */
function nearestAncestor(done: readonly BindStep[], v: string): BindStep | undefined {
  let best: BindStep | undefined;
  for (const s of done) {
    if (s.file || s.virtual === v || !isWithin(v, s.virtual)) continue;
    if (best === undefined || s.virtual.length > best.virtual.length) best = s;
  }
  return best;
}

/** Where `v` lies on the host inside the ancestor bind `parent`. */
function joinHost(parent: BindStep, v: string): string {
  const rest = parent.virtual === "/" ? v : v.slice(parent.virtual.length);
  return parent.host === "/" ? rest : parent.host + rest;
}

/** True if a folder between `base` and `base/rest…` (the last one excluded) is a link. */
function hasLinkOnTheWay(base: string, rest: readonly string[]): boolean {
  let p = base === "/" ? "" : base;
  for (const name of rest.slice(0, -1)) {
    p = `${p}/${name}`;
    const kind = kindOf(p);
    if (kind === undefined) return false;
    if (kind !== "dir") return true;
  }
  return false;
}

function kindOf(host: string): "dir" | "file" | "link" | undefined {
  try {
    const st = lstatSync(host, { throwIfNoEntry: false });
    if (st === undefined) return undefined;
    if (st.isSymbolicLink()) return "link";
    return st.isDirectory() ? "dir" : "file";
  } catch {
    return undefined;
  }
}

function depthOf(v: string): number {
  return v === "/" ? 0 : v.split("/").length - 1;
}

function sortShallowFirst(paths: string[]): string[] {
  return paths.sort((a, b) => depthOf(a) - depthOf(b) || (a < b ? -1 : a > b ? 1 : 0));
}

function sortStepsShallowFirst(steps: BindStep[]): BindStep[] {
  return steps.sort(
    (a, b) =>
      depthOf(a.virtual) - depthOf(b.virtual) ||
      (a.virtual < b.virtual ? -1 : a.virtual > b.virtual ? 1 : 0),
  );
}
