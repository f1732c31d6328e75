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

/** Puts a set in canonical form: drops covered members, sorts by path. */
export function canonicalize(set: readonly Area[]): Area[] {
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
