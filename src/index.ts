/**
 * mountbox — safe, fast file access for LLM agents.
 *
 * Host-side entry point: sandboxes, their errors and configuration.
 */

// Typed hosts: worker names tied to their modules' types.
export type {
  UntypedWorkers,
  WorkerArgs,
  WorkerInput,
  WorkerName,
  WorkerOutput,
} from "../workers/worker-types.js";
export {
  type MountConfig,
  type NamedPathConfig,
  type ParsedSandboxConfig,
  parseSandboxConfig,
  type SandboxConfig,
} from "./config/sandbox-config.js";
export {
  type AgentFailure,
  AgentThreadError,
  ApprovalDeniedError,
  ConfigError,
  type ConfigIssue,
  DelegationRefusedError,
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
  SecretWithheldError,
  type SerializedSandboxError,
  SuffixNotAllowedError,
} from "./errors/index.js";
// Git tools (issue 24): run one over an in-process sandbox, host-side.
export { type GitToolOptions, runGitTool } from "./git/git-tools.js";
export {
  createHost,
  type Host,
  type RunOptions,
  type SuggestedSandbox,
} from "./host/host.js";
export type {
  ApprovalDecision,
  ApprovalOperation,
  ApprovalRequest,
  DynamicOption,
  HostEvent,
  HostOptions,
  LanguageModelLike,
  LanguageModelProviderLike,
  ModelsOption,
  OnApproval,
  WorkerSandboxSpec,
  WorkerSpec,
} from "./host/host-types.js";
export {
  loadProgram,
  loadProgramDefinition,
  type ProgramDefinition,
  type WorkerSource,
} from "./host/load-program.js";
export {
  type CommandLimits,
  type CommandResult,
  describeCommandSandbox,
  type RunCommandOptions,
  runCommand,
} from "./os/run-command.js";
// Heavy host-side work (grep, big listings) in a piscina pool of trusted threads.
export {
  closeSharedPool,
  type GrepMatch,
  type GrepOptions,
  type GrepResult,
  grepInProcess,
  grepSandbox,
  HeavyPool,
  type HeavyPoolOptions,
  listFilesPooled,
  type PooledCallOptions,
  sharedPool,
} from "./pool/index.js";
export type { Attachment, RunCommandReply } from "./port/protocol.js";
export type { DeriveOptions, RestrictOptions } from "./sandbox/derive.js";
// Secure defaults (DESIGN §10): the default `protected` and `secrets` lists.
export { DEFAULT_PROTECTED, PROTECTED_DEFAULTS } from "./sandbox/protected-defaults.js";
export {
  createSandbox,
  type FileEdit,
  type FileStat,
  type ReadOptions,
  Sandbox,
  type SandboxDescription,
} from "./sandbox/sandbox.js";
export { DEFAULT_SECRETS } from "./sandbox/secrets.js";
// Runtime I: agent threads and the port boundary (host side).
export { runAgentThread } from "./threads/agent-thread.js";
export type {
  AgentLogEntry,
  AgentThreadOptions,
  AgentThreadResult,
} from "./threads/thread-options.js";
// Tools (DESIGN §8): framework-neutral tool definitions over a sandbox.
export {
  createToolDefinitions,
  DEFAULT_LIMITS,
  type DelegateFunction,
  GIT_TOOL_NAMES,
  type GitFunction,
  type GitToolName,
  type RunCommandFunction,
  type ShellResult,
  TOOL_NAMES,
  type ToolAnnotations,
  type ToolContext,
  type ToolDefinition,
  type ToolLimits,
  type ToolName,
  type ToolOptions,
  type ToolSandbox,
} from "./tools/index.js";
