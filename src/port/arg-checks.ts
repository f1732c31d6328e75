/**
 * The building blocks of the port's argument checks. A worker is hostile:
 * each check returns the arguments to call with (copies where the worker
 * could still mutate them, e.g. shared memory) and their size, or a reason.
 */
import type { Sandbox } from "../sandbox/sandbox.js";

/** Arguments after validation, plus their payload size in bytes. */
export interface Checked {
  args: unknown[];
  bytes: number;
}

/** One allowlisted operation: its argument check, then the call on the sandbox. */
export type Handler = {
  check: (args: unknown[]) => Checked | string;
  /**
   * Runs the operation. `reserve` waits until that many more bytes fit the
   * agent's budget of bytes in flight, and holds them until the reply is
   * made (a read reserves its file's size before loading it).
   */
  run: (
    sandbox: Sandbox,
    args: unknown[],
    signal: AbortSignal,
    reserve: (bytes: number) => Promise<void>,
  ) => unknown;
};

/** Longest path or glob string accepted; the sandbox itself rejects paths over 4096 bytes. */
export const MAX_PATH_CHARS = 16 * 1024;

/** Longest part of a sent key a refusal quotes. */
const MAX_QUOTED_KEY_CHARS = 64;

/**
 * Quotes a key the agent sent, cut first: escaping a long key of control
 * characters made a string too long for V8 and crashed the host (found by
 * an adversarial review), and a refusal never echoes a large input.
 */
export function quoteKey(key: string): string {
  return (
    JSON.stringify(key.slice(0, MAX_QUOTED_KEY_CHARS)) +
    (key.length > MAX_QUOTED_KEY_CHARS ? "…" : "")
  );
}

/** A request id: a non-negative safe integer. */
export function isId(v: unknown): v is number {
  return typeof v === "number" && Number.isSafeInteger(v) && v >= 0;
}

/** An object literal (or null-prototype object), never a class instance or array. */
export function isPlainObject(v: unknown): v is Record<string, unknown> {
  if (typeof v !== "object" || v === null) return false;
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

/** A path or glob string short enough to accept. */
export function isPath(v: unknown): v is string {
  return typeof v === "string" && v.length <= MAX_PATH_CHARS;
}

/** Says what is wrong when `args` has fewer than `min` or more than `max` items. */
export function arity(args: unknown[], min: number, max: number): string | undefined {
  if (args.length < min || args.length > max)
    return min === max ? `expected ${min} argument(s)` : `expected ${min} to ${max} arguments`;
  return undefined;
}

/** Checks a strict options object of booleans; returns it normalized, or an error. */
export function readOptions(
  v: unknown,
  allowed: readonly string[],
): Record<string, boolean> | string | undefined {
  if (v === undefined) return undefined;
  if (!isPlainObject(v)) return "options must be an object";
  const out: Record<string, boolean> = {};
  for (const k in v) {
    if (!allowed.includes(k)) return `unknown option ${quoteKey(k)}`;
    const value = v[k];
    if (value === undefined) continue;
    if (typeof value !== "boolean") return `option ${k} must be a boolean`;
    out[k] = value;
  }
  return out;
}

/** The check of an operation that takes exactly `n` paths. */
export const pathsOnly =
  (n: number) =>
  (args: unknown[]): Checked | string => {
    const bad = arity(args, n, n);
    if (bad) return bad;
    let bytes = 0;
    for (const a of args) {
      if (!isPath(a)) return "a path must be a string";
      bytes += a.length * 2;
    }
    return { args, bytes };
  };

/** The check of an operation that takes `paths` paths, then optional boolean options among `allowed`. */
export const withOptions =
  (paths: number, allowed: readonly string[]) =>
  (args: unknown[]): Checked | string => {
    const bad = arity(args, paths, paths + 1);
    if (bad) return bad;
    let bytes = 0;
    for (let i = 0; i < paths; i++) {
      const a = args[i];
      if (!isPath(a)) return "a path must be a string";
      bytes += a.length * 2;
    }
    const o = readOptions(args[paths], allowed);
    if (typeof o === "string") return o;
    return { args: [...args.slice(0, paths), o], bytes };
  };

/** The check of an operation that takes no argument. */
export const noArgs = (args: unknown[]): Checked | string =>
  arity(args, 0, 0) ?? { args, bytes: 0 };

/** An argument its check accepted as a string. */
export const asString = (v: unknown): string => v as string;
/** An argument its check accepted as boolean options. */
export const asFlags = (v: unknown) => v as Record<string, boolean> | undefined;
