/**
 * The proxy model's snapshot of the tools the host holds
 * (workers/data-snapshot.ts): fresh data matches only when it is exactly
 * the same plain data, so a step never reuses tools that differ.
 */
import { describe, expect, it } from "vitest";
import { matchesSnapshot, takeSnapshot } from "../workers/data-snapshot.js";

const schema = () => ({
  type: "object",
  properties: {
    path: { type: "string", description: "A path" },
    n: { type: "integer", minimum: 1 },
  },
  required: ["path"],
  additionalProperties: false,
});

describe("data snapshots", () => {
  it("matches equal data in fresh objects", () => {
    const s = takeSnapshot([{ name: "t", inputSchema: schema(), strict: true, x: null }]);
    expect(matchesSnapshot([{ name: "t", inputSchema: schema(), strict: true, x: null }], s)).toBe(
      true,
    );
    expect(matchesSnapshot([], takeSnapshot([]))).toBe(true);
    expect(matchesSnapshot({ a: undefined }, takeSnapshot({ a: undefined }))).toBe(true);
  });

  it("does not match any difference: values, types, keys, their order, lengths", () => {
    const s = takeSnapshot({ a: [1, "2", true], b: { c: null } });
    const differ = [
      { a: [1, "2", false], b: { c: null } },
      { a: [1, 2, true], b: { c: null } },
      { a: ["1", "2", true], b: { c: null } },
      { a: [1, "2", true, 4], b: { c: null } },
      { a: [1, "2"], b: { c: null } },
      { a: [1, "2", true], b: { c: undefined } },
      { a: [1, "2", true], b: { c: {} } },
      { a: [1, "2", true], b: { c: [] } },
      { a: [1, "2", true], b: {} },
      { a: [1, "2", true], b: { c: null, d: 1 } },
      { b: { c: null }, a: [1, "2", true] },
      { a: [1, "2", true] },
      { a: { 0: 1, 1: "2", 2: true, length: 3 }, b: { c: null } },
      [{ a: [1, "2", true], b: { c: null } }],
      null,
      "x",
    ];
    for (const d of differ) expect(matchesSnapshot(d, s), JSON.stringify(d)).toBe(false);
    expect(matchesSnapshot(0, takeSnapshot(-0))).toBe(false);
    expect(matchesSnapshot(Number.NaN, takeSnapshot(Number.NaN))).toBe(true);
  });

  it("never matches what is not plain data, on either side", () => {
    class Box {
      a = 1;
    }
    const fn = () => {};
    for (const v of [
      new Box(),
      new Date(0),
      new Uint8Array([1]),
      fn,
      new Map(),
      1n,
      Symbol.for("s"),
    ]) {
      expect(matchesSnapshot(v, takeSnapshot(v))).toBe(false);
      expect(matchesSnapshot({ v }, takeSnapshot({ v }))).toBe(false);
    }
    // A plain object never matches a byte array's snapshot, even with its keys.
    expect(matchesSnapshot({ 0: 1 }, takeSnapshot(new Uint8Array([1])))).toBe(false);
    // Inherited enumerable keys count: they make the data differ.
    const inherited = Object.create({ extra: 1 }) as Record<string, unknown>;
    inherited.a = 1;
    expect(matchesSnapshot(inherited, takeSnapshot({ a: 1 }))).toBe(false);
    const bare = Object.assign(Object.create(null) as Record<string, unknown>, { a: 1 });
    expect(matchesSnapshot(bare, takeSnapshot({ a: 1 }))).toBe(true);
  });

  it("is not changed by changes to the data it was taken of", () => {
    const data = { list: [1, 2], o: { k: "v" } };
    const s = takeSnapshot(data);
    data.list.push(3);
    expect(matchesSnapshot(data, s)).toBe(false);
    expect(matchesSnapshot({ list: [1, 2], o: { k: "v" } }, s)).toBe(true);
    data.o.k = "w";
    expect(matchesSnapshot({ list: [1, 2], o: { k: "v" } }, s)).toBe(true);
  });

  it("never matches data nested deeper than it follows", () => {
    const nest = (n: number): unknown => {
      let v: unknown = "x";
      for (let i = 0; i < n; i++) v = { v };
      return v;
    };
    expect(matchesSnapshot(nest(50), takeSnapshot(nest(50)))).toBe(true);
    expect(matchesSnapshot(nest(150), takeSnapshot(nest(150)))).toBe(false);
  });
});
