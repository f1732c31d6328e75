/**
 * The text of a Seatbelt (SBPL) profile: string literals and regexes.
 *
 * A profile is handed to `sandbox-exec -p` as one C string and read by a
 * Scheme reader, so NUL (it would end the string) and line breaks are
 * refused outright, and `\` and `"` are escaped. Regexes are written so
 * that Seatbelt's matcher and JavaScript's read them alike (the tests run
 * the profile's regexes with JavaScript's): metacharacters are escaped
 * with `\` outside brackets, and never inside them.
 *
 * Every deny rule on a path is a regex that ignores ASCII case and, for a
 * name with non-ASCII letters, accepts both its composed (NFC) and
 * decomposed (NFD) spelling: APFS, by default, finds `.GIT` and `.git`
 * alike, and which spelling Seatbelt compares cannot be checked here. A
 * deny that matches a little more is safe; one that matches less is not.
 * Allow rules use the exact real path (a spelling they miss is refused).
 */
import { OsSandboxUnavailableError } from "../errors/index.js";

/** Characters a profile cannot hold. */
const UNSAFE = /[\0\n\r]/;

/** Characters with a meaning outside brackets in Seatbelt's regexes and JavaScript's. */
const META = new Set([".", "[", "(", ")", "{", "}", "*", "+", "?", "^", "$", "|", "\\"]);

/**
 * The SBPL string literal for `s`.
 * @throws OsSandboxUnavailableError if `s` holds NUL or a line break (a
 *   host folder's name, say): the command must not run with a profile
 *   that says something else than meant
 */
export function quoteSbpl(s: string): string {
  if (UNSAFE.test(s))
    throw new OsSandboxUnavailableError(
      "Cannot run the command: a name among the sandbox's host folders (or a secret pattern) contains NUL or a line break, which a Seatbelt profile cannot hold. The command was not run. Rename that folder on the host, or run the command on Linux.",
    );
  return `"${s.replaceAll("\\", "\\\\").replaceAll('"', '\\"')}"`;
}

/** One character as a regex literal outside brackets; ASCII letters of both cases if `fold`. */
export function escapeRegexChar(c: string, fold: boolean): string {
  if (META.has(c)) return `\\${c}`;
  if (fold && /[A-Za-z]/.test(c)) return `[${c.toLowerCase()}${c.toUpperCase()}]`;
  return c;
}

/** A string as a regex literal, character by character (see {@link escapeRegexChar}). */
export function escapeRegexText(s: string, fold: boolean): string {
  let out = "";
  for (const c of s) out += escapeRegexChar(c, fold);
  return out;
}

/**
 * A host path as a regex (no anchors) that ignores ASCII case and accepts
 * each non-ASCII name in its NFC and NFD spellings.
 */
export function foldPathRegex(host: string): string {
  if (host === "/") return "";
  return host
    .split("/")
    .map((name) => {
      const forms = [...new Set([name, name.normalize("NFC"), name.normalize("NFD")])];
      const shown = forms.map((f) => escapeRegexText(f, true));
      return shown.length === 1 ? shown[0]! : `(${shown.join("|")})`;
    })
    .join("/");
}

/** A regex filter matching `host` and everything below it, ignoring case (see {@link foldPathRegex}). */
export function foldedSubpath(host: string): string {
  return host === "/"
    ? `(regex ${quoteSbpl("^/")})`
    : `(regex ${quoteSbpl(`^${foldPathRegex(host)}(/|$)`)})`;
}

/** A regex filter matching exactly `host`, ignoring case (see {@link foldPathRegex}). */
export function foldedLiteral(host: string): string {
  return `(regex ${quoteSbpl(`^${host === "/" ? "/" : foldPathRegex(host)}$`)})`;
}

/** A `subpath` filter (exact spelling). */
export function subpath(host: string): string {
  return `(subpath ${quoteSbpl(host)})`;
}

/** A `literal` filter (exact spelling). */
export function literal(host: string): string {
  return `(literal ${quoteSbpl(host)})`;
}
