/**
 * Area sets: which virtual paths a sandbox may read or write.
 *
 * An area is a virtual subtree (`/src` covers `/src` and everything below it,
 * on whole segments) or, when `exact` is set, exactly one file. Sets are kept
 * canonical: sorted, with no member covered by another, so equality and
 * intersection are cheap and deterministic.
 */
import { isWithin } from "./virtual-path.js";

/** One readable or writable area. */
export interface Area {
  /** Canonical virtual path. */
  readonly path: string;
  /** True when the area is exactly one file, not a subtree. */
  readonly exact: boolean;
}

/** True if the area covers the virtual path. */
export function areaCovers(area: Area, path: string): boolean {
  return area.exact ? path === area.path : isWithin(path, area.path);
}

/** True if any area of the set covers the virtual path. */
export function setCovers(set: readonly Area[], path: string): boolean {
  for (const a of set) if (areaCovers(a, path)) return true;
  return false;
}

/**
 * True if the set is canonical already: paths strictly ascending (so no
 * duplicates), no member inside a subtree member. What {@link intersect}
 * returns, checked rather than trusted.
 */
function isCanonical(set: readonly Area[]): boolean {
  for (let i = 0; i < set.length; i++) {
    const a = set[i]!;
    if (i > 0 && !(set[i - 1]!.path < a.path)) return false;
    // A subtree containing `a` sorts before it (its path is a prefix).
    for (let j = 0; j < i; j++) {
      const b = set[j]!;
      if (!b.exact && isWithin(a.path, b.path)) return false;
    }
  }
  return true;
}

/** Puts a set in canonical form: drops covered members, sorts by path. */
export function canonicalize(set: readonly Area[]): Area[] {
  // The common case (a set already canonical) needs no map, filter or sort.
  if (isCanonical(set)) return set.slice();
  const unique = new Map<string, Area>();
  for (const a of set) unique.set(`${a.exact ? "f" : "d"}${a.path}`, a);
  const list = [...unique.values()];
  return list
    .filter((a) => !list.some((b) => b !== a && !b.exact && isWithin(a.path, b.path)))
    .sort((x, y) => (x.path < y.path ? -1 : x.path > y.path ? 1 : 0));
}

/** The intersection of two area sets (what both allow). */
export function intersect(a: readonly Area[], b: readonly Area[]): Area[] {
  const out: Area[] = [];
  for (const x of a) {
    for (const y of b) {
      if (x.exact && y.exact) {
        if (x.path === y.path) out.push(x);
      } else if (x.exact) {
        if (isWithin(x.path, y.path)) out.push(x);
      } else if (y.exact) {
        if (isWithin(y.path, x.path)) out.push(y);
      } else if (isWithin(x.path, y.path)) {
        out.push(x);
      } else if (isWithin(y.path, x.path)) {
        out.push(y);
      }
    }
  }
  return canonicalize(out);
}
