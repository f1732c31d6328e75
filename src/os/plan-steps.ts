/**
 * Where a virtual path lies among the steps of a bind plan: the step it is
 * seen through, its path components below that step, its host path there,
 * and the shallow-first order in which mounts are made.
 */
import { isWithin } from "../sandbox/virtual-path.js";
import type { BindStep } from "./bind-plan.js";

/** Path components of `v` below the folder step `parent`. */
export function splitBelow(parent: BindStep, v: string): string[] {
  return (parent.virtual === "/" ? v : v.slice(parent.virtual.length)).split("/").slice(1);
}

/**
 * The deepest already-planned folder step (bind or mask) that contains `v`.
 * Inside a mask (a tmpfs) bubblewrap makes its own mount points.
 */
export function findEnclosingStep(done: readonly BindStep[], v: string): BindStep | undefined {
  let best: BindStep | undefined;
  for (const s of done) {
    if (s.file || s.virtual === v || !isWithin(v, s.virtual)) continue;
    if (best === undefined || s.virtual.length > best.virtual.length) best = s;
  }
  return best;
}

/** Where `v` lies on the host inside the ancestor bind `parent`. */
export function joinHost(parent: BindStep, v: string): string {
  const rest = parent.virtual === "/" ? v : v.slice(parent.virtual.length);
  return parent.host === "/" ? rest : parent.host + rest;
}

function countDepth(v: string): number {
  return v === "/" ? 0 : v.split("/").length - 1;
}

/** Sorts virtual paths in place, shallow first, then by name. */
export function sortShallowFirst(paths: string[]): string[] {
  return paths.sort((a, b) => countDepth(a) - countDepth(b) || (a < b ? -1 : a > b ? 1 : 0));
}

/** Sorts steps in place by their virtual paths, shallow first (deeper mounts overlay). */
export function sortStepsShallowFirst(steps: BindStep[]): BindStep[] {
  return steps.sort(
    (a, b) =>
      countDepth(a.virtual) - countDepth(b.virtual) ||
      (a.virtual < b.virtual ? -1 : a.virtual > b.virtual ? 1 : 0),
  );
}
