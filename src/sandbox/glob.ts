/**
 * Glob matching that cannot freeze the host.
 *
 * Semantics: a pattern is matched against a `/`-separated relative path,
 * segment by segment. A whole `**` segment spans zero or more segments
 * (a trailing `x/**` at least one);
 * `*` and `?` never cross `/` (and match a leading dot: dotfiles are listed);
 * `[…]` classes and `{a,b}` lists work within a segment; a leading `./` is
 * ignored; extglobs are off.
 *
 * picomatch compiles a whole pattern into one backtracking regex; `**`
 * chains or `*a*a*a*b` against deep paths or long names take seconds to
 * hours. Here a pattern is split on `/`: `**` segments are matched by
 * dynamic programming over path segments (O(pattern × path) steps), and
 * picomatch only ever sees one segment against one name (at most 255 bytes),
 * with a cap on `*` per segment. Brace lists that span `/` are expanded
 * first (at most {@link MAX_ALTERNATIVES}).
 */
import picomatch from "picomatch";
import { ioError } from "../errors.js";

const MAX_PATTERN = 1000;
const MAX_STARS_PER_SEGMENT = 3;
const MAX_ALTERNATIVES = 64;
const GLOBSTAR = Symbol("**");

type Segment = typeof GLOBSTAR | ((name: string) => boolean);

function refuse(pattern: string, why: string): never {
  throw ioError("list", undefined, `pattern '${pattern.slice(0, 100)}' ${why}`);
}

/** Expands `{a,b}` groups that contain `/` (others are left to picomatch). */
function expandBraces(pattern: string, out: string[]): void {
  let depth = 0;
  let open = -1;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === "\\") i++;
    else if (c === "{") {
      if (depth++ === 0) open = i;
    } else if (c === "}" && depth > 0 && --depth === 0) {
      const body = pattern.slice(open + 1, i);
      if (!body.includes("/")) continue;
      const parts: string[] = [];
      let d = 0;
      let from = 0;
      for (let k = 0; k <= body.length; k++) {
        const ch = body[k];
        if (ch === "{") d++;
        else if (ch === "}") d--;
        else if ((ch === "," && d === 0) || k === body.length) {
          parts.push(body.slice(from, k));
          from = k + 1;
        }
      }
      for (const p of parts) {
        if (out.length >= MAX_ALTERNATIVES)
          refuse(pattern, `has more than ${MAX_ALTERNATIVES} alternatives`);
        expandBraces(pattern.slice(0, open) + p + pattern.slice(i + 1), out);
      }
      return;
    }
  }
  out.push(pattern);
}

function compileSegments(pattern: string): Segment[] {
  const segs: Segment[] = [];
  for (const seg of pattern.split("/")) {
    if (seg === "." || seg === "") continue; // "./*.ts" means "*.ts"
    if (seg === "**") {
      if (segs.at(-1) !== GLOBSTAR) segs.push(GLOBSTAR);
      continue;
    }
    if (/^[^[\]{}\\()!+@]*$/.test(seg)) {
      // Only literals, `*` and `?`: the greedy matcher needs no regex.
      segs.push((name) => matchWildcard(seg, name));
      continue;
    }
    if ((seg.match(/\*+/g)?.length ?? 0) > MAX_STARS_PER_SEGMENT) {
      refuse(
        pattern,
        `is too complex: use at most ${MAX_STARS_PER_SEGMENT} '*' in a path segment with classes or braces`,
      );
    }
    segs.push(picomatch(seg, { dot: true, noextglob: true }));
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
  const alternatives: string[] = [];
  expandBraces(pattern, alternatives);
  const compiled = alternatives.map(compileSegments);
  return (path) => {
    const parts = path.split("/");
    return compiled.some((segs) => matchSegments(segs, parts));
  };
}
