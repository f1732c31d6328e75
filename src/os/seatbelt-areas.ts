/**
 * A sandbox's areas as Seatbelt rules on host paths (macOS).
 *
 * Seatbelt has no mount namespace: a command sees host folders at their
 * real paths, and Seatbelt decides each access on the real path (links
 * resolved). The policy decides a real path the same way: `mapBack` gives
 * its virtual place, `deny` the verdict. So the rules here are that
 * verdict, taken at every host path where it can change — each mount
 * source, each place where a mount's target shadows a folder of the
 * mount above (the folder the command would otherwise find there), each
 * area — and written shallow first, since the last matching rule wins.
 * Below such a key path, up to the next one, the verdict is the same for
 * every name (a mount or area boundary would be a key itself); protected
 * names, which can be anywhere, are left to regexes (`seatbelt-profile.ts`).
 *
 * Pure: the policy's table holds real paths already; nothing is read here.
 */
import type { Area } from "../sandbox/areas.js";
import type { Access, Policy } from "../sandbox/policy.js";
import { isWithin } from "../sandbox/virtual-path.js";

/** What may happen at a host path. */
export interface HostVerdict {
  read: boolean;
  write: boolean;
}

/**
 * One rule: the verdict for a subtree (`subpath`) or for the path alone
 * (`literal`), for the accesses it changes (the other is `undefined`).
 */
export interface HostRule {
  host: string;
  scope: "subpath" | "literal";
  read?: boolean;
  write?: boolean;
}

/** The areas as rules, and the host folders where reading or writing is allowed. */
export interface SeatbeltAreas {
  /** Shallow first; each differs from what the rules before it decide there. */
  rules: HostRule[];
  /** Host paths (subtrees or single files) where reading is allowed, sorted. */
  readable: string[];
  /** Host paths where writing is allowed, sorted. */
  writable: string[];
}

/**
 * The policy's verdict for the real host path `host`: the access its
 * virtual place has (suffix rules aside: they are in-process only, as on
 * Linux), nothing if it has none.
 */
export function decideHostPath(policy: Policy, host: string): HostVerdict {
  const v = policy.table.mapBack(host);
  const allows = (access: Access): boolean =>
    v !== undefined && policy.deny(v, access, false) === undefined;
  return { read: allows("read"), write: allows("write") };
}

/** Computes the area rules of `policy` (see the module comment). */
export function planSeatbeltAreas(policy: Policy): SeatbeltAreas {
  const table = policy.table;
  const keys = new Set<string>();
  for (const m of table.mounts) {
    keys.add(m.source);
    for (const inner of table.mounts)
      if (inner !== m && inner.target !== m.target && isWithin(inner.target, m.target))
        keys.add(table.toHost(m, inner.target));
  }
  const areas: Area[] = [...policy.read, ...policy.write];
  const c = policy.confinement;
  if (c !== undefined)
    for (const gated of [c.read, c.write]) for (const list of gated.values()) areas.push(...list);
  for (const a of areas) {
    const m = table.lookup(a.path);
    if (m !== undefined) keys.add(table.toHost(m, a.path));
  }
  const sorted = [...keys].sort((a, b) => depthOf(a) - depthOf(b) || (a < b ? -1 : a > b ? 1 : 0));
  const rules: HostRule[] = [];
  const below = new Map<string, HostVerdict>();
  const readable: string[] = [];
  const writable: string[] = [];
  for (const host of sorted) {
    let inherited: HostVerdict = { read: false, write: false };
    let best = -1;
    for (const [k, verdict] of below)
      if (k !== host && isWithin(host, k) && k.length > best) {
        best = k.length;
        inherited = verdict;
      }
    // Names below `host` are decided alike; a NUL is in no name, so it
    // stands for "any name" without matching a protected one.
    const under = decideHostPath(policy, host === "/" ? "/\0" : `${host}/\0`);
    const self = decideHostPath(policy, host);
    below.set(host, under);
    const changed = (scope: HostRule["scope"], to: HostVerdict, from: HostVerdict): void => {
      if (to.read === from.read && to.write === from.write) return;
      rules.push({
        host,
        scope,
        ...(to.read === from.read ? {} : { read: to.read }),
        ...(to.write === from.write ? {} : { write: to.write }),
      });
    };
    changed("subpath", under, inherited);
    changed("literal", self, under);
    if (self.read || under.read) readable.push(host);
    if (self.write || under.write) writable.push(host);
  }
  return { rules, readable: readable.sort(), writable: writable.sort() };
}

function depthOf(host: string): number {
  return host === "/" ? 0 : host.split("/").length - 1;
}

/** The paths of `list` that no other path of it contains. */
export function listOutermost(list: readonly string[]): string[] {
  return list.filter((p) => !list.some((q) => q !== p && isWithin(p, q)));
}
