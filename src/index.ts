/**
 * mountbox — safe, fast file access for LLM agents.
 *
 * Host-side entry point: sandboxes, their errors and configuration.
 */
export {
  type MountConfig,
  type NamedPathConfig,
  type ParsedSandboxConfig,
  parseSandboxConfig,
  type SandboxConfig,
} from "./config/sandbox-config.js";
export {
  ApprovalDeniedError,
  ConfigError,
  type ConfigIssue,
  EditFailedError,
  FileExistsError,
  FileNotFoundError,
  FileTooLargeError,
  InvalidPathError,
  IoError,
  OsSandboxUnavailableError,
  PathNotInSandboxError,
  PathNotWritableError,
  SandboxError,
  type SandboxErrorCode,
  SandboxPermissionEscalationError,
  type SerializedSandboxError,
  SuffixNotAllowedError,
} from "./errors.js";
export {
  type CommandResult,
  describeCommandSandbox,
  type RunCommandOptions,
  runCommand,
} from "./os/run-command.js";
export type { DeriveOptions, RestrictOptions } from "./sandbox/derive.js";
export {
  createSandbox,
  type FileEdit,
  type FileStat,
  Sandbox,
  type SandboxDescription,
} from "./sandbox/sandbox.js";
