/**
 * Running git for the git tools: one bash script per run, under
 * `runCommand`'s OS confinement (the sandbox's areas at their virtual paths
 * under `/workspace`, no network, nothing of the host's environment), with
 * everything that would make git execute a program of the repository's
 * choosing turned off.
 *
 * What a repository can make git run, and how each is stopped here:
 * - hooks (`.git/hooks`, `core.hooksPath`): `core.hooksPath=/dev/null`;
 * - `core.fsmonitor`: `false`;
 * - filter drivers (`filter.<name>.clean/smudge/process`, named by any
 *   `.gitattributes`): every one the repository's config defines (with its
 *   includes) is listed by `git config --list` at the start of the same
 *   run and emptied, which git takes as "no filter"; `required` is set
 *   false so an emptied filter is not an error;
 * - diff drivers (`diff.<name>.textconv/command`, `diff.external`):
 *   `--no-textconv --no-ext-diff` on every command that diffs;
 * - pagers and editors: `--no-pager`, `core.pager=cat`, `core.editor=:`;
 * - signing programs: signing off, and the programs set to `false`;
 * - credential helpers, ssh, remote helpers: `protocol.allow=never` (no
 *   transport at all), `credential.helper=` (none);
 * - the user's own config: `GIT_CONFIG_NOSYSTEM`, `GIT_CONFIG_GLOBAL=/dev/null`,
 *   `HOME` and `XDG_CONFIG_HOME` at `/dev/null`;
 * - submodules (their own config): never entered (`--ignore-submodules=all`).
 *
 * Overrides go in `GIT_CONFIG_COUNT`/`GIT_CONFIG_KEY_n`/`GIT_CONFIG_VALUE_n`
 * rather than `-c`, which splits at the first `=` and so could not name a
 * driver whose name holds one. A config changed between the listing and
 * the command (only possible where the agent can write the repository's
 * config, or a file it includes) could slip a filter through: what runs
 * then runs inside the same confinement, with this run's rights.
 */
import { randomBytes } from "node:crypto";
import { escapeControl, gitFailed } from "../errors/index.js";
import { WORKSPACE } from "../os/bind-plan.js";
import { runCommand } from "../os/run-command.js";
import type { Sandbox } from "../sandbox/sandbox.js";
import type { Repo } from "./git-repo.js";

/** Time a git run may take unless the caller says otherwise. */
export const GIT_TIMEOUT_MS = 60_000;
/** Bytes of stdout a git run may produce (per stream). */
export const MAX_OUTPUT_BYTES = 4 * 1024 * 1024;
/** Characters of git's stderr a failure quotes. */
const MAX_DETAIL_CHARS = 2000;

/** Config set on every run (see the module's comment). */
const FIXED_CONFIG: readonly (readonly [string, string])[] = [
  ["core.hooksPath", "/dev/null"],
  ["core.fsmonitor", "false"],
  ["core.untrackedCache", "false"],
  ["core.pager", "cat"],
  ["core.editor", ":"],
  ["sequence.editor", ":"],
  ["core.attributesFile", "/dev/null"],
  ["core.quotePath", "false"],
  ["credential.helper", ""],
  ["protocol.allow", "never"],
  ["commit.gpgSign", "false"],
  ["tag.gpgSign", "false"],
  ["log.showSignature", "false"],
  ["gpg.program", "false"],
  ["gpg.ssh.program", "false"],
  ["gpg.x509.program", "false"],
  ["submodule.recurse", "false"],
  ["diff.ignoreSubmodules", "all"],
  ["status.submoduleSummary", "false"],
  ["color.ui", "false"],
  ["log.follow", "false"],
  ["diff.noprefix", "false"],
  ["diff.relative", "false"],
  ["gc.auto", "0"],
  ["maintenance.auto", "false"],
  // Ownership under the user namespace may differ from the host's (files
  // of an unmapped owner show as nobody's): what ownership guards against,
  // a repository's config running programs, is switched off above.
  ["safe.directory", "*"],
];

/**
 * The start of every run: into the work tree, then each filter driver the
 * repository's config defines emptied (see the module's comment).
 */
const PRELUDE = `cd -- "$GIT_WORK_TREE" || exit 97
n=$GIT_CONFIG_COUNT
while IFS= read -r -d '' k; do
  case $k in
    filter.*.clean | filter.*.smudge | filter.*.process) v= ;;
    filter.*.required) v=false ;;
    *) continue ;;
  esac
  export "GIT_CONFIG_KEY_$n=$k" "GIT_CONFIG_VALUE_$n=$v"
  n=$((n + 1))
done < <(git config -z --name-only --list)
export GIT_CONFIG_COUNT=$n
g() { git --no-pager "$@"; }
`;

/** Options of {@link runGit}. */
export interface GitRunOptions {
  /** The tool, for messages. */
  tool: string;
  /** Extra environment (e.g. the commit message). */
  env?: Record<string, string>;
  signal?: AbortSignal | undefined;
  timeoutMs?: number | undefined;
  /** Accept stdout cut at the cap (a diff: its start is still of use). Default false: an error. */
  allowTruncated?: boolean;
}

/** What a git run printed. */
export interface GitRunResult {
  exitCode: number;
  stdout: string;
  /** Git's messages, with `/workspace` paths made virtual. */
  stderr: string;
  /** True if stdout was cut at {@link MAX_OUTPUT_BYTES} (only with `allowTruncated`). */
  truncated: boolean;
}

/**
 * Runs `body` (bash, after the prelude; `g` is git without a pager) in the
 * repository's work tree under `sandbox`'s confinement.
 * @throws OsSandboxUnavailableError where confinement is unavailable
 * @throws IoError when git was stopped by the timeout or its output cap
 */
export async function runGit(
  sandbox: Sandbox,
  repo: Repo,
  body: string,
  opts: GitRunOptions,
): Promise<GitRunResult> {
  const workTree = repo.top === "/" ? WORKSPACE : `${WORKSPACE}${repo.top}`;
  const env: Record<string, string> = {
    HOME: "/dev/null",
    XDG_CONFIG_HOME: "/dev/null",
    LC_ALL: "C.UTF-8",
    GIT_DIR: `${workTree}/.git`,
    GIT_WORK_TREE: workTree,
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_CONFIG_GLOBAL: "/dev/null",
    GIT_CONFIG_SYSTEM: "/dev/null",
    GIT_ATTR_NOSYSTEM: "1",
    GIT_TERMINAL_PROMPT: "0",
    GIT_NO_LAZY_FETCH: "1",
    GIT_PAGER: "cat",
    PAGER: "cat",
    GIT_EDITOR: ":",
    GIT_CONFIG_COUNT: String(FIXED_CONFIG.length),
    ...opts.env,
  };
  FIXED_CONFIG.forEach(([k, v], i) => {
    env[`GIT_CONFIG_KEY_${i}`] = k;
    env[`GIT_CONFIG_VALUE_${i}`] = v;
  });
  const r = await runCommand(sandbox, PRELUDE + body, {
    env,
    timeoutMs: opts.timeoutMs ?? GIT_TIMEOUT_MS,
    maxOutputBytes: MAX_OUTPUT_BYTES,
    ...(opts.signal ? { signal: opts.signal } : {}),
  });
  const stderr = toVirtualText(r.stderr);
  if (r.timedOut) throw gitFailed(opts.tool, repo.top, "git did not finish in time");
  if (r.truncated && opts.allowTruncated !== true)
    throw gitFailed(
      opts.tool,
      repo.top,
      "its output was larger than the tools accept; limit it to fewer paths (or fewer commits)",
    );
  if (r.exitCode === 97) throw gitFailed(opts.tool, repo.top, "the repository's folder is absent");
  return { exitCode: r.exitCode, stdout: r.stdout, stderr, truncated: r.truncated };
}

/** Git's messages for a failure: `/workspace` paths made virtual, escaped, cut. */
export function describeGitError(stderr: string): string {
  const lines = stderr
    .split("\n")
    .map((l) => l.trimEnd())
    .filter((l) => l !== "" && !/^hint:/.test(l));
  const text = lines.map(escapeControl).join("\n");
  return text.length > MAX_DETAIL_CHARS ? `${text.slice(0, MAX_DETAIL_CHARS)}…` : text;
}

/** Text from inside the confinement with its `/workspace` paths made virtual. */
export function toVirtualText(text: string): string {
  return text.replace(/\/workspace(?=\/|\b|$)\/?/g, "/");
}

/** A word bash reads back as it is (single-quoted). */
export function quoteShell(word: string): string {
  return `'${word.replaceAll("'", `'\\''`)}'`;
}

/** A marker no file name or commit message can hold: it is new on each call. */
export function makeMarker(): string {
  return `mountbox-${randomBytes(12).toString("hex")}`;
}
