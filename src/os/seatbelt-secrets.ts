/**
 * Secrets in a Seatbelt profile: name globs (`.env`, `*.pem`, `.aws/`)
 * matched at any depth below every readable host folder, denied for
 * reading, writing (a rename is a write: `mv .env x` would make it
 * readable) and running. A readable folder whose own virtual place has a
 * secret name (a mount at `/.ssh`) is denied whole: below it, the host
 * names are not the sandbox's names.
 *
 * The sandbox's own `secrets` setting is not implemented yet (issue 24):
 * the profile takes the list as a parameter.
 */
import { compileGlob } from "../sandbox/glob.js";
import type { Policy } from "../sandbox/policy.js";
import { listOutermost } from "./seatbelt-areas.js";
import { checkSecretPattern, convertNameGlob } from "./seatbelt-glob.js";
import { foldedSubpath, foldPathRegex, quoteSbpl } from "./seatbelt-text.js";

/** One secret pattern, compiled both ways. */
export interface SecretName {
  /** As given (`.aws/`). */
  pattern: string;
  /** Regex of one path component (case-folded), or `undefined` if it matches no name. */
  regex: string | undefined;
  /** The sandbox's own matcher, on one name. */
  matches: (name: string) => boolean;
}

/**
 * Checks and compiles a `secrets` list.
 * @throws TypeError for an entry that is not a name glob a profile can hold
 */
export function compileSecretNames(list: readonly string[]): SecretName[] {
  if (!Array.isArray(list)) throw new TypeError("secrets must be an array of name globs");
  return list.map((pattern) => {
    const { glob } = checkSecretPattern(pattern);
    const match = compileGlob(glob);
    return { pattern, regex: convertNameGlob(glob, true), matches: (name) => match(name) };
  });
}

/** The deny rules for `secrets` below the `readable` host folders of `policy`. */
export function listSecretRules(
  policy: Policy,
  readable: readonly string[],
  secrets: readonly SecretName[],
): string[] {
  if (secrets.length === 0 || readable.length === 0) return [];
  const out = [";; Secrets: never read, written, renamed or run."];
  const deny = "(deny file-read* file-write* process-exec";
  for (const host of readable) {
    const v = policy.table.mapBack(host);
    const names = v === undefined || v === "/" ? [] : v.slice(1).split("/");
    if (names.some((n) => secrets.some((s) => s.matches(n))))
      out.push(`${deny} ${foldedSubpath(host)})`);
  }
  for (const host of listOutermost(readable))
    for (const s of secrets) {
      if (s.regex === undefined) continue;
      const re = `^${foldPathRegex(host)}/(.*/)?${s.regex}(/|$)`;
      out.push(`${deny} (regex ${quoteSbpl(re)}))`);
    }
  return out;
}
