/**
 * The options of `runCommand`, checked: unknown keys and bad values are a
 * TypeError before anything runs, and defaults are filled in.
 */
import { DEFAULT_ENV } from "./bwrap.js";
import { type CheckedLimits, checkLimits } from "./limits.js";
import type { RunCommandOptions } from "./run-command.js";

const DEFAULT_TIMEOUT_MS = 60_000;
const DEFAULT_MAX_OUTPUT = 1024 * 1024;
const MAX_TIMER_MS = 2_147_483_647;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Options of `runCommand` after validation. */
export interface CheckedCommandOptions {
  timeoutMs: number;
  network: boolean;
  allowUnixSockets: boolean;
  env: Record<string, string>;
  maxOutputBytes: number;
  signal: AbortSignal | undefined;
  unsafeAllowUnconfined: boolean;
  bwrapPath: string | undefined;
  limits: CheckedLimits;
  passThrough: boolean;
  allowHardLinkedHostCode: boolean;
}

/**
 * Validates `runCommand`'s options and fills in the defaults; the command's
 * environment is the default one with the caller's `env` on top.
 * @throws TypeError on an unknown option or a bad value
 */
export function checkCommandOptions(o: RunCommandOptions): CheckedCommandOptions {
  if (typeof o !== "object" || o === null)
    throw new TypeError("runCommand: options must be an object");
  const known = new Set([
    "timeoutMs",
    "network",
    "allowUnixSockets",
    "env",
    "maxOutputBytes",
    "signal",
    "unsafeAllowUnconfined",
    "bwrapPath",
    "limits",
    "passThrough",
    "allowHardLinkedHostCode",
  ]);
  for (const k of Object.keys(o))
    if (!known.has(k)) throw new TypeError(`runCommand: unknown option '${k}'`);
  const timeoutMs = o.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  if (!Number.isInteger(timeoutMs) || timeoutMs <= 0 || timeoutMs > MAX_TIMER_MS)
    throw new TypeError("runCommand: timeoutMs must be a positive integer (milliseconds)");
  const maxOutputBytes = o.maxOutputBytes ?? DEFAULT_MAX_OUTPUT;
  if (!Number.isInteger(maxOutputBytes) || maxOutputBytes <= 0)
    throw new TypeError("runCommand: maxOutputBytes must be a positive integer (bytes)");
  for (const k of [
    "network",
    "allowUnixSockets",
    "unsafeAllowUnconfined",
    "passThrough",
    "allowHardLinkedHostCode",
  ] as const) {
    if (o[k] !== undefined && typeof o[k] !== "boolean")
      throw new TypeError(`runCommand: ${k} must be a boolean`);
  }
  if (o.bwrapPath !== undefined && (typeof o.bwrapPath !== "string" || o.bwrapPath === ""))
    throw new TypeError("runCommand: bwrapPath must be a non-empty string");
  if (o.signal !== undefined && !(o.signal instanceof AbortSignal))
    throw new TypeError("runCommand: signal must be an AbortSignal");
  const env: Record<string, string> = { ...DEFAULT_ENV };
  if (o.env !== undefined) {
    if (typeof o.env !== "object" || o.env === null || Array.isArray(o.env))
      throw new TypeError("runCommand: env must be an object of strings");
    for (const [k, v] of Object.entries(o.env)) {
      if (!ENV_NAME.test(k))
        throw new TypeError(
          `runCommand: env name '${k.slice(0, 60)}' is not a valid variable name`,
        );
      if (typeof v !== "string" || v.includes("\0"))
        throw new TypeError(`runCommand: env.${k} must be a string without NUL`);
      env[k] = v;
    }
  }
  return {
    timeoutMs,
    maxOutputBytes,
    env,
    network: o.network ?? false,
    allowUnixSockets: o.allowUnixSockets ?? false,
    signal: o.signal,
    unsafeAllowUnconfined: o.unsafeAllowUnconfined ?? false,
    bwrapPath: o.bwrapPath,
    limits: checkLimits(o.limits),
    passThrough: o.passThrough ?? false,
    allowHardLinkedHostCode: o.allowHardLinkedHostCode ?? false,
  };
}
