/**
 * Plain data of a model request (DESIGN §8), checked in place: the walk
 * every part of a request a hostile thread sends goes through, bounded in
 * depth, values and bytes by one {@link Budget} per request.
 */
import { isPlainObject } from "../port/arg-checks.js";

/** Deepest nesting accepted in a request (JSON schemas, tool results). */
export const MAX_DEPTH = 64;
/**
 * Most values (nodes) in one request: checking this many takes a few
 * milliseconds of the host loop (a million took 13 ms alone, 170+ ms with
 * the garbage collection it set off).
 */
export const MAX_NODES = 200_000;
/** Longest name (tool, part type) accepted. */
export const MAX_NAME_CHARS = 256;

/** Budget of one copy: values and bytes seen so far. */
export interface Budget {
  nodes: number;
  bytes: number;
}

/**
 * A fresh object with only `keys` of `o` (those with a value). Every value
 * is checked as plain data first — those left out too, so a bad request is
 * refused the same whatever it hides where — and byte arrays are copied.
 */
export function pickKnown(
  o: Record<string, unknown>,
  keys: readonly string[],
  budget: Budget,
): Record<string, unknown> | string {
  budget.nodes++;
  for (const k in o) {
    if (k === "__proto__") return "the key __proto__ is not accepted";
    const item = o[k];
    if (item instanceof Uint8Array) continue;
    const bad = checkData(item, budget, 2);
    if (bad) return `${k.slice(0, 64)}: ${bad}`;
  }
  const out: Record<string, unknown> = {};
  for (const k of keys) {
    const item = o[k];
    if (item === undefined || !Object.hasOwn(o, k)) continue;
    out[k] = item instanceof Uint8Array ? copyBytes(item, budget) : item;
    budget.bytes += k.length * 2 + 8;
  }
  return out;
}

/**
 * Checks plain data in place: null, booleans, finite numbers, strings,
 * arrays, plain objects (no `__proto__` key) and byte arrays; bounded in
 * depth, values and bytes. The request is the host's own structured-clone
 * copy, so only byte arrays (whose memory the thread may share) are copied.
 * Returns `{ value }` (the same data) or what is wrong.
 */
export function copyData(v: unknown, budget: Budget, depth: number): { value: unknown } | string {
  const bad = checkData(v, budget, depth);
  return bad === undefined ? { value: v } : bad;
}

/** Checks plain data in place within `budget`: undefined if fine, else what is wrong. */
export function checkData(v: unknown, budget: Budget, depth: number): string | undefined {
  if (++budget.nodes > MAX_NODES) return `more than ${MAX_NODES} values`;
  if (depth > MAX_DEPTH) return `nested deeper than ${MAX_DEPTH}`;
  switch (typeof v) {
    case "string":
      budget.bytes += v.length * 2;
      return undefined;
    case "boolean":
    case "undefined":
      return undefined;
    case "number":
      return Number.isFinite(v) ? undefined : "a number must be finite";
    case "object":
      break;
    default:
      return `unsupported value (${typeof v})`;
  }
  if (v === null) return undefined;
  if (Array.isArray(v)) {
    if (Object.getPrototypeOf(v) !== Array.prototype) return "unsupported array";
    for (let i = 0; i < v.length; i++) {
      const item = v[i];
      if (item instanceof Uint8Array) v[i] = copyBytes(item, budget);
      else {
        const bad = checkData(item, budget, depth + 1);
        if (bad) return bad;
      }
    }
    budget.bytes += 8 * v.length;
    return undefined;
  }
  if (v instanceof Uint8Array) return "bytes must sit in an array or object";
  if (!isPlainObject(v)) return "unsupported object";
  for (const k in v) {
    if (k === "__proto__") return "the key __proto__ is not accepted";
    const item = v[k];
    if (item instanceof Uint8Array) v[k] = copyBytes(item, budget);
    else {
      const bad = checkData(item, budget, depth + 1);
      if (bad) return bad;
    }
    budget.bytes += k.length * 2 + 8;
  }
  return undefined;
}

/** A byte array's own copy: the thread may still write to a shared original. */
function copyBytes(b: Uint8Array, budget: Budget): Uint8Array {
  budget.nodes++;
  budget.bytes += b.byteLength;
  return new Uint8Array(b);
}

/** True for a string no longer than a name may be. */
export function isShortText(v: unknown): v is string {
  return typeof v === "string" && v.length <= MAX_NAME_CHARS;
}

/** Keys with a value (structured clone keeps keys whose value is undefined). */
export function size(o: Record<string, unknown>): number {
  return Object.values(o).filter((v) => v !== undefined).length;
}
