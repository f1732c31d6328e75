/**
 * What a sandbox's policy says about a path, for approvals: whether its
 * mount asks approval, where a link really leads, the canonical path, and
 * reads cut to a searched tree.
 */
import { intersect } from "../sandbox/areas.js";
import { Policy } from "../sandbox/policy.js";
import { policyOf, Sandbox } from "../sandbox/sandbox.js";
import type { GrantAccess } from "./expansion.js";

/** True if the mount of canonical path `v` asks approval for `access`. */
export function needsApproval(sb: Sandbox, v: string, access: GrantAccess): boolean {
  const m = policyOf(sb).table.lookup(v);
  return m !== undefined && (access === "read" ? m.readApproval : m.writeApproval);
}

/** True if any mount asks approval for `access` (else no path can need it). */
export function anyFlag(sb: Sandbox, access: GrantAccess): boolean {
  return policyOf(sb).table.mounts.some((m) =>
    access === "read" ? m.readApproval : m.writeApproval,
  );
}

/**
 * The virtual location `v` really leads to (through links), or undefined
 * when it cannot be resolved (the operation reports why).
 */
export function realLocation(sb: Sandbox, v: string, access: GrantAccess): string | undefined {
  try {
    const p = policyOf(sb);
    return p.table.mapBack(p.resolveVirtual(v, access, false).real);
  } catch {
    return undefined;
  }
}

/**
 * `sb` with reads cut to the trees under `roots` (writes unchanged): a
 * searched folder as typed, and where a link to it really leads.
 */
export function readsOnlyUnder(sb: Sandbox, roots: readonly string[]): Sandbox {
  const p = policyOf(sb);
  const cut = roots.map((path) => ({ path, exact: false }));
  return new Sandbox(
    new Policy(p.table, intersect(p.read, cut), p.write, p.secrets, p.confinement),
  );
}

/** The canonical virtual path, or undefined where the operation will fail anyway. */
export function normalizeQuietly(sb: Sandbox, path: string): string | undefined {
  try {
    return policyOf(sb).normalize(path) ?? undefined;
  } catch {
    return undefined;
  }
}
