/**
 * The host side of the git tools (issue 24; DESIGN §8: "Git tools run
 * inside [runCommand's OS sandbox] with hooks and fsmonitor disabled, and
 * only for agents that can read the whole repository"): each call checks
 * its arguments again (a thread may send anything), finds the repository
 * and checks the agent may use it (`git-repo.ts`), runs git confined
 * (`git-command.ts`) and returns text with virtual paths
 * (`git-output.ts`). `git_commit` is in `git-commit.ts`.
 *
 * Status, diff and log run over the agent's sandbox made read-only: git
 * there can change nothing, whatever it is made to run.
 */
import { configError, gitFailed, InvalidRequestError, quotePath } from "../errors/index.js";
import type { Policy } from "../sandbox/policy.js";
import { policyOf, Sandbox } from "../sandbox/sandbox.js";
import { DEFAULT_LOG_COMMITS, GIT_INPUT_SCHEMAS } from "../tools/git.js";
import type { GitFunction, GitToolName } from "../tools/types.js";
import {
  describeGitError,
  MAX_OUTPUT_BYTES,
  makeMarker,
  quoteShell,
  runGit,
} from "./git-command.js";
import { commitPaths } from "./git-commit.js";
import {
  formatCommits,
  formatStatus,
  logFormat,
  parseLog,
  rewriteDiffHeaders,
  splitNames,
} from "./git-output.js";
import { buildPathspecs } from "./git-pathspecs.js";
import { findRepo, type Repo, toRepoPaths, toVirtualPath } from "./git-repo.js";

/** Options of {@link runGitTool}. */
export interface GitToolOptions {
  signal?: AbortSignal | undefined;
  /** Time git may take (each run). Default 60 s. */
  timeoutMs?: number | undefined;
}

/**
 * The {@link GitFunction} of the git tools over an in-process sandbox
 * (`createToolDefinitions(sandbox, { git: true })`).
 * @throws ConfigError when `sandbox` is not a mountbox `Sandbox`
 */
export function createGitFunction(sandbox: unknown): GitFunction {
  if (!(sandbox instanceof Sandbox))
    throw configError(
      [{ path: ["git"], message: "'git: true' needs a mountbox Sandbox (createSandbox)" }],
      "tool options",
    );
  return (tool, args, opts) => runGitTool(sandbox, tool, args, opts);
}

/**
 * Runs one git tool over `sandbox` and returns its text.
 * @throws InvalidRequestError for an unknown tool or bad arguments
 * @throws SandboxError for a refusal (not a repository, not wholly
 *   readable, not writable, …) or a failure of git, with virtual paths only
 */
export async function runGitTool(
  sandbox: Sandbox,
  tool: GitToolName,
  args: unknown,
  opts: GitToolOptions = {},
): Promise<string> {
  const schema = Object.hasOwn(GIT_INPUT_SCHEMAS, tool) ? GIT_INPUT_SCHEMAS[tool] : undefined;
  if (schema === undefined) throw new InvalidRequestError(`unknown git tool '${String(tool)}'`);
  const parsed = schema.safeParse(args ?? {});
  if (!parsed.success)
    throw new InvalidRequestError(
      `invalid arguments for ${tool}: ${parsed.error.issues.map((i) => i.message).join("; ")}`,
    );
  const a = parsed.data as Record<string, unknown>;
  const policy = policyOf(sandbox);
  switch (tool) {
    case "git_status":
      return gitStatus(sandbox, policy, a.path as string | undefined, opts);
    case "git_diff":
      return gitDiff(sandbox, policy, a.paths as string[] | undefined, a.staged === true, opts);
    case "git_log":
      return gitLog(sandbox, policy, a.path as string | undefined, a.limit as number, opts);
    case "git_commit":
      return commitPaths(sandbox, policy, a.paths as string[], a.message as string, opts);
  }
}

async function gitStatus(
  sandbox: Sandbox,
  policy: Policy,
  path: string | undefined,
  opts: GitToolOptions,
): Promise<string> {
  const repo = findRepo(policy, path);
  const specs = buildPathspecs(sandbox, repo, toRepoPaths(policy, repo, path ? [path] : []));
  const r = await runRead(
    sandbox,
    repo,
    `g status --porcelain=v1 -z --branch -uall --ignore-submodules=all -- ${specs}`,
    "git_status",
    opts,
  );
  if (r.exitCode !== 0) throw gitFailed("git_status", repo.top, describeGitError(r.stderr));
  return formatStatus(repo, r.stdout, hideSecrets(policy, repo));
}

async function gitDiff(
  sandbox: Sandbox,
  policy: Policy,
  paths: string[] | undefined,
  staged: boolean,
  opts: GitToolOptions,
): Promise<string> {
  const repo = findRepo(policy, paths?.[0]);
  let specs = buildPathspecs(sandbox, repo, toRepoPaths(policy, repo, paths ?? []));
  // Git's usual a/ and b/, then the virtual path: `a/src/x.ts` is
  // `/src/x.ts`. (A prefix starting with '/' makes git 2.39 take every
  // file for a new one: it looks for '/dev/null' by the first character.)
  const top = repo.top === "/" ? "" : `${repo.top.slice(1)}/`;
  const prefixes = `--src-prefix=${quoteShell(`a/${top}`)} --dst-prefix=${quoteShell(`b/${top}`)}`;
  const flags = `${staged ? "--cached " : ""}--no-color --no-ext-diff --no-textconv --ignore-submodules=all --no-relative`;
  // The names first (unquoted, -z): git's pathspecs fold ASCII case only,
  // the sandbox's secrets match more (a Kelvin sign for K); a diff that
  // would show one is made again from the other names, literally.
  const marker = makeMarker();
  const diffOf = (spec: string) =>
    runRead(
      sandbox,
      repo,
      `g diff ${flags} --name-only -z -- ${spec} 2>/dev/null; printf '\\0%s\\0' ${quoteShell(marker)}; g diff ${flags} ${prefixes} -- ${spec}`,
      "git_diff",
      opts,
      true,
    );
  let r = await diffOf(specs);
  const hide = hideSecrets(policy, repo);
  const cut = r.stdout.indexOf(`\0${marker}\0`);
  const names = splitNames(cut < 0 ? "" : r.stdout.slice(0, cut));
  // A secret git did not leave out is masked in the confinement: the diff
  // of it fails or is withheld; the other names are diffed again.
  if (!names.some(hide) && r.exitCode !== 0)
    throw gitFailed("git_diff", repo.top, describeGitError(r.stderr));
  if (names.some(hide)) {
    const shown = names.filter((n) => !hide(n));
    if (shown.length === 0) r = { ...r, stdout: "" };
    else {
      specs = shown.map((n) => quoteShell(`:(top,literal)${n}`)).join(" ");
      r = await diffOf(specs);
      if (r.exitCode !== 0) throw gitFailed("git_diff", repo.top, describeGitError(r.stderr));
    }
  }
  const at = r.stdout.indexOf(`\0${marker}\0`);
  r = { ...r, stdout: at < 0 ? r.stdout : r.stdout.slice(at + marker.length + 2) };
  if (r.stdout === "")
    return staged
      ? "No staged changes (git_diff without staged shows unstaged ones; git_status lists untracked files)."
      : "No unstaged changes in tracked files (git_diff with staged: true shows staged ones; git_status lists untracked files).";
  const diff = rewriteDiffHeaders(repo, r.stdout);
  return r.truncated
    ? `${diff}\n[The diff was cut at ${MAX_OUTPUT_BYTES} bytes: ask for fewer paths.]`
    : diff;
}

async function gitLog(
  sandbox: Sandbox,
  policy: Policy,
  path: string | undefined,
  limit: number | undefined,
  opts: GitToolOptions,
): Promise<string> {
  const repo = findRepo(policy, path);
  const specs = buildPathspecs(sandbox, repo, toRepoPaths(policy, repo, path ? [path] : []));
  const marker = makeMarker();
  const n = limit ?? DEFAULT_LOG_COMMITS;
  const r = await runRead(
    sandbox,
    repo,
    `g rev-parse -q --verify HEAD >/dev/null || exit 3
g log -z --no-color --no-decorate --no-show-signature ${quoteShell(logFormat(marker))} --name-status --ignore-submodules=all -n ${n} -- ${specs}`,
    "git_log",
    opts,
  );
  if (r.exitCode === 3) return `No commits yet in the repository ${quotePath(repo.top)}.`;
  if (r.exitCode !== 0) throw gitFailed("git_log", repo.top, describeGitError(r.stderr));
  const commits = parseLog(repo, r.stdout, marker, hideSecrets(policy, repo));
  if (commits.length === 0) return "No commits changed that path.";
  return formatCommits(commits);
}

/** Runs a reading git command over the sandbox made read-only. */
function runRead(
  sandbox: Sandbox,
  repo: Repo,
  body: string,
  tool: string,
  opts: GitToolOptions,
  allowTruncated = false,
) {
  return runGit(sandbox.restrict({ readonly: true }), repo, body, {
    tool,
    allowTruncated,
    env: { GIT_OPTIONAL_LOCKS: "0" },
    signal: opts.signal,
    timeoutMs: opts.timeoutMs,
  });
}

/** True for a repository-relative path the sandbox's secrets withhold (its own matcher). */
function hideSecrets(policy: Policy, repo: Repo): (rel: string) => boolean {
  return (rel) => policy.secrets.find(toVirtualPath(repo, rel)) !== undefined;
}
