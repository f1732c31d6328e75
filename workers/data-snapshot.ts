/**
 * A snapshot of plain data, made to be compared with fresh data fast: the
 * proxy model (`model-client.ts`) keeps one of the tools the host holds and
 * tells, at every step, whether the SDK's freshly built tools are exactly
 * those. Each object's keys are listed once, when the snapshot is taken, so
 * a comparison allocates nothing and builds no text.
 */

/** A snapshot; see {@link takeSnapshot}. */
export type DataSnapshot =
  | string
  | number
  | boolean
  | null
  | undefined
  | { readonly items: readonly DataSnapshot[] }
  | { readonly keys: readonly string[]; readonly values: readonly DataSnapshot[] }
  | { readonly never: true };

/** Deepest nesting a snapshot follows; deeper data is never the same. */
const MAX_DEPTH = 100;
const NEVER: DataSnapshot = Object.freeze({ never: true as const });

/**
 * Takes a snapshot of `v`: primitives, arrays and plain objects (own
 * enumerable keys, in order). Anything else (a byte array, a Date, a class
 * instance, a function) is kept as a value no data ever matches.
 */
export function takeSnapshot(v: unknown, depth = 0): DataSnapshot {
  if (typeof v !== "object" || v === null)
    return typeof v === "function" || typeof v === "symbol" || typeof v === "bigint"
      ? NEVER
      : (v as DataSnapshot);
  if (depth > MAX_DEPTH) return NEVER;
  if (Array.isArray(v)) return { items: v.map((x) => takeSnapshot(x, depth + 1)) };
  if (!isPlainRecord(v)) return NEVER;
  const keys = Object.keys(v);
  return {
    keys,
    values: keys.map((k) => takeSnapshot((v as Record<string, unknown>)[k], depth + 1)),
  };
}

/**
 * True if `v` is exactly the data of `snapshot`: the same keys in the same
 * order (inherited enumerable ones count too, so they never match), equal
 * primitives (`Object.is`). Data the snapshot could not hold never matches.
 */
export function matchesSnapshot(v: unknown, snapshot: DataSnapshot, depth = 0): boolean {
  if (typeof v !== "object" || v === null) {
    if (typeof v === "function" || typeof v === "symbol" || typeof v === "bigint") return false;
    return Object.is(v, snapshot);
  }
  if (typeof snapshot !== "object" || snapshot === null || depth > MAX_DEPTH) return false;
  if (Array.isArray(v)) {
    if (!("items" in snapshot)) return false;
    const items = snapshot.items;
    if (v.length !== items.length) return false;
    for (let i = 0; i < v.length; i++)
      if (!matchesSnapshot(v[i], items[i], depth + 1)) return false;
    return true;
  }
  if (!("keys" in snapshot) || !isPlainRecord(v)) return false;
  const { keys, values } = snapshot;
  let i = 0;
  for (const k in v) {
    if (i >= keys.length || k !== keys[i]) return false;
    if (!matchesSnapshot((v as Record<string, unknown>)[k], values[i], depth + 1)) return false;
    i++;
  }
  return i === keys.length;
}

function isPlainRecord(v: object): boolean {
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}
