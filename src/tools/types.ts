/**
 * Types of the framework-neutral tool layer: what a tool needs from a
 * sandbox, what a tool is, and the options that choose and bound the tools.
 */
import type { z } from "zod";
import type { OnApproval } from "../approvals/approval-types.js";
import type { FileEdit, FileStat, SandboxDescription } from "../sandbox/types.js";

/** A value, or a promise of it: `Sandbox` answers some questions synchronously, `ctx.sandbox` never. */
export type MaybePromise<T> = T | Promise<T>;

/**
 * The least a tool needs from a sandbox. Both the in-process `Sandbox` and a
 * thread's `ctx.sandbox` (`WorkerSandbox`) satisfy it; paths are virtual.
 */
export interface ToolSandbox {
  readBytes(path: string): Promise<Uint8Array>;
  writeFile(path: string, content: string): Promise<void>;
  editFile(path: string, edits: FileEdit[], opts?: { dryRun?: boolean }): Promise<{ diff: string }>;
  listFiles(path?: string, pattern?: string): Promise<string[]>;
  stat(path: string): Promise<FileStat>;
  mkdir(path: string): Promise<void>;
  remove(path: string, opts?: { recursive?: boolean }): Promise<void>;
  move(from: string, to: string, opts?: { overwrite?: boolean }): Promise<void>;
  describe(): MaybePromise<SandboxDescription>;
}

/** Every tool this layer can define. */
export const TOOL_NAMES = [
  "read_file",
  "read_multiple_files",
  "write_file",
  "edit_file",
  "list_files",
  "grep",
  "get_file_info",
  "create_directory",
  "move_file",
  "delete_file",
  "list_allowed_paths",
  "shell",
  "call_worker",
  "git_status",
  "git_diff",
  "git_log",
  "git_commit",
] as const;

/** The git tools (offered with `git`; the host runs git, see `src/git/`). */
export const GIT_TOOL_NAMES = ["git_status", "git_diff", "git_log", "git_commit"] as const;

/** The name of one git tool. */
export type GitToolName = (typeof GIT_TOOL_NAMES)[number];

/** The name of one tool, e.g. `read_file`. */
export type ToolName = (typeof TOOL_NAMES)[number];

/** Hints for a host or a model about what a tool does (MCP's tool annotations). */
export interface ToolAnnotations {
  /** True if the tool never changes anything. */
  readOnlyHint: boolean;
  /** True if the tool may overwrite or delete what exists. */
  destructiveHint: boolean;
}

/** What a tool call gets besides its arguments. */
export interface ToolContext {
  /** Stops long work (grep, shell) early when aborted. */
  signal?: AbortSignal | undefined;
}

/**
 * One tool, framework-neutral: a name, a description written for a model, a
 * strict zod schema of its arguments, hints, and `execute`, whose result is
 * always text a model can act on (refusals included; it never rejects).
 */
export interface ToolDefinition<Args = Record<string, unknown>> {
  readonly name: ToolName;
  readonly description: string;
  readonly inputSchema: z.ZodType<Args>;
  readonly annotations: ToolAnnotations;
  /** Runs the tool. Arguments are validated against `inputSchema` first. */
  execute(args: Args, ctx?: ToolContext): Promise<string>;
}

/** What a `shell` command returns (the fields of mountbox's `CommandResult` the tool uses). */
export interface ShellResult {
  exitCode: number;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  truncated?: boolean;
  /** Explanations for a model (why a write failed, that output was cut). */
  notes?: string[];
}

/** Runs a shell command for the `shell` tool, e.g. `(c, o) => runCommand(sandbox, c, o)`. */
export type RunCommandFunction = (
  command: string,
  opts: { timeoutMs?: number; signal?: AbortSignal },
) => Promise<ShellResult>;

/** Runs another worker for the `call_worker` tool, e.g. `ctx.delegate`. */
export type DelegateFunction = (
  worker: string,
  input: unknown,
  opts: { attachments?: string[] },
) => Promise<unknown>;

/**
 * Runs one git tool for the git tools, e.g. `ctx.git` in an agent thread
 * (the host runs git there): the tool's name and its checked arguments in,
 * the tool's text out; a refusal rejects with a mountbox error.
 */
export type GitFunction = (
  tool: GitToolName,
  args: Record<string, unknown>,
  opts: { signal?: AbortSignal },
) => Promise<string>;

/** Bounds on what a tool reads and returns. Every field has a default. */
export interface ToolLimits {
  /** Lines `read_file` returns when no `limit` is given. Default 2000. */
  readMaxLines?: number;
  /** Characters `read_file` returns at most (and `read_multiple_files` in all). Default 100 000. */
  readMaxChars?: number;
  /** Paths `list_files` returns at most. Default 1000. */
  listMaxEntries?: number;
  /** Matching lines `grep` returns at most. Default 200. */
  grepMaxMatches?: number;
  /** Characters of `grep` output at most. Default 50 000. */
  grepMaxChars?: number;
  /** Time `grep` may search, in ms; checked between files and every 1024 lines. Default 5000. */
  grepTimeMs?: number;
  /** Characters of each line `grep` scans (the rest is ignored), bounding per-line work. Default 2000. */
  grepMaxLineChars?: number;
  /** Characters of `shell`, `call_worker` or git tool output at most. Default 50 000. */
  outputMaxChars?: number;
}

/** Options of `createToolDefinitions`. */
export interface ToolOptions {
  /**
   * Which tools to define (a subset, in any order). Default: the file tools
   * the sandbox allows (no write tools when nothing is writable), plus
   * `call_worker` when `delegate` is given, `shell` when `runCommand` is,
   * and the git tools when `git` is (`git_commit` only when something is
   * writable).
   */
  tools?: readonly ToolName[] | undefined;
  /** Enables the `shell` tool. */
  runCommand?: RunCommandFunction | undefined;
  /**
   * Enables the git tools (`git_status`, `git_diff`, `git_log`,
   * `git_commit`): `true` over an in-process `Sandbox` (git runs under
   * `runCommand`'s OS confinement), or a {@link GitFunction} that runs them
   * elsewhere (`ctx.git` in a thread of a worker with `git: true`).
   */
  git?: boolean | GitFunction | undefined;
  /** Enables the `call_worker` tool. */
  delegate?: DelegateFunction | undefined;
  /** Workers `call_worker` may call, named in its description. */
  workers?: readonly { name: string; description?: string }[] | undefined;
  /** Bounds on reads and outputs. */
  limits?: ToolLimits | undefined;
  /**
   * Asked before a tool call touches an area with `read_approval` /
   * `write_approval` (in-process `Sandbox` only; in a thread the host asks):
   * `once`, `session` (the rest of these tools' life, that operation under
   * that directory) or `deny` (the tool answers with an approval_denied error).
   */
  onApproval?: OnApproval | undefined;
}

/** Limits with every default filled in. */
export type ResolvedLimits = Required<ToolLimits>;

/** The defaults of {@link ToolLimits}. */
export const DEFAULT_LIMITS: ResolvedLimits = {
  readMaxLines: 2000,
  readMaxChars: 100_000,
  listMaxEntries: 1000,
  grepMaxMatches: 200,
  grepMaxChars: 50_000,
  grepTimeMs: 5000,
  grepMaxLineChars: 2000,
  outputMaxChars: 50_000,
};

/** What every tool factory gets. */
export interface ToolEnv {
  sandbox: ToolSandbox;
  limits: ResolvedLimits;
  description: SandboxDescription;
  opts: ToolOptions;
  /** What runs the git tools over `sandbox`, when they are enabled. */
  git?: GitFunction | undefined;
}
