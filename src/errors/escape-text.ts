/**
 * Text put into error messages, events and logs: a user- or worker-supplied
 * path quoted with its control characters escaped, lists of virtual paths,
 * and configuration key paths.
 */

/** Formats a list of virtual paths for a message, or `none`. */
export function formatPathList(paths: readonly string[]): string {
  return paths.length === 0 ? "none" : paths.join(", ");
}

// Strings a worker supplied reach a host's events, logs, error messages and
// the approver: a path may hold a newline or terminal escape sequences that
// would forge log lines or drive the operator's terminal, or invisible
// characters (format, tag, filler) that make `/pub/report.md` plus hidden
// text look like `/pub/report.md` to a person (issue 18).
/**
 * Every character that shows as nothing, or as something it is not:
 * control (Cc), format (Cf: bidi, zero-width, soft hyphen, tags U+E0000–
 * U+E007F, …), private use (Co), unassigned (Cn, as this Node's ICU knows
 * them), lone surrogates (Cs), line and paragraph separators, the
 * invisible fillers (combining grapheme joiner, Hangul fillers) and the
 * variation selectors (which can smuggle text behind an emoji). The
 * explicit ranges keep the old list whatever the ICU's Unicode version.
 */
const UNSAFE = new RegExp(
  [
    String.raw`[\p{Cc}\p{Cf}\p{Co}\p{Cn}\p{Cs}\p{Zl}\p{Zp}]`,
    String.raw`[\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]`,
    // Fillers, then the combining ones (a class of its own each: one code point per match).
    String.raw`[\u115f\u1160\u3164\uffa0]`,
    String.raw`\u034f|[\u17b4\u17b5]|[\u180b-\u180d\u180f]|[\ufe00-\ufe0f]|[\u{e0100}-\u{e01ef}]`,
  ].join("|"),
  "gu",
);

/** JSON's short forms; every other unsafe character is spelled as its code point. */
const SHORT: Record<string, string> = {
  "\b": "\\b",
  "\t": "\\t",
  "\n": "\\n",
  "\f": "\\f",
  "\r": "\\r",
};

/**
 * `s` with every unsafe character (see above) escaped: `\n`, `\t`, … for
 * JSON's short forms, `\uXXXX` for others in the Basic Multilingual Plane,
 * `\u{XXXXX}` above it (tag characters: `\u{e0041}`). Backslashes are left
 * as they are. Printable text, including non-ASCII letters, is unchanged.
 */
export function escapeControl(s: string): string {
  // Cut first: escaped, tens of millions of control characters make a string
  // longer than V8 allows, which aborts the process from inside the regexp
  // engine (found by an adversarial review, from an agent's error message).
  const text = s.length > MAX_ESCAPED_CHARS ? `${s.slice(0, MAX_ESCAPED_CHARS)}\u2026` : s;
  return text.replace(UNSAFE, (c) => {
    const short = SHORT[c];
    if (short !== undefined) return short;
    const cp = c.codePointAt(0) as number;
    const hex = cp.toString(16);
    return cp > 0xffff ? `\\u{${hex}}` : `\\u${hex.padStart(4, "0")}`;
  });
}

/** Longest text {@link escapeControl} escapes; the rest is cut. */
export const MAX_ESCAPED_CHARS = 1 << 20;

/** Longest text {@link shortenMiddle} leaves whole. */
export const SHOWN_CHARS = 200;

/**
 * `s` cut in the middle to at most `max` code points (a `…` for the rest),
 * keeping more of its end than its start: the end of a path names the
 * file, and a hidden end is where a long path would hide what it reaches.
 * Cut before escaping, so an escape sequence is never split.
 */
export function shortenMiddle(s: string, max = SHOWN_CHARS): string {
  if (s.length <= max) return s;
  const head = Math.floor((max - 1) * 0.4);
  const tail = max - 1 - head;
  // Past 4 × max code units there are more than max code points: list only
  // both ends (listing a 100-million-character path stalled the host).
  if (s.length > 4 * max) {
    const start = Array.from(s.slice(0, 2 * max)).slice(0, head);
    const end = Array.from(s.slice(-2 * max));
    return `${start.join("")}\u2026${end.slice(end.length - tail).join("")}`;
  }
  const cps = Array.from(s);
  if (cps.length <= max) return s;
  return `${cps.slice(0, head).join("")}\u2026${cps.slice(cps.length - tail).join("")}`;
}

/**
 * Quotes a user-supplied path for a message, escaping unsafe characters;
 * a long path is cut in the middle so its end stays visible.
 */
export function quotePath(path: string): string {
  return `'${escapeControl(shortenMiddle(path))}'`;
}

/** Formats a key path like zod: `sandbox.mounts[0].target`. */
export function formatKeyPath(path: readonly (string | number)[]): string {
  let out = "";
  for (const seg of path) {
    if (typeof seg === "number") out += `[${seg}]`;
    else if (!/^[A-Za-z_$][\w$]*$/.test(seg))
      out += `[${JSON.stringify(seg.slice(0, 64))}${seg.length > 64 ? "\u2026" : ""}]`;
    else out += out === "" ? seg : `.${seg}`;
  }
  return out;
}

/**
 * Node's text with each host path or file URL cut to its last part
 * ("Cannot find module 'nope.js' imported from main.js"): the caller of a
 * delegation is another agent, or a model, and learns no host folder.
 */
export function hideHostPaths(text: string): string {
  return text.replace(/(?:file:\/\/)?\/[^\s'"`]+/g, (p) => p.slice(p.lastIndexOf("/") + 1));
}

/**
 * True for a `code` Node gives its own errors (`ERR_…`, `MODULE_NOT_FOUND`,
 * a system error's `ENOENT`…), whose text may hold host paths.
 */
export function isNodeErrorCode(code: unknown): boolean {
  return typeof code === "string" && /^(ERR_[A-Z0-9_]+|MODULE_NOT_FOUND|E[A-Z0-9]+)$/.test(code);
}
