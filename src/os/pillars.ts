/**
 * Pillars (issue 19, review finding D): a guard (see `protected-entries.ts`)
 * is a read-only bind on the guarded place itself, but the folders above it
 * inside a writable bind could be renamed: `mv .husky .h; mkdir -p .husky/_`
 * leaves the guard in the moved folder and the command writes a fresh
 * `.husky/_` of its own, which the host's git then runs.
 *
 * So every folder between the top of the writable bind and a guard is bound
 * onto itself, read-write: the command writes there as before, but each is a
 * mount point in its mount namespace, and the kernel refuses to rename or
 * remove a mount point (`EBUSY`). Pillars are ordinary binds of the plan:
 * pinned through descriptors like the others (`bind-fds.ts`) and checked in
 * the sandbox's mount table (`verify-mounts.ts`). The folders must exist
 * when pinned: settling a guard makes the missing ones on its way first.
 */
import type { BindStep, MountPoint } from "./bind-plan.js";
import { findEnclosingStep, joinHost, splitBelow } from "./plan-steps.js";

/**
 * Adds a pillar for every folder strictly between a guard of `steps` and the
 * writable folder bind it is seen through, once each, with its mount point.
 */
export function addPillars(steps: BindStep[], mountPoints: MountPoint[]): void {
  const have = new Set(steps.map((s) => s.virtual));
  const guards = steps.filter((s) => s.placeholder === true);
  for (const g of guards) {
    const above = findEnclosingStep(steps, g.virtual);
    if (above?.kind !== "bind" || !above.writable || above.file) continue;
    const rest = splitBelow(above, g.virtual);
    for (let i = 1; i < rest.length; i++) {
      const below = rest.slice(0, i);
      const v =
        above.virtual === "/" ? `/${below.join("/")}` : `${above.virtual}/${below.join("/")}`;
      if (have.has(v)) continue;
      have.add(v);
      steps.push({
        kind: "bind",
        virtual: v,
        host: joinHost(above, v),
        writable: true,
        file: false,
        pillar: true,
      });
      mountPoints.push({ base: above.host, rest: below, virtual: v, create: false });
    }
  }
}
