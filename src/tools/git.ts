/**
 * The git tools (issue 24): `git_status`, `git_diff`, `git_log` and
 * `git_commit` over the repository that holds a virtual path. They only
 * describe and check their arguments here; git itself runs host-side, under
 * `runCommand`'s OS confinement (`src/git/`), through the {@link GitFunction}
 * the tool layer was given — in a thread that is `ctx.git`, served by the
 * host, so a thread never runs git.
 */
import { z } from "zod";
import { capText, defineTool } from "./format.js";
import type { GitFunction, GitToolName, ToolDefinition, ToolEnv } from "./types.js";

/** Most paths one call names. */
const MAX_PATHS = 1000;
/** Most commits `git_log` lists. */
export const MAX_LOG_COMMITS = 100;
/** Commits `git_log` lists when no `limit` is given. */
export const DEFAULT_LOG_COMMITS = 10;
/** Longest commit message accepted, in characters. */
export const MAX_MESSAGE_CHARS = 10_000;

const PATH = z.string().min(1).describe("Virtual path, e.g. /src/index.ts");

/** The argument schemas, shared with the host (which checks them again). */
export const GIT_INPUT_SCHEMAS = {
  git_status: z.strictObject({
    path: PATH.optional().describe(
      "A folder or file inside the repository; status is limited to it (default: the first readable path)",
    ),
  }),
  git_diff: z.strictObject({
    paths: z
      .array(PATH)
      .min(1)
      .max(MAX_PATHS)
      .optional()
      .describe("Virtual paths to limit the diff to, all in one repository (default: all of it)"),
    staged: z
      .boolean()
      .optional()
      .describe("true: staged changes (index against the last commit); default: unstaged changes"),
  }),
  git_log: z.strictObject({
    path: PATH.optional().describe(
      "Only commits that changed this file or folder (default: the whole repository of the first readable path)",
    ),
    limit: z
      .number()
      .int()
      .min(1)
      .max(MAX_LOG_COMMITS)
      .optional()
      .describe(`Most commits to list, newest first (default ${DEFAULT_LOG_COMMITS})`),
  }),
  git_commit: z.strictObject({
    paths: z
      .array(PATH)
      .min(1)
      .max(MAX_PATHS)
      .describe(
        "Virtual paths (files or folders) whose changes to commit — additions, changes and deletions",
      ),
    message: z
      .string()
      .max(MAX_MESSAGE_CHARS)
      .refine((m) => m.trim() !== "", "the commit message must not be empty")
      .refine((m) => !m.includes("\0"), "the commit message must not contain NUL")
      .describe("The commit message"),
  }),
} as const;

const REPO_NOTE =
  " Git runs in the same isolated sandbox as shell commands, with the repository's hooks, filters and fsmonitor disabled. It needs read access to the whole repository (the folder holding .git).";

/** `git_status`: changed, staged and untracked files, by virtual path. */
export function gitStatusTool(env: ToolEnv, git: GitFunction): ToolDefinition {
  return defineGitTool(env, git, "git_status", {
    description: `Show the working tree status of the git repository holding a path: its branch, then one line per changed file — two status letters (X = staged, Y = not staged: M modified, A added, D deleted, R renamed; ?? untracked) and the virtual path.${REPO_NOTE}`,
    readOnly: true,
    pathOf: (a) => (a as { path?: string }).path,
  });
}

/** `git_diff`: a unified diff of unstaged or staged changes. */
export function gitDiffTool(env: ToolEnv, git: GitFunction): ToolDefinition {
  return defineGitTool(env, git, "git_diff", {
    description: `Show the changes of tracked files in a git repository as a unified diff (a/ and b/ stand before each virtual path without its leading '/': a/src/x.ts is /src/x.ts): unstaged changes (working tree against the index) by default, staged ones with staged: true. Untracked files are not in a diff (git_status lists them).${REPO_NOTE}`,
    readOnly: true,
    pathOf: (a) => (a as { paths?: string[] }).paths?.[0],
  });
}

/** `git_log`: recent commits, with the files each changed. */
export function gitLogTool(env: ToolEnv, git: GitFunction): ToolDefinition {
  return defineGitTool(env, git, "git_log", {
    description: `List the latest commits of a git repository (newest first), optionally only those that changed a path: hash, author, date, message and the files changed (virtual paths).${REPO_NOTE}`,
    readOnly: true,
    pathOf: (a) => (a as { path?: string }).path,
  });
}

/** `git_commit`: stages the given paths and commits exactly them. */
export function gitCommitTool(env: ToolEnv, git: GitFunction): ToolDefinition {
  return defineGitTool(env, git, "git_commit", {
    description: `Commit the current changes of the given files or folders (new, changed and deleted files under them) in their git repository, with a message; changes to other paths are left as they are (staged or not). Needs write access to every path committed and to the repository's .git folder (protected unless the user un-protected it).${REPO_NOTE}`,
    readOnly: false,
    pathOf: (a) => (a as { paths?: string[] }).paths?.[0],
  });
}

function defineGitTool(
  env: ToolEnv,
  git: GitFunction,
  name: GitToolName,
  spec: {
    description: string;
    readOnly: boolean;
    pathOf: (args: Record<string, unknown>) => string | undefined;
  },
): ToolDefinition {
  const max = env.limits.outputMaxChars;
  return defineTool({
    name,
    description: spec.description,
    inputSchema: GIT_INPUT_SCHEMAS[name] as z.ZodType<Record<string, unknown>>,
    annotations: { readOnlyHint: spec.readOnly, destructiveHint: false },
    pathOf: spec.pathOf,
    async run(args, ctx) {
      const text = await git(name, args, ctx.signal ? { signal: ctx.signal } : {});
      return capText(text, max, `The ${name} output`);
    },
  });
}
