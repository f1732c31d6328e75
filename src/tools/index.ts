/**
 * The tool layer (DESIGN §8): framework-neutral tool definitions over any
 * sandbox — the in-process `Sandbox` or a thread's `ctx.sandbox`. Adapters
 * (`mountbox/ai-sdk`) turn them into a framework's tools.
 */
import { z } from "zod";
import { type ConfigIssue, configError } from "../errors/index.js";
import { callWorkerTool, shellTool } from "./agent.js";
import { gitCommitTool, gitDiffTool, gitLogTool, gitStatusTool } from "./git.js";
import { grepTool } from "./grep.js";
import { getFileInfoTool, listAllowedPathsTool, listFilesTool } from "./list.js";
import { readFileTool, readMultipleFilesTool } from "./read.js";
import {
  DEFAULT_LIMITS,
  GIT_TOOL_NAMES,
  type GitFunction,
  type ResolvedLimits,
  TOOL_NAMES,
  type ToolDefinition,
  type ToolEnv,
  type ToolLimits,
  type ToolName,
  type ToolOptions,
  type ToolSandbox,
} from "./types.js";
import {
  createDirectoryTool,
  deleteFileTool,
  editFileTool,
  moveFileTool,
  writeFileTool,
} from "./write.js";

export {
  DEFAULT_LIMITS,
  type DelegateFunction,
  GIT_TOOL_NAMES,
  type GitFunction,
  type GitToolName,
  type MaybePromise,
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
} from "./types.js";

/** Tools that only read. */
const READ_TOOLS: readonly ToolName[] = [
  "read_file",
  "read_multiple_files",
  "list_files",
  "grep",
  "get_file_info",
];
/** Tools that write. */
const WRITE_TOOLS: readonly ToolName[] = [
  "write_file",
  "edit_file",
  "create_directory",
  "move_file",
  "delete_file",
];

/**
 * The tool definitions for `sandbox`, in the order of {@link TOOL_NAMES}.
 * Default: `list_allowed_paths`, the read tools when anything is readable,
 * the write tools when anything is writable, `call_worker` when
 * `opts.delegate` is given, `shell` when `opts.runCommand` is, and the git
 * tools when `opts.git` is (`git_commit` only when anything is writable).
 * `opts.tools` picks a subset instead (a write tool on a read-only sandbox
 * is then offered, and refused per call).
 * @throws ConfigError for an unknown tool name, `shell` / `call_worker` /
 *   a git tool without what it needs, `git: true` over a thread's sandbox,
 *   or a bad limit
 */
export async function createToolDefinitions(
  sandbox: ToolSandbox,
  opts: ToolOptions = {},
): Promise<ToolDefinition[]> {
  const limits = parseLimits(opts.limits);
  const description = await sandbox.describe();
  const env: ToolEnv = { sandbox, description, limits, opts };
  // Only a caller's own list can be wrong; issues name its indexes.
  if (opts.tools) checkChoice(opts, [...opts.tools]);
  const gitOver = await loadGit(sandbox, opts.git);
  const wanted = new Set(opts.tools ?? defaultTools(env));
  // The same tools over another sandbox: under approvals, each call runs on
  // the sandbox confined to what was approved for it.
  const build = (sb: ToolSandbox): ToolDefinition[] => {
    const e: ToolEnv = { ...env, sandbox: sb, git: gitOver?.(sb) };
    const out: ToolDefinition[] = [];
    for (const name of TOOL_NAMES) {
      if (!wanted.has(name)) continue;
      const made = makeTool(e, name);
      if (made) out.push(made);
    }
    return out;
  };
  const out = build(sandbox);
  if (opts.onApproval === undefined) return out;
  // Loaded only here: a thread's tool layer never needs it (the host asks).
  const { withApprovals } = await import("./approvals.js");
  return withApprovals(out, sandbox, opts.onApproval, build);
}

function defaultTools(env: ToolEnv): ToolName[] {
  const names: ToolName[] = ["list_allowed_paths"];
  if (env.description.readable.length > 0) names.push(...READ_TOOLS);
  if (env.description.writable.length > 0) names.push(...WRITE_TOOLS);
  if (env.opts.delegate) names.push("call_worker");
  if (env.opts.runCommand) names.push("shell");
  if (env.opts.git) {
    names.push("git_status", "git_diff", "git_log");
    if (env.description.writable.length > 0) names.push("git_commit");
  }
  return names;
}

/**
 * What runs the git tools over a given sandbox: `opts.git` itself when it
 * is a function (`ctx.git`), or, for `git: true`, the host-side runner
 * (loaded only then: a thread's tool layer never imports it).
 * @throws ConfigError for `git: true` over a sandbox that is not an in-process `Sandbox`, or a bad value
 */
async function loadGit(
  sandbox: ToolSandbox,
  git: ToolOptions["git"],
): Promise<((sb: ToolSandbox) => GitFunction) | undefined> {
  if (git === undefined || git === false) return undefined;
  if (typeof git === "function") return () => git;
  const issue = (message: string) => configError([{ path: ["git"], message }], "tool options");
  if (git !== true) throw issue("expected true, false or a function (ctx.git in a worker)");
  // A thread's `ctx.sandbox` never has `resolve` (it holds no host path).
  if (typeof (sandbox as { resolve?: unknown }).resolve !== "function")
    throw issue(
      "'git: true' needs an in-process Sandbox; in an agent thread pass git: ctx.git (the worker needs 'git: true', and the host runs git)",
    );
  const { createGitFunction } = await import("../git/git-tools.js");
  return (sb) => createGitFunction(sb);
}

function checkChoice(opts: ToolOptions, names: string[]): void {
  const issues: ConfigIssue[] = [];
  names.forEach((name, i) => {
    if (!(TOOL_NAMES as readonly string[]).includes(name)) {
      issues.push({
        path: ["tools", i],
        message: `unknown tool '${name}'; known tools: ${TOOL_NAMES.join(", ")}`,
      });
    } else if (name === "shell" && !opts.runCommand) {
      issues.push({ path: ["tools", i], message: "'shell' needs a runCommand function" });
    } else if (name === "call_worker" && !opts.delegate) {
      issues.push({ path: ["tools", i], message: "'call_worker' needs a delegate function" });
    } else if ((GIT_TOOL_NAMES as readonly string[]).includes(name) && !opts.git) {
      issues.push({ path: ["tools", i], message: `'${name}' needs the git option` });
    }
  });
  if (issues.length > 0) throw configError(issues, "tool options");
}

function makeTool(env: ToolEnv, name: ToolName): ToolDefinition | undefined {
  switch (name) {
    case "read_file":
      return readFileTool(env);
    case "read_multiple_files":
      return readMultipleFilesTool(env);
    case "write_file":
      return writeFileTool(env);
    case "edit_file":
      return editFileTool(env);
    case "list_files":
      return listFilesTool(env);
    case "grep":
      return grepTool(env);
    case "get_file_info":
      return getFileInfoTool(env);
    case "create_directory":
      return createDirectoryTool(env);
    case "move_file":
      return moveFileTool(env);
    case "delete_file":
      return deleteFileTool(env);
    case "list_allowed_paths":
      return listAllowedPathsTool(env);
    case "shell":
      return env.opts.runCommand && shellTool(env, env.opts.runCommand);
    case "call_worker":
      return env.opts.delegate && callWorkerTool(env, env.opts.delegate);
    case "git_status":
      return env.git && gitStatusTool(env, env.git);
    case "git_diff":
      return env.git && gitDiffTool(env, env.git);
    case "git_log":
      return env.git && gitLogTool(env, env.git);
    case "git_commit":
      return env.git && gitCommitTool(env, env.git);
  }
}

const COUNT = z.number().int().positive().optional();
const LIMITS = z.strictObject({
  readMaxLines: COUNT,
  readMaxChars: COUNT,
  listMaxEntries: COUNT,
  grepMaxMatches: COUNT,
  grepMaxChars: COUNT,
  grepTimeMs: z.number().int().min(0).optional(),
  grepMaxLineChars: COUNT,
  outputMaxChars: COUNT,
});

/** The limits with defaults filled in. @throws ConfigError naming each bad key */
function parseLimits(limits: ToolLimits | undefined): ResolvedLimits {
  const parsed = LIMITS.safeParse(limits ?? {});
  if (!parsed.success) {
    throw configError(
      parsed.error.issues.map((i) => ({
        path: ["limits", ...i.path.map(keyOf)],
        message: i.message,
      })),
      "tool options",
    );
  }
  const given = Object.entries(parsed.data).filter(([, v]) => v !== undefined);
  return { ...DEFAULT_LIMITS, ...Object.fromEntries(given) };
}

function keyOf(k: PropertyKey): string | number {
  return typeof k === "number" ? k : String(k);
}
