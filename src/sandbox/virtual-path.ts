/**
 * Virtual paths: pure string functions, no file system.
 *
 * A virtual path is POSIX, absolute, `/`-separated, with no `.`/`..`
 * segments, no empty segments and no trailing `/` (except `/` itself).
 */
import { invalidPath } from "../errors/index.js";

/** Longest accepted path, in UTF-8 bytes. */
export const MAX_PATH_BYTES = 4096;

// Anything that needs the slow path: a separator to convert, a segment to
// collapse, a trailing slash, or a character we must reject.
const NEEDS_WORK = /\\|\/\/|\/\.\.?(?:\/|$)|\/$|\0/;
const DRIVE_LETTER = /^[A-Za-z]:(?:[\\/]|$)/;

/** Options that change how a path is read; all optional. */
export interface NormalizeOptions {
  /**
   * Names of the legacy named-paths form: `name:rel` is read as `/name/rel`.
   */
  names?: ReadonlySet<string>;
}

/**
 * Normalizes a user-supplied path to its canonical virtual form.
 *
 * Relative paths are relative to `/`. `\` becomes `/`, `//` and `/./`
 * collapse, a trailing `/` is dropped, and `..` is resolved here, before any
 * mount lookup. Returns `null` when `..` would climb above `/` (the caller
 * reports that as outside the sandbox, never clamps it).
 *
 * A relative name starting with `~` (`~backup`) is a name at the root; only
 * `~` itself and `~/…` (a home directory) are refused. Names are kept byte
 * for byte: NFC and NFD spellings of one name are different names.
 *
 * @throws InvalidPathError for non-strings, NUL bytes, `~` or `~/…`, a drive
 *   letter, or more than {@link MAX_PATH_BYTES} bytes.
 */
export function normalizeVirtualPath(input: string, opts?: NormalizeOptions): string | null {
  if (typeof input !== "string") {
    throw invalidPath(
      undefined,
      `expected a string, received ${input === null ? "null" : typeof input}`,
      "Pass a virtual path such as '/src/index.ts'.",
    );
  }
  // Fast path: already canonical and absolute (the common case for tools).
  if (input.charCodeAt(0) === 47 && input.length <= MAX_PATH_BYTES / 4 && !NEEDS_WORK.test(input)) {
    return input;
  }
  if (input.includes("\0")) {
    throw invalidPath(input, "it contains a NUL byte", "Remove the NUL character from the path.");
  }
  if (input.length > MAX_PATH_BYTES / 4 && Buffer.byteLength(input, "utf8") > MAX_PATH_BYTES) {
    throw invalidPath(
      undefined,
      `it is longer than ${MAX_PATH_BYTES} bytes`,
      "Use a shorter path.",
    );
  }
  let p = input.includes("\\") ? input.replaceAll("\\", "/") : input;
  // Only what can mean a home directory: `~` alone or `~/…`. A name that
  // starts with `~` (`~backup`, Office's `~$report.docx`) is a file name, and
  // so is `~user/…` (there are no users here; a folder may be named so).
  if (p === "~" || p.startsWith("~/")) {
    throw invalidPath(
      input,
      "'~' (a home directory) has no meaning here",
      `Use a virtual path starting with '/', for example '/${p.slice(1).replace(/^\/+/, "")}'.`,
    );
  }
  if (opts?.names && !p.startsWith("/")) {
    const colon = p.indexOf(":");
    if (colon > 0 && opts.names.has(p.slice(0, colon))) {
      p = `/${p.slice(0, colon)}/${p.slice(colon + 1)}`;
    }
  }
  if (DRIVE_LETTER.test(p)) {
    throw invalidPath(
      input,
      "drive letters are not supported",
      `Use a virtual path starting with '/', for example '/${p.slice(2).replace(/^\/+/, "")}'.`,
    );
  }
  const out: string[] = [];
  for (const seg of p.split("/")) {
    if (seg === "" || seg === ".") continue;
    if (seg === "..") {
      if (out.length === 0) return null;
      out.pop();
    } else {
      out.push(seg);
    }
  }
  return out.length === 0 ? "/" : `/${out.join("/")}`;
}

/** True if `path` is `area` or lies below it (whole segments only). */
export function isWithin(path: string, area: string): boolean {
  if (area === "/") return true;
  return path === area || (path.startsWith(area) && path.charCodeAt(area.length) === 47);
}

/** Joins a canonical virtual directory and a relative `/`-separated tail. */
export function joinVirtual(dir: string, rel: string): string {
  if (rel === "") return dir;
  return dir === "/" ? `/${rel}` : `${dir}/${rel}`;
}

/** The last segment of a virtual path (`""` for `/`). */
export function baseName(path: string): string {
  return path.slice(path.lastIndexOf("/") + 1);
}

/** The parent of a canonical virtual path (`/` for `/`). */
export function parentPath(path: string): string {
  const i = path.lastIndexOf("/");
  return i <= 0 ? "/" : path.slice(0, i);
}

/** The suffix of a file name from its last dot (`.md`; `""` if none). */
export function suffixOf(name: string): string {
  const i = name.lastIndexOf(".");
  return i < 0 ? "" : name.slice(i);
}
