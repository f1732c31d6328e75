/**
 * Confinement to what was approved (issue 18, second review): a policy may
 * carry, for each access, the mounts that ask approval for it and the areas
 * in each that one operation was approved for. Anything else in such a
 * mount is refused by `Policy.deny()` — so by every resolution, map-back
 * and descriptor check the I/O layer already makes at run time, wherever a
 * path turns out to lead after a link was swapped. Internal: only the
 * approvals runtime builds confined policies; `Sandbox` shows nothing of it.
 */
import { ApprovalDeniedError, quotePath } from "../errors/index.js";
import { type Area, canonicalize, setCovers } from "./areas.js";

/** Approval-asking mount target → the areas in it an operation may use. */
export type GatedMounts = ReadonlyMap<string, readonly Area[]>;

/** What one operation may use in the mounts that ask approval. */
export interface Confinement {
  readonly read: GatedMounts;
  readonly write: GatedMounts;
}

/** A {@link Confinement} in structured-cloneable form (mount target, areas). */
export interface ConfinementWire {
  read: [string, Area[]][];
  write: [string, Area[]][];
}

/**
 * Builds a confinement: `gated` lists the mount targets asking approval
 * for each access; `allowed` the areas (in any mount) approved for each.
 * Each allowed area counts only in the mount its path falls in (`mountOf`):
 * a nested mount asks on its own.
 */
export function buildConfinement(
  gated: { read: readonly string[]; write: readonly string[] },
  allowed: { read: readonly Area[]; write: readonly Area[] },
  mountOf: (v: string) => string | undefined,
): Confinement {
  const per = (targets: readonly string[], areas: readonly Area[]): GatedMounts => {
    const out = new Map<string, Area[]>();
    for (const t of targets) out.set(t, []);
    for (const a of areas) out.get(mountOf(a.path) ?? "")?.push(a);
    for (const [t, list] of out) out.set(t, canonicalize(list));
    return out;
  };
  return { read: per(gated.read, allowed.read), write: per(gated.write, allowed.write) };
}

/** True if `c` lets `access` reach `v`, a path of the mount `mount`. */
export function confinementAllows(
  c: Confinement,
  mount: string,
  v: string,
  access: "read" | "write",
): boolean {
  const allowed = (access === "read" ? c.read : c.write).get(mount);
  return allowed === undefined || setCovers(allowed, v);
}

/** The wire form (for the host's own pool threads). */
export function confinementToWire(c: Confinement): ConfinementWire {
  const list = (m: GatedMounts): [string, Area[]][] =>
    [...m].map(([t, areas]) => [t, areas.map((a) => ({ path: a.path, exact: a.exact }))]);
  return { read: list(c.read), write: list(c.write) };
}

/** Rebuilds a confinement from its wire form; undefined when malformed. */
export function confinementFromWire(w: ConfinementWire): Confinement | undefined {
  const map = (l: unknown): GatedMounts | undefined => {
    if (!Array.isArray(l)) return undefined;
    const out = new Map<string, Area[]>();
    for (const e of l) {
      if (!Array.isArray(e) || typeof e[0] !== "string" || !Array.isArray(e[1])) return undefined;
      const areas = (e[1] as unknown[]).filter(
        (a): a is Area =>
          typeof (a as Area)?.path === "string" && typeof (a as Area)?.exact === "boolean",
      );
      if (areas.length !== e[1].length) return undefined;
      out.set(e[0], canonicalize(areas));
    }
    return out;
  };
  const read = map(w?.read);
  const write = map(w?.write);
  return read && write ? { read, write } : undefined;
}

/**
 * The error for a path the operation was not approved for: asked directly,
 * or reached (`leadsTo`) through a link that was changed after the approval
 * was decided, or that leads on.
 */
export function unapprovedError(
  asked: string,
  access: "read" | "write",
  leadsTo?: string,
): ApprovalDeniedError {
  const verb = access === "read" ? "reading" : "writing";
  const where = leadsTo ?? asked;
  const what =
    leadsTo === undefined || leadsTo === asked
      ? `${verb} ${quotePath(asked)} needs approval, and this operation was not approved for it`
      : `${verb} ${quotePath(asked)} leads (through a link) to ${quotePath(where)}, which needs approval that this operation did not have (the link was changed after the approval was decided, or leads on)`;
  return new ApprovalDeniedError(
    `Access denied: ${what}. Nothing was done. Ask for ${quotePath(where)} by its own path (the approver decides), or choose another path.`,
    asked,
  );
}
