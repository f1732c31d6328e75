/**
 * Area sets: `canonicalize` skips its work for a set that is canonical
 * already; this pins that the shortcut gives what the full form does.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type Area, canonicalize, intersect } from "../../src/sandbox/areas.js";
import { isWithin } from "../../src/sandbox/virtual-path.js";

/** The full canonical form, as computed before the shortcut. */
function canonicalizeFully(set: readonly Area[]): Area[] {
  const unique = new Map<string, Area>();
  for (const a of set) unique.set(`${a.exact ? "f" : "d"}${a.path}`, a);
  const list = [...unique.values()];
  return list
    .filter((a) => !list.some((b) => b !== a && !b.exact && isWithin(a.path, b.path)))
    .sort((x, y) => (x.path < y.path ? -1 : x.path > y.path ? 1 : 0));
}

// Prefix siblings (/a vs /a b vs /a2), nesting and duplicates.
const pathArb = fc
  .array(fc.constantFrom("a", "a b", "a2", "b"), { minLength: 0, maxLength: 3 })
  .map((segs) => `/${segs.join("/")}`);
const areaArb = fc.record({ path: pathArb, exact: fc.boolean() });
const setArb = fc.array(areaArb, { maxLength: 6 });

describe("canonicalize", () => {
  it("equals the full form, for canonical and other sets", () => {
    fc.assert(
      fc.property(setArb, (set) => {
        expect(canonicalize(set)).toEqual(canonicalizeFully(set));
        const canonical = canonicalizeFully(set);
        expect(canonicalize(canonical)).toEqual(canonical);
      }),
      { numRuns: 2000 },
    );
  });

  it("returns a copy, never the caller's array", () => {
    const set = [{ path: "/a", exact: false }];
    expect(canonicalize(set)).not.toBe(set);
  });

  it("keeps a file beside a same-named subtree out, and prefix siblings in", () => {
    expect(
      canonicalize([
        { path: "/a", exact: false },
        { path: "/a", exact: true },
        { path: "/a b", exact: false },
        { path: "/a/x", exact: true },
      ]),
    ).toEqual([
      { path: "/a", exact: false },
      { path: "/a b", exact: false },
    ]);
    // Sorted but with "/a b" between "/a" and "/a/x": still not canonical.
    expect(
      canonicalize([
        { path: "/a", exact: false },
        { path: "/a b", exact: false },
        { path: "/a/x", exact: false },
      ]),
    ).toEqual([
      { path: "/a", exact: false },
      { path: "/a b", exact: false },
    ]);
  });

  it("intersect stays canonical", () => {
    fc.assert(
      fc.property(setArb, setArb, (a, b) => {
        const out = intersect(canonicalizeFully(a), canonicalizeFully(b));
        expect(out).toEqual(canonicalizeFully(out));
      }),
      { numRuns: 1000 },
    );
  });
});
