/**
 * The error classes of mountbox: the stable codes, the `SandboxError` base
 * class and one subclass per code, and their wire form (`toJSON()` /
 * `SandboxError.fromJSON()` carry an error across a thread boundary with its
 * class intact).
 *
 * Every error has a stable snake_case `code`, the *virtual* `path` it concerns
 * (never a host path), and `name` equal to its class name.
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
  | "secret_withheld"
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
  /** {@link AgentThreadError} of a failed model call: the provider's HTTP status. */
  statusCode?: number;
  /** {@link AgentThreadError} of a failed model call: whether trying again later may work. */
  isRetryable?: boolean;
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
      return new AgentThreadError(reason, message, { stdout: "", stderr: "" }, undefined, {
        ...(isStatusCode(obj.statusCode) ? { statusCode: obj.statusCode } : {}),
        ...(typeof obj.isRetryable === "boolean" ? { isRetryable: obj.isRetryable } : {}),
      });
    }
    return new (Ctor as new (m: string, p?: string) => SandboxError)(message, path);
  }
}

/** An HTTP status a provider could answer with. */
function isStatusCode(v: unknown): v is number {
  return typeof v === "number" && Number.isInteger(v) && v >= 100 && v <= 599;
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
/**
 * The path names a secret (it matches the sandbox's `secrets` list): the
 * file exists (or would) and is withheld by configuration, not missing.
 */
export class SecretWithheldError extends SandboxError {
  constructor(message: string, path?: string) {
    super("secret_withheld", message, path);
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

/** What a failed model call tells about itself (see {@link AgentThreadError}). */
export interface ModelFailureInfo {
  /** The provider's HTTP status, when it answered. */
  statusCode?: number;
  /** Whether trying again later may work (the provider's own verdict: 408, 409, 429, 5xx, no answer). */
  isRetryable?: boolean;
}

/**
 * An agent (a worker run in its own thread) failed. Its thread was
 * terminated; the host and other agents go on. `cause` holds the worker's own
 * error when it threw; `stdout`/`stderr` what it printed (host side only).
 * When the failure was its model's, `statusCode` and `isRetryable` say what
 * the provider answered (they cross threads with the error).
 */
export class AgentThreadError extends SandboxError {
  /** What went wrong. */
  readonly reason: AgentFailure;
  /** Captured stdout up to the failure (not sent across threads). */
  readonly stdout: string;
  /** Captured stderr up to the failure (not sent across threads). */
  readonly stderr: string;
  /** A failed model call: the provider's HTTP status, when it answered. */
  readonly statusCode?: number;
  /** A failed model call: whether trying again later may work. */
  readonly isRetryable?: boolean;
  constructor(
    reason: AgentFailure,
    message: string,
    out: { stdout: string; stderr: string } = { stdout: "", stderr: "" },
    cause?: unknown,
    model?: ModelFailureInfo,
  ) {
    super("agent_failed", message);
    if (cause !== undefined) this.cause = cause;
    this.reason = reason;
    this.stdout = out.stdout;
    this.stderr = out.stderr;
    if (model?.statusCode !== undefined) this.statusCode = model.statusCode;
    if (model?.isRetryable !== undefined) this.isRetryable = model.isRetryable;
  }
  override toJSON(): SerializedSandboxError {
    const out: SerializedSandboxError = { ...super.toJSON(), reason: this.reason };
    if (this.statusCode !== undefined) out.statusCode = this.statusCode;
    if (this.isRetryable !== undefined) out.isRetryable = this.isRetryable;
    return out;
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
  secret_withheld: SecretWithheldError,
  edit_failed: EditFailedError,
  approval_denied: ApprovalDeniedError,
  io_error: IoError,
  invalid_config: ConfigError,
  invalid_request: InvalidRequestError,
  agent_failed: AgentThreadError,
  delegation_refused: DelegationRefusedError,
  os_sandbox_unavailable: OsSandboxUnavailableError,
};
