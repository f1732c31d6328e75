/**
 * A small reader of the Seatbelt profiles mountbox writes (one rule per
 * line), deciding file operations on paths the way Seatbelt does: the last
 * matching rule wins, `(deny default)` otherwise. `subpath`, `literal` and
 * `regex` filters are understood (regexes run with JavaScript's engine:
 * the profile writes them so that both read them alike); a rule with any
 * other filter does not apply to a path.
 */
import { isWithin } from "../../src/sandbox/virtual-path.js";

interface Rule {
  allow: boolean;
  ops: string[];
  filters: { kind: string; arg: string }[];
  /** True if the rule has a filter this reader does not know (target, global-name…). */
  other: boolean;
}

/** Undoes the profile's string escapes (`\\` and `\"`). */
export function unquoteSbpl(quoted: string): string {
  return quoted.slice(1, -1).replace(/\\(.)/gs, "$1");
}

/** The strings of a profile line, unescaped. */
export function listStrings(line: string): string[] {
  return [...line.matchAll(/"(?:[^"\\]|\\.)*"/gs)].map((m) => unquoteSbpl(m[0]));
}

/** Parses the rules of a profile. */
export function parseProfile(text: string): Rule[] {
  const rules: Rule[] = [];
  for (const line of text.split("\n")) {
    const head = /^\((allow|deny) ([^()]+?)(?: (\(.*\)))?\)$/.exec(line);
    if (head === null) continue;
    const filters: Rule["filters"] = [];
    let other = false;
    for (const m of (head[3] ?? "").matchAll(
      /\(([a-z-]+) ((?:"(?:[^"\\]|\\.)*")|[^()]*(?:\([^()]*\))?)\)/g,
    )) {
      const kind = m[1]!;
      if (kind === "subpath" || kind === "literal" || kind === "regex")
        filters.push({ kind, arg: unquoteSbpl(m[2]!) });
      else other = true;
    }
    rules.push({ allow: head[1] === "allow", ops: head[2]!.split(" "), filters, other });
  }
  return rules;
}

function coversOp(ops: readonly string[], op: string): boolean {
  return ops.some((o) => o === op || (o.endsWith("*") && op.startsWith(o.slice(0, -1))));
}

/** Seatbelt's verdict for `op` (e.g. `file-read-data`) on `path`. */
export function decide(rules: readonly Rule[], op: string, path: string): boolean {
  let verdict = false;
  for (const r of rules) {
    if (r.other || !coversOp(r.ops, op)) continue;
    const hit =
      r.filters.length === 0 ||
      r.filters.some((f) =>
        f.kind === "subpath"
          ? isWithin(path, f.arg)
          : f.kind === "literal"
            ? path === f.arg
            : new RegExp(f.arg).test(path),
      );
    if (hit) verdict = r.allow;
  }
  return verdict;
}
