/**
 * The port's `grep`: a strict options object checked here, the search itself
 * run in the pool of trusted host threads with this agent's policy.
 */
import { searchSandbox } from "../pool/index.js";
import type { GrepOptions } from "../sandbox/types.js";
import {
  arity,
  type Checked,
  type Handler,
  isPlainObject,
  MAX_PATH_CHARS,
  quoteKey,
} from "./arg-checks.js";

/** Longest grep pattern accepted. */
const MAX_PATTERN_CHARS = 16 * 1024;
/** Largest number accepted for a grep budget (the search caps each budget lower). */
const MAX_GREP_NUMBER = 2 ** 40;
/**
 * Longest time budget of a grep from a thread: a thread's search holds one
 * of the host's few pool threads for that long (plus a grace period).
 */
export const MAX_THREAD_GREP_BUDGET_MS = 10_000;

/** The string options of `grep` and their longest accepted length. */
const GREP_STRINGS: Record<string, number> = {
  pattern: MAX_PATTERN_CHARS,
  flags: 16,
  path: MAX_PATH_CHARS,
  glob: MAX_PATH_CHARS,
};
/** The numeric options of `grep` (budgets; the search checks and caps them further). */
const GREP_NUMBERS = ["maxMatches", "maxBytes", "maxFileBytes", "timeBudgetMs", "maxLineChars"];

/**
 * Checks `grep`'s one argument, a strict options object: known keys only,
 * strings capped, numbers non-negative integers within bounds. Returns a
 * fresh copy holding exactly the accepted keys.
 */
function checkGrep(args: unknown[]): Checked | string {
  const bad = arity(args, 1, 1);
  if (bad) return bad;
  const v = args[0];
  if (!isPlainObject(v)) return "options must be an object { pattern, path?, glob?, flags?, … }";
  const out: Record<string, string | number> = {};
  let bytes = 0;
  for (const k in v) {
    const value = v[k];
    const maxChars = Object.hasOwn(GREP_STRINGS, k) ? GREP_STRINGS[k] : undefined;
    if (maxChars !== undefined) {
      if (value === undefined) continue;
      if (typeof value !== "string" || value.length > maxChars)
        return `${k} must be a string of at most ${maxChars} characters`;
      out[k] = value;
      bytes += value.length * 2;
    } else if (GREP_NUMBERS.includes(k)) {
      if (value === undefined) continue;
      if (
        typeof value !== "number" ||
        !Number.isInteger(value) ||
        value < 0 ||
        value > MAX_GREP_NUMBER
      )
        return `${k} must be a non-negative integer of at most ${MAX_GREP_NUMBER}`;
      out[k] = k === "timeBudgetMs" ? Math.min(value, MAX_THREAD_GREP_BUDGET_MS) : value;
    } else return `unknown option ${quoteKey(k)}`;
  }
  if (typeof out.pattern !== "string") return "pattern must be a string";
  return { args: [out], bytes };
}

/** The `grep` operation. */
export const GREP_OP: Handler = {
  check: checkGrep,
  // In the pool of trusted host threads (a search never holds this loop),
  // with this agent's policy; closing the server stops it.
  run: (sb, a, signal) => searchSandbox(sb, a[0] as GrepOptions, { signal }),
};
