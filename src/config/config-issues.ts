/**
 * Configuration issues from zod's: one `{ path, message }` per problem, with
 * a spelling hint for an unknown key (`read_only` → `readonly`).
 */
import type { z } from "zod";
import type { ConfigIssue } from "../errors/index.js";

/** Turns zod issues into our `{ path, message }` issues, under a key prefix. */
export function toConfigIssues(
  error: z.ZodError,
  prefix: readonly (string | number)[] = [],
): ConfigIssue[] {
  const out: ConfigIssue[] = [];
  for (const issue of error.issues) {
    const path = [...prefix, ...issue.path.map((k) => (typeof k === "number" ? k : String(k)))];
    if (issue.code === "unrecognized_keys") {
      // One issue per key, each at its own path, with a spelling hint.
      for (const key of issue.keys)
        out.push({ path: [...path, key], message: describeUnknownKey(key) });
      continue;
    }
    out.push({ path, message: issue.message.replace(/^Invalid (input|option): /, "") });
  }
  return out;
}

const KNOWN_KEYS = [
  "root",
  "readonly",
  "suffixes",
  "maxFileBytes",
  "readApproval",
  "writeApproval",
  "mounts",
  "protected",
  "secrets",
  "paths",
  "dynamic",
  "source",
  "target",
  "mode",
  "restrict",
  "allowRead",
  "allowWrite",
  "inherit",
];

function describeUnknownKey(key: string): string {
  const squash = (k: string) => k.replaceAll("_", "").replaceAll("-", "").toLowerCase();
  const match = KNOWN_KEYS.find((k) => squash(k) === squash(key));
  const snake = match?.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
  const hint = match
    ? ` (did you mean '${snake === match ? match : `${snake}' or '${match}`}'?)`
    : "";
  return `unknown key '${key}'${hint}`;
}
