/**
 * Glob matching that cannot freeze the host.
 *
 * Semantics: a pattern is matched against a `/`-separated relative path,
 * segment by segment. A whole `**` segment spans zero or more segments
 * (a trailing `x/**` at least one);
 * `*` and `?` never cross `/` (and match a leading dot: dotfiles are listed);
 * `[…]` classes (ranges, `!`/`^` negation, `[:alpha:]`-style names) and
 * `{a,b}` lists work within a segment; `\\` escapes; a leading `./` is
 * ignored; extglobs are off (`(`, `|`, `!`, `+`, `@` are plain characters).
 *
 * Why no regex engine: a backtracking regex (picomatch's) takes exponential
 * time on `{?,??}{?,??}…Z` or `*a*a*a*b` against a long name — one pattern
 * froze the host for a minute. Here every step has a known cost:
 * - `**` segments are matched by dynamic programming over path segments
 *   (O(pattern × path) steps);
 * - one segment against one name is a greedy `*` match with a single resume
 *   point over single-character tokens (O(segment × name), never exponential);
 * - brace lists are expanded, but the expansion is counted before it is built:
 *   at most {@link MAX_ALTERNATIVES} whole-pattern alternatives and
 *   {@link MAX_SEGMENT_CHARS} expanded characters per segment, or the
 *   pattern is refused with an error naming the bound.
 * So one match costs at most ~MAX_SEGMENT_CHARS × 255 character steps per
 * segment (a few ms), and listings yield to the event loop between matches.
 */
import { escapeControl, ioError } from "../errors/index.js";

const MAX_PATTERN = 1000;
/** Whole-pattern alternatives (brace lists that span `/`). */
const MAX_ALTERNATIVES = 64;
/** Alternatives of one segment's brace lists. */
const MAX_SEGMENT_ALTERNATIVES = 256;
/** Characters of one segment once its brace lists are expanded. */
const MAX_SEGMENT_CHARS = 8192;
const GLOBSTAR = Symbol("**");

type Segment = typeof GLOBSTAR | ((name: string) => boolean);
/** One single-character test, or `*` (STAR). */
type Token = string | ((c: string) => boolean) | typeof STAR;
const STAR = Symbol("*");
const ANY = (): boolean => true;

function refuse(pattern: string, why: string): never {
  throw ioError("list", undefined, `pattern '${escapeControl(pattern.slice(0, 100))}' ${why}`);
}

/** Index of the `}` closing the `{` at `open`, or -1 (escapes skipped). */
function closingBrace(s: string, open: number): number {
  let depth = 0;
  for (let i = open; i < s.length; i++) {
    const c = s[i];
    if (c === "\\") i++;
    else if (c === "{") depth++;
    else if (c === "}" && --depth === 0) return i;
  }
  return -1;
}

/** The comma-separated parts of a brace body (top level only), or undefined for no comma. */
function splitBody(body: string): string[] | undefined {
  const parts: string[] = [];
  let depth = 0;
  let from = 0;
  for (let k = 0; k < body.length; k++) {
    const ch = body[k];
    if (ch === "\\") k++;
    else if (ch === "{") depth++;
    else if (ch === "}") depth--;
    else if (ch === "," && depth === 0) {
      parts.push(body.slice(from, k));
      from = k + 1;
    }
  }
  if (parts.length === 0) return undefined; // `{x}`: a literal, as in bash
  parts.push(body.slice(from));
  return parts;
}

/**
 * How many alternatives `s` expands to, saturating at `cap + 1` (counted,
 * never built: `{?,??}` × 32 is 2^32).
 */
function countAlternatives(s: string, cap: number, spanning: boolean): number {
  let total = 1;
  for (let l = nextBraceList(s, 0, spanning); l; l = nextBraceList(s, l.close + 1, spanning)) {
    let sum = 0;
    for (const p of l.parts) sum = Math.min(cap + 1, sum + countAlternatives(p, cap, spanning));
    total = Math.min(cap + 1, total * sum);
  }
  return total;
}

/**
 * The first brace list of `s` at or after `from` that applies (with
 * `spanning`, only lists containing `/`): where it opens and closes, and its
 * alternatives. Escaped characters are skipped; an unclosed `{` ends the
 * search.
 */
function nextBraceList(
  s: string,
  from: number,
  spanning: boolean,
): { open: number; close: number; parts: string[] } | undefined {
  for (let i = from; i < s.length; i++) {
    if (s[i] === "\\") {
      i++;
      continue;
    }
    if (s[i] !== "{") continue;
    const close = closingBrace(s, i);
    if (close < 0) return undefined;
    const body = s.slice(i + 1, close);
    const parts = spanning && !body.includes("/") ? undefined : splitBody(body);
    if (parts) return { open: i, close, parts };
  }
  return undefined;
}

/**
 * Expands brace lists of `s` into `out`: with `spanning`, only lists that
 * contain `/` (the rest are left for each segment); otherwise every list.
 * Callers count first; `budget` stops a runaway expansion anyway.
 */
function expand(s: string, out: string[], spanning: boolean, budget: { chars: number }): void {
  const l = nextBraceList(s, 0, spanning);
  if (l) {
    for (const p of l.parts)
      expand(s.slice(0, l.open) + p + s.slice(l.close + 1), out, spanning, budget);
    return;
  }
  budget.chars -= s.length;
  if (budget.chars < 0) throw new RangeError("expansion budget");
  out.push(s);
}

/** POSIX class names inside `[…]`. */
const POSIX: Record<string, (c: string) => boolean> = {
  alnum: (c) => /[A-Za-z0-9]/.test(c),
  alpha: (c) => /[A-Za-z]/.test(c),
  ascii: (c) => c.charCodeAt(0) < 128,
  blank: (c) => c === " " || c === "\t",
  cntrl: (c) => c.charCodeAt(0) < 32 || c.charCodeAt(0) === 127,
  digit: (c) => c >= "0" && c <= "9",
  graph: (c) => c.charCodeAt(0) > 32 && c.charCodeAt(0) < 127,
  lower: (c) => c >= "a" && c <= "z",
  print: (c) => c.charCodeAt(0) >= 32 && c.charCodeAt(0) < 127,
  punct: (c) => /[!-/:-@[-`{-~]/.test(c),
  space: (c) => /\s/.test(c),
  upper: (c) => c >= "A" && c <= "Z",
  word: (c) => /\w/.test(c),
  xdigit: (c) => /[0-9A-Fa-f]/.test(c),
};

/** Parses the class starting at `[` at `open`: its test and the index after `]`, or undefined. */
function parseClass(
  seg: string,
  open: number,
): { test: (c: string) => boolean; end: number } | undefined {
  let i = open + 1;
  const negate = seg[i] === "!" || seg[i] === "^";
  if (negate) i++;
  const tests: ((c: string) => boolean)[] = [];
  let first = true;
  while (i < seg.length) {
    let c = seg[i]!;
    if (c === "]" && !first) {
      const any = (ch: string) => tests.some((t) => t(ch));
      return { test: negate ? (ch) => !any(ch) : any, end: i + 1 };
    }
    first = false;
    if (c === "[" && seg[i + 1] === ":") {
      const close = seg.indexOf(":]", i + 2);
      // Own names only: `[[:toString:]]` is no class (a prototype lookup
      // would make it match every character, or throw while matching).
      const name = close > 0 ? seg.slice(i + 2, close) : "";
      const named = Object.hasOwn(POSIX, name) ? POSIX[name] : undefined;
      if (named) {
        tests.push(named);
        i = close + 2;
        continue;
      }
    }
    if (c === "\\" && i + 1 < seg.length) c = seg[++i]!;
    if (seg[i + 1] === "-" && i + 2 < seg.length && seg[i + 2] !== "]") {
      let hi = seg[i + 2]!;
      let next = i + 3;
      if (hi === "\\" && i + 3 < seg.length) {
        hi = seg[i + 3]!;
        next = i + 4;
      }
      const lo = c;
      tests.push((ch) => ch >= lo && ch <= hi);
      i = next;
      continue;
    }
    const lit = c;
    tests.push((ch) => ch === lit);
    i++;
  }
  return undefined; // no closing `]`: the `[` is a plain character
}

/** One brace-free segment as tokens. */
function tokenize(seg: string): Token[] {
  const out: Token[] = [];
  for (let i = 0; i < seg.length; i++) {
    const c = seg[i]!;
    if (c === "*") {
      if (out.at(-1) !== STAR) out.push(STAR);
    } else if (c === "?") out.push(ANY);
    else if (c === "\\" && i + 1 < seg.length) out.push(seg[++i]!);
    else if (c === "[") {
      const cls = parseClass(seg, i);
      if (cls) {
        out.push(cls.test);
        i = cls.end - 1;
      } else out.push(c);
    } else out.push(c);
  }
  return out;
}

/**
 * Greedy matching of single-character tokens and `*`, with one resume point:
 * correct because every token but `*` takes exactly one character, and
 * O(tokens × name) at worst.
 */
function matchTokens(tokens: Token[], name: string): boolean {
  let p = 0;
  let n = 0;
  let star = -1;
  let mark = 0;
  while (n < name.length) {
    const t = tokens[p];
    if (t === STAR) {
      star = p++;
      mark = n;
    } else if (t !== undefined && (typeof t === "string" ? t === name[n] : t(name[n]!))) {
      p++;
      n++;
    } else if (star >= 0) {
      p = star + 1;
      n = ++mark;
    } else {
      return false;
    }
  }
  while (tokens[p] === STAR) p++;
  return p === tokens.length;
}

/**
 * The brace alternatives of one path segment of `pattern` (no `/` in it),
 * expanded exactly as matching does, within the same bounds. Exported for
 * translators of name globs into other matchers (a Seatbelt regex), so
 * that both agree on what a brace list means.
 * @throws IoError past {@link MAX_SEGMENT_ALTERNATIVES} alternatives or
 *   {@link MAX_SEGMENT_CHARS} expanded characters
 */
export function expandSegmentBraces(pattern: string, seg: string): string[] {
  if (countAlternatives(seg, MAX_SEGMENT_ALTERNATIVES, false) > MAX_SEGMENT_ALTERNATIVES)
    refuse(
      pattern,
      `has more than ${MAX_SEGMENT_ALTERNATIVES} brace alternatives in one path segment`,
    );
  const alternatives: string[] = [];
  try {
    expand(seg, alternatives, false, { chars: MAX_SEGMENT_CHARS });
  } catch {
    refuse(pattern, `expands to more than ${MAX_SEGMENT_CHARS} characters in one path segment`);
  }
  return alternatives;
}

function compileSegment(pattern: string, seg: string): Segment {
  if (/^[^[\]{}\\]*$/.test(seg)) return (name) => matchWildcard(seg, name);
  const compiled = expandSegmentBraces(pattern, seg).map(tokenize);
  if (compiled.length === 1) {
    const only = compiled[0]!;
    return (name) => matchTokens(only, name);
  }
  return (name) => compiled.some((t) => matchTokens(t, name));
}

function compileSegments(pattern: string, alternative: string): Segment[] {
  const segs: Segment[] = [];
  for (const seg of alternative.split("/")) {
    if (seg === "." || seg === "") continue; // "./*.ts" means "*.ts"
    if (seg === "**") {
      if (segs.at(-1) !== GLOBSTAR) segs.push(GLOBSTAR);
      continue;
    }
    segs.push(compileSegment(pattern, seg));
  }
  return segs;
}

/**
 * `*` / `?` matching of one name, greedy with a single resume point:
 * O(pattern × name) at worst, never exponential.
 */
export function matchWildcard(pattern: string, name: string): boolean {
  let p = 0;
  let n = 0;
  let star = -1;
  let mark = 0;
  while (n < name.length) {
    const c = pattern[p];
    if (c === "*") {
      star = p++;
      mark = n;
    } else if (c !== undefined && (c === "?" || c === name[n])) {
      p++;
      n++;
    } else if (star >= 0) {
      p = star + 1;
      n = ++mark;
    } else {
      return false;
    }
  }
  while (pattern[p] === "*") p++;
  return p === pattern.length;
}

/** Can `segs[i..]` match `parts[j..]`? Memoized: each (i, j) is decided once. */
function matchSegments(segs: Segment[], parts: string[]): boolean {
  const width = parts.length + 1;
  const memo = new Uint8Array((segs.length + 1) * width); // 0 unknown, 1 no, 2 yes
  const go = (i: number, j: number): boolean => {
    const key = i * width + j;
    if (memo[key] !== 0) return memo[key] === 2;
    let ok: boolean;
    const seg = segs[i];
    if (seg === undefined) ok = j === parts.length;
    else if (seg === GLOBSTAR && i > 0 && i === segs.length - 1) {
      // A trailing `x/**` takes all the rest, at least one segment: a file
      // named `src` does not match `src/**` (as in picomatch).
      ok = j < parts.length;
    } else if (seg === GLOBSTAR) {
      ok = go(i + 1, j) || (j < parts.length && go(i, j + 1));
    } else ok = j < parts.length && seg(parts[j]!) && go(i + 1, j + 1);
    memo[key] = ok ? 2 : 1;
    return ok;
  };
  return go(0, 0);
}

/**
 * Compiles a glob (matched against `/`-separated relative paths, dotfiles
 * included, no extglobs).
 * @throws IoError for an empty, over-long or too complex pattern
 */
export function compileGlob(pattern: unknown): (path: string) => boolean {
  if (typeof pattern !== "string" || pattern === "" || pattern.length > MAX_PATTERN) {
    throw ioError(
      "list",
      undefined,
      `pattern must be a non-empty glob of at most ${MAX_PATTERN} characters, such as '**/*.ts'`,
    );
  }
  if (countAlternatives(pattern, MAX_ALTERNATIVES, true) > MAX_ALTERNATIVES)
    refuse(pattern, `has more than ${MAX_ALTERNATIVES} alternatives`);
  const alternatives: string[] = [];
  expand(pattern, alternatives, true, { chars: Number.POSITIVE_INFINITY });
  const compiled = alternatives.map((a) => compileSegments(pattern, a));
  return (path) => {
    const parts = path.split("/");
    return compiled.some((segs) => matchSegments(segs, parts));
  };
}
