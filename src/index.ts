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
  InvalidRequestError,
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
// Runtime I: agent threads and the port boundary (host side).
export {
  type AgentFailure,
  type AgentLogEntry,
  AgentThreadError,
  type AgentThreadOptions,
  type AgentThreadResult,
  runAgentThread,
} from "./runtime/agent-thread.js";
export type { DeriveOptions, RestrictOptions } from "./sandbox/derive.js";
export {
  createSandbox,
  type FileEdit,
  type FileStat,
  Sandbox,
  type SandboxDescription,
} from "./sandbox/sandbox.js";
