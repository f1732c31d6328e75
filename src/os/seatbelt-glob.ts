/**
 * Name globs (a `secrets` list: `.env`, `*.pem`, `.aws/`) as regexes for a
 * Seatbelt profile, meaning exactly what the sandbox's own matcher
 * (`src/sandbox/glob.ts`) means on one name: `*` and `?` within the name,
 * `[…]` classes (ranges, `!`/`^` negation, `[:alpha:]`-style names), `{a,b}`
 * lists (expanded by the matcher's own code, within its bounds), `\`
 * escapes. A property test holds the two together on random names.
 *
 * What a regex cannot say the same way to Seatbelt and to JavaScript is
 * refused with a TypeError rather than guessed: non-ASCII characters
 * inside `[…]`, `]` inside a negated class, the classes that need control
 * characters (`[:cntrl:]`, `[:ascii:]`, `[:blank:]`, `[:space:]`). Outside
 * classes, non-ASCII characters are matched as written. One difference is
 * left: the sandbox's matcher compares UTF-16 units, Seatbelt bytes, so
 * `?` and a negated class take one unit there and one byte here (on
 * non-ASCII names, `?` may match in one and not the other).
 */
import { expandSegmentBraces } from "../sandbox/glob.js";
import { escapeRegexChar } from "./seatbelt-text.js";

const MAX_PATTERN = 1000;
const SLASH = 0x2f;
/** Characters written outside a class, or in a safe place inside one. */
const SPECIAL = new Set(["-", "[", "\\", "]", "^"]);

/** Printable ASCII ranges of the `[:name:]` classes the sandbox's matcher knows. */
const POSIX_RANGES: Record<string, [number, number][]> = {
  alnum: [r("A", "Z"), r("a", "z"), r("0", "9")],
  alpha: [r("A", "Z"), r("a", "z")],
  digit: [r("0", "9")],
  graph: [r("!", "~")],
  lower: [r("a", "z")],
  print: [r(" ", "~")],
  punct: [r("!", "/"), r(":", "@"), r("[", "`"), r("{", "~")],
  upper: [r("A", "Z")],
  word: [r("A", "Z"), r("a", "z"), r("0", "9"), r("_", "_")],
  xdigit: [r("0", "9"), r("A", "F"), r("a", "f")],
};
/** Known names whose characters a profile cannot hold. */
const POSIX_REFUSED = new Set(["ascii", "blank", "cntrl", "space"]);

function r(lo: string, hi: string): [number, number] {
  return [lo.charCodeAt(0), hi.charCodeAt(0)];
}

/** A secret pattern, checked: its name glob and whether it named a folder (`.aws/`). */
export interface SecretPattern {
  glob: string;
  folder: boolean;
}

/**
 * Checks one `secrets` entry: a name glob, optionally ending in `/` (a
 * folder); never a path (no other `/`), `.` or `..`, or control characters.
 * @throws TypeError naming what is allowed
 */
export function checkSecretPattern(pattern: unknown): SecretPattern {
  if (typeof pattern !== "string" || pattern.length === 0 || pattern.length > MAX_PATTERN)
    throw new TypeError(
      `secrets: each entry must be a name glob of 1 to ${MAX_PATTERN} characters, such as '.env', '*.pem' or '.aws/'`,
    );
  const folder = pattern.endsWith("/");
  const glob = folder ? pattern.slice(0, -1) : pattern;
  if (glob === "" || glob.includes("/") || glob === "." || glob === "..")
    throw new TypeError(
      "secrets: an entry is a name matched at any depth ('.env', '*.key', '.ssh/'), not a path: no '/' except one at the end for a folder",
    );
  if ([...glob].some((c) => c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f))
    throw new TypeError("secrets: an entry cannot contain control characters");
  return { glob, folder };
}

/**
 * The regex (no anchors, never matching `/`) for one path component that
 * the name glob matches, or `undefined` if it matches no name at all. With
 * `fold`, ASCII letters match in either case (for deny rules: see
 * `seatbelt-text.ts`).
 * @throws TypeError for what Seatbelt's regexes cannot say as the matcher
 *   means it (see the module comment); IoError past the matcher's bounds
 */
export function convertNameGlob(glob: string, fold: boolean): string | undefined {
  const { glob: g } = checkSecretPattern(glob);
  // The matcher takes a whole `**` segment as any number of names: on
  // one name, any name.
  if (g === "**") return "[^/]*";
  const alternatives = /[[\]{}\\]/.test(g) ? expandSegmentBraces(g, g) : [g];
  const out = new Set<string>();
  for (const a of alternatives) {
    const re = convertAlternative(a, fold);
    if (re !== undefined) out.add(re);
  }
  if (out.size === 0) return undefined;
  if (out.size === 1) return [...out][0];
  return `(${[...out].join("|")})`;
}

/** One brace-free alternative, token by token as the matcher's `tokenize` reads it. */
function convertAlternative(seg: string, fold: boolean): string | undefined {
  let out = "";
  let afterStar = false;
  for (let i = 0; i < seg.length; i++) {
    const c = seg[i]!;
    if (c === "*") {
      if (!afterStar) out += "[^/]*";
      afterStar = true;
      continue;
    }
    afterStar = false;
    if (c === "?") out += "[^/]";
    else if (c === "\\" && i + 1 < seg.length) out += escapeRegexChar(seg[++i]!, fold);
    else if (c === "[") {
      const cls = convertClass(seg, i, fold);
      if (cls === undefined) out += escapeRegexChar(c, fold);
      else if (cls.regex === undefined) return undefined;
      else {
        out += cls.regex;
        i = cls.end - 1;
      }
    } else out += escapeRegexChar(c, fold);
  }
  return out;
}

/**
 * The class opening at `open`, as the matcher's `parseClass` reads it:
 * its regex (`undefined` when it matches no character of a name) and the
 * index after `]`; `undefined` if unclosed (the `[` is then a character).
 */
function convertClass(
  seg: string,
  open: number,
  fold: boolean,
): { regex: string | undefined; end: number } | undefined {
  let i = open + 1;
  const negate = seg[i] === "!" || seg[i] === "^";
  if (negate) i++;
  const members = new Set<number>();
  const add = (lo: number, hi: number): void => {
    for (let k = lo; k <= hi; k++) {
      if (k < 0x20 || k > 0x7e)
        throw new TypeError(
          "secrets: a [...] class can only hold printable ASCII characters in a Seatbelt profile; write other characters outside the class",
        );
      members.add(k);
      const ch = String.fromCharCode(k);
      if (fold && /[A-Za-z]/.test(ch)) {
        members.add(ch.toLowerCase().charCodeAt(0));
        members.add(ch.toUpperCase().charCodeAt(0));
      }
    }
  };
  let first = true;
  while (i < seg.length) {
    let c = seg[i]!;
    if (c === "]" && !first) return { regex: renderClass(members, negate), end: i + 1 };
    first = false;
    if (c === "[" && seg[i + 1] === ":") {
      const close = seg.indexOf(":]", i + 2);
      const name = close > 0 ? seg.slice(i + 2, close) : "";
      if (Object.hasOwn(POSIX_RANGES, name)) {
        for (const [lo, hi] of POSIX_RANGES[name]!) add(lo, hi);
        i = close + 2;
        continue;
      }
      if (POSIX_REFUSED.has(name))
        throw new TypeError(
          `secrets: [:${name}:] needs control characters, which a Seatbelt profile cannot hold; list the characters instead`,
        );
    }
    if (c === "\\" && i + 1 < seg.length) c = seg[++i]!;
    if (seg[i + 1] === "-" && i + 2 < seg.length && seg[i + 2] !== "]") {
      let hi = seg[i + 2]!;
      let next = i + 3;
      if (hi === "\\" && i + 3 < seg.length) {
        hi = seg[i + 3]!;
        next = i + 4;
      }
      // An empty range (`[z-a]`) matches nothing, in the matcher as here.
      if (c <= hi) add(c.charCodeAt(0), hi.charCodeAt(0));
      i = next;
      continue;
    }
    add(c.charCodeAt(0), c.charCodeAt(0));
    i++;
  }
  return undefined;
}

/**
 * A class as a regex that Seatbelt and JavaScript read alike: runs of
 * ordinary characters first, then `^` (never first), `\\`, `[` and `-`
 * (last); a `]` goes outside, as an alternative. A positive class never
 * matches `/` (a name has none); a negated one is given `/` to exclude.
 */
function renderClass(members: Set<number>, negate: boolean): string | undefined {
  const set = new Set(members);
  if (negate) set.add(SLASH);
  else set.delete(SLASH);
  if (!negate && set.size === 0) return undefined;
  const has = (c: string): boolean => set.has(c.charCodeAt(0));
  if (negate && has("]"))
    throw new TypeError(
      "secrets: ']' inside a negated class cannot be written in a Seatbelt profile; use a positive class or list the names",
    );
  let inside = "";
  const codes = [...set].filter((k) => !SPECIAL.has(String.fromCharCode(k))).sort((a, b) => a - b);
  for (let k = 0; k < codes.length; ) {
    let end = k;
    while (end + 1 < codes.length && codes[end + 1] === codes[end]! + 1) end++;
    const lo = String.fromCharCode(codes[k]!);
    const hi = String.fromCharCode(codes[end]!);
    inside += end === k ? lo : end === k + 1 ? lo + hi : `${lo}-${hi}`;
    k = end + 1;
  }
  const outside: string[] = [];
  if (has("^")) {
    if (inside === "") outside.push("\\^");
    else inside += "^";
  }
  if (has("\\")) inside += "\\\\";
  if (has("[")) inside += "[";
  if (has("-")) inside += "-";
  if (negate) return `[^${inside}]`;
  if (has("]")) outside.push("]");
  const parts = inside === "" ? outside : [`[${inside}]`, ...outside];
  return parts.length === 1 ? parts[0] : `(${parts.join("|")})`;
}
