/**
 * Text put into error messages, events and logs: a user- or worker-supplied
 * path quoted with its control characters escaped, lists of virtual paths,
 * and configuration key paths.
 */

/** Formats a list of virtual paths for a message, or `none`. */
export function formatPathList(paths: readonly string[]): string {
  return paths.length === 0 ? "none" : paths.join(", ");
}

// Strings a worker supplied reach a host's events, logs and error messages: a
// path may hold a newline or terminal escape sequences that would forge log
// lines or drive the operator's terminal.
/** C0 and C1 control characters, DEL, and the Unicode line and bidi controls. */
const CONTROL =
  /[\u0000-\u001f\u007f-\u009f\u061c\u180e\u200b-\u200f\u2028\u2029\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]/g;

/**
 * `s` with every control character written JSON-style (`\n`, `\t`,
 * `\u001b`, …; others as `\uXXXX`), backslashes left as they are.
 * Printable text, including non-ASCII letters, is unchanged.
 */
export function escapeControl(s: string): string {
  return s.replace(CONTROL, (c) => {
    const json = JSON.stringify(c).slice(1, -1);
    // JSON leaves C1, DEL and the Unicode controls as they are: spell them out.
    return json.length > 1 ? json : `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`;
  });
}

/** Quotes a user-supplied path for a message, escaping control characters. */
export function quotePath(path: string): string {
  const shown = path.length > 200 ? `${path.slice(0, 200)}…` : path;
  return `'${escapeControl(shown)}'`;
}

/** Formats a key path like zod: `sandbox.mounts[0].target`. */
export function formatKeyPath(path: readonly (string | number)[]): string {
  let out = "";
  for (const seg of path) {
    if (typeof seg === "number") out += `[${seg}]`;
    else if (!/^[A-Za-z_$][\w$]*$/.test(seg)) out += `[${JSON.stringify(seg)}]`;
    else out += out === "" ? seg : `.${seg}`;
  }
  return out;
}
