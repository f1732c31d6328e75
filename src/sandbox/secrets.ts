/**
 * Secrets (DESIGN §10, "Secure defaults"): names withheld from every
 * operation, search, listing and shell command, at any depth.
 *
 * An entry is a name pattern matched against every segment of a virtual
 * path: `.env`, `*.pem`, `id_rsa*`. `*` stands for any run of characters
 * (none included), `?` for one; every other character is itself. A trailing
 * `/` (`.ssh/`) marks a folder for the reader; every entry withholds the
 * name whether it is a file or a folder, and everything below it. Names
 * compare regardless of case: on a case-insensitive file system (macOS,
 * Windows) `.ENV` opens `.env`, and on a case-sensitive one withholding a
 * `.ENV` too is never a reason to show less.
 *
 * Matching never backtracks (entries may come from a hostile worker's
 * delegation): each entry is compiled to an exact name, a prefix, a suffix,
 * a prefix-and-suffix, or a general pattern matched with one resume point
 * (O(name × pattern)). Pure: no fs.
 */
import { quotePath } from "../errors/index.js";

/** Most entries in one list (a derived list included). */
export const MAX_SECRET_ENTRIES = 256;
/** Longest entry, in characters (a file name is at most 255 bytes). */
const MAX_ENTRY_CHARS = 255;

/**
 * The default `secrets` list: environment files, private keys, package
 * manager and network credentials, cloud and SSH folders.
 */
export const DEFAULT_SECRETS: readonly string[] = Object.freeze([
  ".env",
  ".env.*",
  "*.pem",
  "*.key",
  "id_rsa*",
  "id_dsa*",
  "id_ecdsa*",
  "id_ed25519*",
  ".npmrc",
  ".netrc",
  ".git-credentials",
  ".aws/",
  ".ssh/",
]);

/** One compiled entry: a test on a lower-cased name. */
type NameTest = (name: string) => boolean;

/**
 * Why an entry is malformed, or `undefined` if it is a valid name pattern.
 * (For configuration and `derive()` messages.)
 */
export function checkSecretEntry(entry: unknown): string | undefined {
  if (typeof entry !== "string") return "a secrets entry must be a string";
  const name = entry.endsWith("/") ? entry.slice(0, -1) : entry;
  if (name === "") return "a secrets entry cannot be empty";
  if (entry.length > MAX_ENTRY_CHARS)
    return `a secrets entry is at most ${MAX_ENTRY_CHARS} characters`;
  if (entry.includes("\0")) return "a secrets entry cannot contain a NUL byte";
  if (name.includes("/") || name.includes("\\"))
    return `a secrets entry is a name matched at any depth (such as '.env' or '*.pem'), not a path: ${quotePath(entry)} holds a '/' or '\\' (only one trailing '/' marking a folder is allowed)`;
  if (name === "." || name === "..") return `${quotePath(entry)} is not a name`;
  return undefined;
}

/**
 * A validated list of secret name patterns, compiled for matching. Build
 * one with {@link SecretList.parse} (or {@link SecretList.of} for a list
 * already checked).
 */
export class SecretList {
  /** The entries as given (duplicates removed), in order. */
  readonly entries: readonly string[];
  readonly #tests: readonly NameTest[];
  /** Lower-cased names already decided (names repeat: `src`, `index.ts`). */
  readonly #memo = new Map<string, number>();

  private constructor(entries: readonly string[]) {
    this.entries = Object.freeze([...new Set(entries)]);
    this.#tests = this.entries.map(compileEntry);
  }

  /** The empty list (`secrets: []`). */
  static readonly NONE = new SecretList([]);

  /**
   * Validates and compiles a list.
   * @returns the list, or the problems found (index and message)
   */
  static parse(list: unknown): SecretList | { index: number; message: string }[] {
    if (!Array.isArray(list)) return [{ index: -1, message: "expected a list of names" }];
    const problems: { index: number; message: string }[] = [];
    if (list.length > MAX_SECRET_ENTRIES)
      problems.push({ index: -1, message: `at most ${MAX_SECRET_ENTRIES} entries` });
    list.forEach((e, index) => {
      const message = checkSecretEntry(e);
      if (message !== undefined) problems.push({ index, message });
    });
    return problems.length > 0 ? problems : new SecretList(list as string[]);
  }

  /**
   * A list from entries already validated (config output, a policy's own).
   * @throws TypeError if one is malformed (a bug, or a forged wire)
   */
  static of(entries: readonly string[]): SecretList {
    const parsed = SecretList.parse(entries);
    if (parsed instanceof SecretList) return parsed;
    throw new TypeError(`invalid secrets list: ${parsed[0]?.message ?? "malformed"}`);
  }

  /** This list plus `more` (a derived sandbox's list: never shorter). */
  union(more: SecretList): SecretList {
    if (more.entries.length === 0) return this;
    if (this.entries.length === 0) return more;
    const all = [...this.entries, ...more.entries];
    if (all.length > MAX_SECRET_ENTRIES && new Set(all).size > MAX_SECRET_ENTRIES)
      throw new RangeError(`a secrets list holds at most ${MAX_SECRET_ENTRIES} entries`);
    return new SecretList(all);
  }

  /** The entry a single name (a path segment) matches, or `undefined`. */
  entryForName(name: string): string | undefined {
    const i = this.#indexForName(name);
    return i < 0 ? undefined : this.entries[i];
  }

  /** True if the name (one path segment) matches an entry. */
  matchesName(name: string): boolean {
    return this.#tests.length > 0 && this.#indexForName(name) >= 0;
  }

  /**
   * The first segment of canonical virtual path `v` that matches an entry,
   * as `{ at, entry }` (`at`: the path up to and including that segment), or
   * `undefined` when no segment does.
   */
  find(v: string): { at: string; entry: string } | undefined {
    if (this.#tests.length === 0) return undefined;
    let start = 1;
    while (start < v.length) {
      let end = v.indexOf("/", start);
      if (end < 0) end = v.length;
      const i = this.#indexForName(v.slice(start, end));
      if (i >= 0) return { at: v.slice(0, end), entry: this.entries[i]! };
      start = end + 1;
    }
    return undefined;
  }

  /** True if any segment of canonical virtual path `v` matches an entry. */
  covers(v: string): boolean {
    return this.find(v) !== undefined;
  }

  #indexForName(name: string): number {
    const lower = name.toLowerCase();
    const known = this.#memo.get(lower);
    if (known !== undefined) return known;
    let found = -1;
    for (let i = 0; i < this.#tests.length; i++) {
      if (this.#tests[i]!(lower)) {
        found = i;
        break;
      }
    }
    // Bounded: a walk over many distinct names must not grow it forever.
    if (this.#memo.size >= 4096) this.#memo.clear();
    this.#memo.set(lower, found);
    return found;
  }
}

/** Compiles one entry to a test on a lower-cased name. */
function compileEntry(entry: string): NameTest {
  const pattern = (entry.endsWith("/") ? entry.slice(0, -1) : entry).toLowerCase();
  if (!pattern.includes("?")) {
    const parts = pattern.split("*");
    if (parts.length === 1) return (n) => n === pattern;
    const first = parts[0]!;
    const last = parts[parts.length - 1]!;
    if (parts.length === 2 || parts.slice(1, -1).every((p) => p === ""))
      return (n) =>
        n.length >= first.length + last.length && n.startsWith(first) && n.endsWith(last);
  }
  return (n) => matchWildcard(pattern, n);
}

/**
 * `*`/`?` matching with a single resume point (the last `*` seen): linear
 * in practice, O(pattern × name) at worst, never exponential.
 */
function matchWildcard(p: string, n: string): boolean {
  let pi = 0;
  let ni = 0;
  let star = -1;
  let resume = 0;
  while (ni < n.length) {
    const c = p[pi];
    if (c === "*") {
      star = pi++;
      resume = ni;
    } else if (c !== undefined && (c === "?" || c === n[ni])) {
      pi++;
      ni++;
    } else if (star >= 0) {
      pi = star + 1;
      ni = ++resume;
    } else {
      return false;
    }
  }
  while (p[pi] === "*") pi++;
  return pi === p.length;
}
