/**
 * The sandbox one operation runs on under approvals (issue 18, second
 * review). An approval is decided before the operation runs, and a link on
 * its path may be swapped in between; so the operation runs on the agent's
 * sandbox confined, in every mount that asks approval, to what was approved
 * for it: the locations approved once for this operation and the agent's
 * session decisions for the operation kinds it performs. The I/O layer's own
 * checks at run time (resolution, map-back, descriptors) then refuse a path
 * that leads anywhere else, and nothing is asked twice. Sandboxes are cached
 * per approval state: the common operation builds none.
 */
import type { Area } from "../sandbox/areas.js";
import { buildConfinement } from "../sandbox/confinement.js";
import { Policy } from "../sandbox/policy.js";
import { policyOf, Sandbox } from "../sandbox/sandbox.js";
import { isWithin, parentPath } from "../sandbox/virtual-path.js";
import type { GrantAccess } from "./expansion.js";

/** A session decision of an agent: `operation` under `dir`. */
export interface SessionDecision {
  operation: string;
  dir: string;
}

/** What one operation was approved for, beyond the agent's session decisions. */
export interface OperationApprovals {
  /** Per access, the operation kinds of its targets (whose session decisions count). */
  kinds: Record<GrantAccess, Set<string>>;
  /** Locations approved for this operation only: a file, a listed folder, a granted folder. */
  once: { access: GrantAccess; path: string }[];
}

/** An empty {@link OperationApprovals}. */
export function noApprovals(): OperationApprovals {
  return { kinds: { read: new Set(), write: new Set() }, once: [] };
}

/** Builds and caches the confined sandboxes of one agent. */
export class RunSandboxes {
  readonly #cache = new Map<string, Sandbox>();
  #base: Sandbox | undefined;
  #sessions = 0;

  /**
   * `sb` confined to `approved` plus the `session` decisions. Cached when
   * `sb` is the agent's effective sandbox and nothing was approved once.
   */
  confine(
    sb: Sandbox,
    effective: Sandbox,
    session: readonly SessionDecision[],
    approved: OperationApprovals,
  ): Sandbox {
    const p = policyOf(sb);
    const gated = {
      read: p.table.mounts.filter((m) => m.readApproval).map((m) => m.target),
      write: p.table.mounts.filter((m) => m.writeApproval).map((m) => m.target),
    };
    if (gated.read.length === 0 && gated.write.length === 0) return sb;
    const cacheable = sb === effective && approved.once.length === 0;
    const key = `${[...approved.kinds.read].sort().join(",")}|${[...approved.kinds.write].sort().join(",")}`;
    if (cacheable) {
      if (this.#base !== effective || this.#sessions !== session.length) {
        this.#cache.clear();
        this.#base = effective;
        this.#sessions = session.length;
      }
      const hit = this.#cache.get(key);
      if (hit) return hit;
    }
    const mountOf = (v: string) => p.table.lookup(v)?.target;
    const allowed = { read: [] as Area[], write: [] as Area[] };
    for (const s of session)
      for (const access of ["read", "write"] as const)
        if (approved.kinds[access].has(s.operation))
          allowed[access].push({ path: s.dir, exact: false });
    for (const o of approved.once) {
      allowed[o.access].push({ path: o.path, exact: false });
      // Writing there checks (and may create) the folders above it, up to
      // the mount: each exactly, never what else they hold.
      const top = mountOf(o.path);
      if (o.access === "write" && top !== undefined)
        for (let d = o.path; d !== top && isWithin(d, top); ) {
          d = parentPath(d);
          allowed.write.push({ path: d, exact: true });
        }
    }
    const confinement = buildConfinement(gated, allowed, mountOf);
    const out = new Sandbox(new Policy(p.table, p.read, p.write, p.secrets, confinement));
    if (cacheable) this.#cache.set(key, out);
    return out;
  }
}
