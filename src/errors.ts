/**
 * One error family for everything mountbox refuses or fails at.
 *
 * Every error has a stable snake_case `code`, the *virtual* `path` it concerns
 * (never a host path), `name` equal to its class name, and a message written
 * for an LLM: what was refused, what IS allowed, and what to do next.
 * `toJSON()` / `SandboxError.fromJSON()` carry errors across a thread boundary
 * with their class intact.
 */

/** Stable machine-readable error codes (part of the public contract). */
export type SandboxErrorCode =
  | "path_not_in_sandbox"
  | "path_not_writable"
  | "suffix_not_allowed"
  | "file_too_large"
  | "permission_escalation"
  | "invalid_path"
  | "not_found"
  | "already_exists"
  | "edit_failed"
  | "approval_denied"
  | "io_error"
  | "invalid_config"
  | "invalid_request"
  | "agent_failed"
  | "delegation_refused"
  | "os_sandbox_unavailable";

/** One problem found in a configuration, with the key path it sits at. */
export interface ConfigIssue {
  /** Key path inside the configuration, e.g. `["sandbox", "readonly"]`. */
  path: (string | number)[];
  /** What is wrong, e.g. `expected boolean, received string`. */
  message: string;
}

/** The plain-object form of a {@link SandboxError}, safe to `postMessage`. */
export interface SerializedSandboxError {
  name: string;
  code: SandboxErrorCode;
  message: string;
  path?: string;
  issues?: ConfigIssue[];
  reason?: AgentFailure;
}

/** Base class of every mountbox error. Catch this to catch them all. */
export class SandboxError extends Error {
  /** Stable snake_case code, e.g. `path_not_in_sandbox`. */
  readonly code: SandboxErrorCode;
  /** The virtual path concerned, if any. Never a host path. */
  readonly path: string | undefined;

  constructor(code: SandboxErrorCode, message: string, path?: string) {
    super(message);
    this.code = code;
    this.path = path;
    this.name = new.target.name;
  }

  /** Plain-object wire form (class name, code, message, virtual path). */
  toJSON(): SerializedSandboxError {
    const out: SerializedSandboxError = { name: this.name, code: this.code, message: this.message };
    if (this.path !== undefined) out.path = this.path;
    return out;
  }

  /**
   * Rebuilds an error from its wire form, with the right class. Input is
   * treated as untrusted: unknown codes become a plain `IoError`, and only
   * string fields are kept.
   */
  static fromJSON(data: unknown): SandboxError {
    const obj = (typeof data === "object" && data !== null ? data : {}) as Record<string, unknown>;
    const code = typeof obj.code === "string" ? obj.code : "";
    const message = typeof obj.message === "string" ? obj.message : "Unknown error";
    const path = typeof obj.path === "string" ? obj.path : undefined;
    const Ctor = Object.hasOwn(CLASS_BY_CODE, code)
      ? CLASS_BY_CODE[code as SandboxErrorCode]
      : null;
    if (!Ctor) return new IoError(message, path);
    if (Ctor === ConfigError) {
      const issues = Array.isArray(obj.issues) ? obj.issues.filter(isConfigIssue) : [];
      return new ConfigError(message, issues);
    }
    if (Ctor === AgentThreadError) {
      const reason = AGENT_FAILURES.has(obj.reason as AgentFailure)
        ? (obj.reason as AgentFailure)
        : "threw";
      return new AgentThreadError(reason, message, { stdout: "", stderr: "" });
    }
    return new (Ctor as new (m: string, p?: string) => SandboxError)(message, path);
  }
}

function isConfigIssue(v: unknown): v is ConfigIssue {
  if (typeof v !== "object" || v === null) return false;
  const o = v as Record<string, unknown>;
  return (
    typeof o.message === "string" &&
    Array.isArray(o.path) &&
    o.path.every((p) => typeof p === "string" || typeof p === "number")
  );
}

/** The path is outside every readable area (or a link leads outside). */
export class PathNotInSandboxError extends SandboxError {
  constructor(message: string, path?: string) {
    super("path_not_in_sandbox", message, path);
  }
}
/** The path is readable but not writable. */
export class PathNotWritableError extends SandboxError {
  constructor(message: string, path?: string) {
    super("path_not_writable", message, path);
  }
}
/** The file's suffix is not in the configured allowlist. */
export class SuffixNotAllowedError extends SandboxError {
  constructor(message: string, path?: string) {
    super("suffix_not_allowed", message, path);
  }
}
/** The file (or content) is larger than `maxFileBytes`. */
export class FileTooLargeError extends SandboxError {
  constructor(message: string, path?: string) {
    super("file_too_large", message, path);
  }
}
/** A derive/restrict call asked for more than the parent has. */
export class SandboxPermissionEscalationError extends SandboxError {
  constructor(message: string, path?: string) {
    super("permission_escalation", message, path);
  }
}
/** The path is malformed (NUL, `~`, drive letter, host path, too long). */
export class InvalidPathError extends SandboxError {
  constructor(message: string, path?: string) {
    super("invalid_path", message, path);
  }
}
/** Nothing exists at the path. */
export class FileNotFoundError extends SandboxError {
  constructor(message: string, path?: string) {
    super("not_found", message, path);
  }
}
/** Something already exists at the path and overwriting was not asked for. */
export class FileExistsError extends SandboxError {
  constructor(message: string, path?: string) {
    super("already_exists", message, path);
  }
}
/** An edit's `oldText` was not found, or not found exactly once. */
export class EditFailedError extends SandboxError {
  constructor(message: string, path?: string) {
    super("edit_failed", message, path);
  }
}
/** A human (or the approval policy) refused the access. */
export class ApprovalDeniedError extends SandboxError {
  constructor(message: string, path?: string) {
    super("approval_denied", message, path);
  }
}
/** An operating-system error, mapped to a virtual path. */
export class IoError extends SandboxError {
  constructor(message: string, path?: string) {
    super("io_error", message, path);
  }
}
/**
 * A request across the thread boundary was refused before anything ran:
 * unknown operation, malformed arguments, too many requests in flight.
 */
export class InvalidRequestError extends SandboxError {
  constructor(message: string) {
    super("invalid_request", message);
  }
}
/** Why an agent failed. */
export type AgentFailure =
  | "threw" // the worker function threw or rejected
  | "timeout"
  | "aborted"
  | "oversize" // it sent a message over the limit
  | "out_of_memory"
  | "crashed" // the thread died (uncaught error outside the worker function)
  | "exited" // the thread exited without a result
  | "not_runnable"; // e.g. an LLM worker without a model adapter

const AGENT_FAILURES = new Set<AgentFailure>([
  "threw",
  "timeout",
  "aborted",
  "oversize",
  "out_of_memory",
  "crashed",
  "exited",
  "not_runnable",
]);

/**
 * An agent (a worker run in its own thread) failed. Its thread was
 * terminated; the host and other agents go on. `cause` holds the worker's own
 * error when it threw; `stdout`/`stderr` what it printed (host side only).
 */
export class AgentThreadError extends SandboxError {
  /** What went wrong. */
  readonly reason: AgentFailure;
  /** Captured stdout up to the failure (not sent across threads). */
  readonly stdout: string;
  /** Captured stderr up to the failure (not sent across threads). */
  readonly stderr: string;
  constructor(
    reason: AgentFailure,
    message: string,
    out: { stdout: string; stderr: string } = { stdout: "", stderr: "" },
    cause?: unknown,
  ) {
    super("agent_failed", message);
    if (cause !== undefined) this.cause = cause;
    this.reason = reason;
    this.stdout = out.stdout;
    this.stderr = out.stderr;
  }
  override toJSON(): SerializedSandboxError {
    return { ...super.toJSON(), reason: this.reason };
  }
}

/** A delegation was refused: not a declared delegate, too deep, too many agents, unknown worker. */
export class DelegationRefusedError extends SandboxError {
  constructor(message: string) {
    super("delegation_refused", message);
  }
}

/** OS enforcement (bubblewrap / Seatbelt) is missing or cannot run. */
export class OsSandboxUnavailableError extends SandboxError {
  constructor(message: string) {
    super("os_sandbox_unavailable", message);
  }
}
/** Invalid configuration; `issues` lists every problem with its key path. */
export class ConfigError extends SandboxError {
  readonly issues: ConfigIssue[];
  constructor(message: string, issues: ConfigIssue[] = []) {
    super("invalid_config", message);
    this.issues = issues.map((i) => ({ path: [...i.path], message: i.message }));
  }
  override toJSON(): SerializedSandboxError {
    return { ...super.toJSON(), issues: this.issues };
  }
}

const CLASS_BY_CODE: Record<SandboxErrorCode, abstract new (...args: never[]) => SandboxError> = {
  path_not_in_sandbox: PathNotInSandboxError,
  path_not_writable: PathNotWritableError,
  suffix_not_allowed: SuffixNotAllowedError,
  file_too_large: FileTooLargeError,
  permission_escalation: SandboxPermissionEscalationError,
  invalid_path: InvalidPathError,
  not_found: FileNotFoundError,
  already_exists: FileExistsError,
  edit_failed: EditFailedError,
  approval_denied: ApprovalDeniedError,
  io_error: IoError,
  invalid_config: ConfigError,
  invalid_request: InvalidRequestError,
  agent_failed: AgentThreadError,
  delegation_refused: DelegationRefusedError,
  os_sandbox_unavailable: OsSandboxUnavailableError,
};

// ---------------------------------------------------------------------------
// Message factories. Every user-facing text is built here so wording stays
// consistent and is pinned by snapshot tests.
// ---------------------------------------------------------------------------

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

/**
 * Builds a {@link PathNotInSandboxError} for `path`. `writable`, when given,
 * adds the writable paths (for a refused write).
 */
export function notInSandbox(
  path: string,
  readable: readonly string[],
  why?: string,
  writable?: readonly string[],
): PathNotInSandboxError {
  const reason = why ?? "it is outside the sandbox";
  const w = writable === undefined ? "" : `\nWritable paths: ${formatPathList(writable)}`;
  return new PathNotInSandboxError(
    `Cannot access ${quotePath(path)}: ${reason}.\nReadable paths: ${formatPathList(readable)}${w}`,
    path,
  );
}

/**
 * Builds a {@link PathNotWritableError} for `path`. `readOnlyInside` names
 * read-only mounts nested inside the writable paths.
 */
export function notWritable(
  path: string,
  writable: readonly string[],
  why?: string,
  readOnlyInside: readonly string[] = [],
): PathNotWritableError {
  const reason = why ?? "this path is read-only";
  const except =
    readOnlyInside.length > 0 ? ` (read-only inside: ${readOnlyInside.join(", ")})` : "";
  return new PathNotWritableError(
    `Cannot write to ${quotePath(path)}: ${reason}.\nWritable paths: ${formatPathList(writable)}${except}`,
    path,
  );
}

/** Builds a {@link SuffixNotAllowedError} for `path`. */
export function suffixNotAllowed(
  path: string,
  suffix: string,
  allowed: readonly string[],
): SuffixNotAllowedError {
  const what = suffix === "" ? "files without a suffix are" : `files ending in '${suffix}' are`;
  return new SuffixNotAllowedError(
    `Cannot access ${quotePath(path)}: ${what} not allowed.\nAllowed suffixes: ${formatPathList(allowed)}`,
    path,
  );
}

/** Builds a {@link FileTooLargeError}. */
export function fileTooLarge(
  path: string,
  size: number,
  limit: number,
  verb = "read",
): FileTooLargeError {
  return new FileTooLargeError(
    `Cannot ${verb} ${quotePath(path)}: ${size} bytes is over the limit of ${limit} bytes.\nWork with a smaller file, or ask for a larger max_file_bytes.`,
    path,
  );
}

/** Builds an {@link InvalidPathError}: `problem` says what is wrong, `fix` what to use. */
export function invalidPath(
  path: string | undefined,
  problem: string,
  fix: string,
): InvalidPathError {
  return new InvalidPathError(
    `Invalid path${path === undefined ? "" : ` ${quotePath(path)}`}: ${problem}. ${fix}`,
    path,
  );
}

/** Builds a {@link FileNotFoundError}, naming the nearest existing directory if known. */
export function notFound(path: string, nearestDir?: string): FileNotFoundError {
  const hint =
    nearestDir === undefined ? "" : `\nNearest existing directory: ${quotePath(nearestDir)}`;
  return new FileNotFoundError(`Not found: ${quotePath(path)} does not exist.${hint}`, path);
}

/** Builds a {@link FileExistsError}. */
export function alreadyExists(path: string, option = "overwrite: true"): FileExistsError {
  return new FileExistsError(
    `Cannot create ${quotePath(path)}: it already exists. Pass ${option} to replace it.`,
    path,
  );
}

/** Builds an {@link EditFailedError}; `count` is how often `oldText` was found. */
export function editFailed(
  path: string,
  index: number,
  oldText: string,
  count: number,
): EditFailedError {
  const start = oldText.length > 60 ? `${oldText.slice(0, 60)}…` : oldText;
  const problem =
    count === 0
      ? "oldText was not found. Read the file again and copy the text exactly, including whitespace"
      : `oldText was found ${count} times. Include more surrounding lines so it matches exactly once`;
  return new EditFailedError(
    `Edit #${index + 1} on ${quotePath(path)} failed: ${problem}.\noldText starts with: ${JSON.stringify(start)}`,
    path,
  );
}

/**
 * Builds an {@link EditFailedError} for an editFile call whose edits would
 * take too long on a file this size (each edit scans the whole text).
 * `perCall` is how many edits one call may carry on this file.
 */
export function editTooMuchWork(
  path: string,
  edits: number,
  chars: number,
  budget: number,
  perCall: number,
): EditFailedError {
  const n = (x: number) => x.toLocaleString("en-US");
  const fix =
    perCall >= 1
      ? `Split the edits into several editFile calls of at most ${n(perCall)} edit${perCall === 1 ? "" : "s"} each, or write the whole file with writeFile.`
      : "The file is too large for editFile; write the whole file with writeFile.";
  return new EditFailedError(
    `Edit on ${quotePath(path)} refused: ${n(edits)} edit${edits === 1 ? "" : "s"} on a file of about ${n(chars)} characters is more work than one call may do (edits × characters at most ${n(budget)}). Nothing was changed. ${fix}`,
    path,
  );
}

/** Builds an {@link ApprovalDeniedError}. */
export function approvalDenied(what: string, path?: string): ApprovalDeniedError {
  return new ApprovalDeniedError(
    `Access denied: ${what} was not approved. Do not retry the same request; ask the user or choose another path.`,
    path,
  );
}

/** Builds an {@link IoError} for an operation on a virtual path. */
export function ioError(operation: string, path: string | undefined, detail: string): IoError {
  const where = path === undefined ? "" : ` on ${quotePath(path)}`;
  return new IoError(`I/O error during ${operation}${where}: ${detail}.`, path);
}

/** Builds a {@link ConfigError} listing every issue as `✖ message → at key.path`. */
export function configError(issues: ConfigIssue[], source?: string): ConfigError {
  const lines = issues.map(
    (i) => `✖ ${i.message}${i.path.length ? ` → at ${formatKeyPath(i.path)}` : ""}`,
  );
  const head =
    source === undefined ? "Invalid configuration" : `Invalid configuration in ${source}`;
  return new ConfigError(`${head}:\n${lines.join("\n")}`, issues);
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

const ERRNO_TEXT: Record<string, string> = {
  EISDIR: "it is a directory, not a file",
  ENOTDIR: "a parent of it is not a directory",
  EACCES: "permission denied by the operating system",
  EPERM: "operation not permitted by the operating system",
  ENOSPC: "no space left on the device",
  EDQUOT: "disk quota exceeded",
  EROFS: "the file system is read-only",
  ENOTEMPTY: "the directory is not empty (pass recursive: true to remove it with its contents)",
  EEXIST: "it already exists",
  ELOOP: "too many levels of symbolic links",
  EMFILE: "too many open files",
  ENAMETOOLONG: "the name is too long",
  EXDEV: "cannot move across devices",
  EBUSY: "the resource is busy",
  EINVAL: "invalid argument",
  EFBIG: "the file is too large",
};

/**
 * Wraps any thrown value from Node's fs into a mountbox error that carries
 * only the virtual path. Node's own messages include host paths, so the
 * original message is never reused.
 */
export function wrapFsError(err: unknown, operation: string, virtualPath: string): SandboxError {
  if (err instanceof SandboxError) return err;
  const code =
    typeof err === "object" && err !== null && "code" in err
      ? String((err as { code: unknown }).code)
      : "";
  if (code === "ENOENT") return notFound(virtualPath);
  if (code === "EEXIST") return alreadyExists(virtualPath);
  const detail = ERRNO_TEXT[code]
    ? `${ERRNO_TEXT[code]} (${code})`
    : code
      ? `system error ${code}`
      : "unexpected error";
  return ioError(operation, virtualPath, detail);
}
