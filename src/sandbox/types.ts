/**
 * Plain data types of the sandbox API, shared by the host and the thread
 * side (type-only: importing them loads no host code).
 */

/** What a sandbox permits, in virtual paths only. */
export interface SandboxDescription {
  /** Readable virtual areas, e.g. `["/src", "/cache"]`. */
  readable: string[];
  /** Writable virtual areas. */
  writable: string[];
  /** Visible mounts (the root is `/`); never a source path. */
  mounts: { target: string; readonly: boolean }[];
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
