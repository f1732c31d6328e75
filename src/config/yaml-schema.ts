/**
 * What the snake_case YAML schemas of program.yaml and `.worker` files share:
 * key paths, positive-integer keys, and zod's issues turned into
 * ConfigIssues whose unknown-key messages hint at the right spelling.
 */
import { z } from "zod";
import type { ConfigIssue } from "../errors/index.js";
import { toConfigIssues } from "./sandbox-config.js";

/** Key path prefix of an issue: `[]` in a `.worker` file, `["workers", name]` in program.yaml. */
export type KeyPath = (string | number)[];

/** A positive integer key; `what` names its unit in the message. */
export const positiveInt = (what: string) =>
  z
    .number({ error: `expected a positive integer (${what})` })
    .int(`expected a positive integer (${what})`)
    .positive(`expected a positive integer (${what})`);

/** `isolation`: where a worker's code runs. */
export const isolationSchema = z.enum(["thread", "process"], {
  error: 'expected "thread" (a hardened worker thread) or "process" (a confined process)',
});

/** Converts zod issues, replacing unknown-key messages with hints for our own keys. */
export function convertZodIssues(
  error: z.ZodError,
  prefix: KeyPath,
  keysAt: (path: KeyPath) => string[],
): ConfigIssue[] {
  const out: ConfigIssue[] = [];
  for (const issue of error.issues) {
    if (issue.code === "unrecognized_keys") {
      const at = issue.path.map((k) => (typeof k === "number" ? k : String(k)));
      const known = keysAt(at);
      for (const key of issue.keys)
        out.push({ path: [...prefix, ...at, key], message: describeUnknownKey(key, known) });
      continue;
    }
    out.push(...toConfigIssues(new z.ZodError([issue]), prefix));
  }
  return out;
}

/** `unknown key 'read_only' (did you mean 'readonly'?)`, or the allowed keys when nothing is close. */
function describeUnknownKey(key: string, known: string[]): string {
  const squash = (k: string) => k.replaceAll("_", "").replaceAll("-", "").toLowerCase();
  const match = known.find((k) => squash(k) === squash(key));
  if (match) return `unknown key '${key}' (did you mean '${match}'?)`;
  return `unknown key '${key}' (allowed: ${known.join(", ")})`;
}
