/**
 * The sandbox's own plain data: what `Sandbox` and the pool's search return,
 * in virtual paths only. The core owns these types; the wire protocol, the
 * tools and the thread side import them from here (nothing here imports
 * anything, so every layer may).
 */

/** What a sandbox permits, in virtual paths only. */
export interface SandboxDescription {
  /** Readable virtual areas, e.g. `["/src", "/cache"]`. */
  readable: string[];
  /** Writable virtual areas. */
  writable: string[];
  /** Visible mounts (the root is `/`); never a source path. */
  mounts: { target: string; readonly: boolean }[];
  /**
   * Secret name patterns (matched at any depth, regardless of case): files
   * and folders so named are withheld from every operation, listing,
   * search and shell command. Empty when nothing is withheld.
   */
  secrets: string[];
  suffixes?: string[];
  maxFileBytes?: number;
}

/** One exact-text replacement for {@link Sandbox.editFile}. */
export interface FileEdit {
  oldText: string;
  newText: string;
}

/** Result of {@link Sandbox.stat}. */
export interface FileStat {
  type: "file" | "directory";
  size: number;
  mtimeMs: number;
}

// ---- grep (the pool's search; also the port's `grep` operation) ----

/** Options of a search, as a tool passes them. */
export interface GrepOptions {
  /** Regular expression source (JavaScript syntax), matched line by line. */
  pattern: string;
  /** RegExp flags among `i`, `m`, `s`, `u`, `v`, `d`; `g` and `y` are ignored. */
  flags?: string | undefined;
  /** Virtual folder (or file) to search under. Default `/`. */
  path?: string | undefined;
  /** Glob on paths relative to `path`. Default `**\/*`. */
  glob?: string | undefined;
  /** Stop after this many matches. Default 100, at most 10 000. */
  maxMatches?: number | undefined;
  /** Stop after reading this many bytes of file content. Default 64 MiB. */
  maxBytes?: number | undefined;
  /** Skip files larger than this (besides the sandbox's own cap). Default 8 MiB. */
  maxFileBytes?: number | undefined;
  /** Stop after this long, in ms (0: before the first file). Default 10 000, at most 120 000. */
  timeBudgetMs?: number | undefined;
  /**
   * Test only the first this-many characters of each line (the rest can
   * neither match nor cost time). Default: the whole line.
   */
  maxLineChars?: number | undefined;
}

/** One matching line. */
export interface GrepMatch {
  /** Virtual path of the file. */
  path: string;
  /** 1-based line number. */
  line: number;
  /** The line, without its line ending, cut at 500 characters (then `…`). */
  text: string;
}

/** What a search found. */
export interface GrepResult {
  /** Matches in file order (listing order), then line order. */
  matches: GrepMatch[];
  /** True when the search stopped before searching everything. */
  truncated: boolean;
  /** For the model: why it stopped early, and which files were skipped. */
  notice?: string;
  /** Files whose content was searched. */
  filesSearched: number;
  /** Files the search set out to read (listed under the path, or the one file). */
  filesListed: number;
  /** Which budget ended the search, when one did (`truncated` is then true). */
  stoppedBy?: "matches" | "bytes" | "time";
  /** Files not searched, by reason (what `notice` sums up). */
  skipped: { binary: number; tooLarge: number; unreadable: number };
}

/**
 * Limits of one whole-file read beyond the mounts' own (an agent's port
 * passes them; the host's own calls need none).
 */
export interface ReadOptions {
  /**
   * Cap in bytes where no mount sets `maxFileBytes`. A bigger file is refused
   * with a `FileTooLargeError` that says how to read a part.
   */
  defaultMaxBytes?: number | undefined;
  /**
   * Called with the file's size after every check and before a byte is
   * loaded; the read waits for it (a byte budget).
   */
  beforeLoad?: ((size: number) => Promise<void>) | undefined;
}
