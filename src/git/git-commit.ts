/**
 * `git_commit(paths, message)`: commits exactly the current changes under
 * the given paths (new, changed and deleted files), leaving every other
 * change as it was, staged or not.
 *
 * Checked before anything is written: the agent may write the repository's
 * `.git` (protected by default: only the user can un-protect it) and every
 * path the commit would record — not only the paths named, but each file
 * with a change under them, listed by a first, read-only git run. The
 * commit then names exactly those files (literal pathspecs), so a file
 * that changes in between is not swept in. A file that `.gitattributes`
 * gives a configured filter (Git LFS, say) is refused: the git tools never
 * run filters, and git would record it unfiltered.
 *
 * The identity is the repository's `user.name` / `user.email` when its
 * config sets them (the user's own config is never read), else "mountbox
 * agent <agent@mountbox.invalid>".
 */
import {
  escapeControl,
  gitCommitFiltered,
  gitCommitNotWritable,
  gitCommitTooLarge,
  gitDirNotWritable,
  gitFailed,
  quotePath,
  secretWithheld,
} from "../errors/index.js";
import type { Policy } from "../sandbox/policy.js";
import type { Sandbox } from "../sandbox/sandbox.js";
import { describeGitError, makeMarker, quoteShell, runGit } from "./git-command.js";
import { formatCommits, logFormat, parseLog, showGitPath, splitNames } from "./git-output.js";
import { buildPathspecs, findSecretEntry } from "./git-pathspecs.js";
import { findRepo, type Repo, toRepoPaths, toVirtualPath } from "./git-repo.js";
import type { GitToolOptions } from "./git-tools.js";

/** Most characters of quoted file names one commit may carry (a command line holds 128 KiB). */
const MAX_QUOTED_CHARS = 100_000;
/** The identity of a commit when the repository's config sets none. */
const FALLBACK_NAME = "mountbox agent";
const FALLBACK_EMAIL = "agent@mountbox.invalid";

/**
 * Commits the changes under `paths` with `message`.
 * @returns what was committed: hash, branch, message's first line, files
 * @throws SandboxError for a refusal (nothing is staged or committed then)
 *   or a failure of git
 */
export async function commitPaths(
  sandbox: Sandbox,
  policy: Policy,
  paths: readonly string[],
  message: string,
  opts: GitToolOptions,
): Promise<string> {
  const repo = findRepo(policy, paths[0]);
  checkGitDirWritable(policy, repo);
  const rels = toRepoPaths(policy, repo, paths);
  rels.forEach((rel, i) => {
    const entry = rel === "" ? undefined : findSecretEntry(sandbox, rel);
    if (entry !== undefined) throw secretWithheld(paths[i]!, { access: "write", entry });
  });
  const files = await listChanges(sandbox, repo, rels, opts);
  if (files.length === 0)
    return `Nothing to commit: no changes under ${paths.map(quotePath).join(", ")}.`;
  const unwritable = files
    .map((f) => toVirtualPath(repo, f))
    .filter((v) => policy.deny(v, "write") !== undefined);
  if (unwritable.length > 0) throw gitCommitNotWritable(unwritable, policy.writableRoots);
  const quoted = files.map(quoteShell).join(" ");
  if (quoted.length > MAX_QUOTED_CHARS) throw gitCommitTooLarge(files.length);
  return commitFiles(sandbox, repo, quoted, message, opts);
}

/** Refuses unless the agent may write the repository's `.git`. */
function checkGitDirWritable(policy: Policy, repo: Repo): void {
  const dotGit = toVirtualPath(repo, ".git");
  const denial = policy.deny(dotGit, "write", false);
  if (denial !== undefined)
    throw gitDirNotWritable(repo.top, policy.writableRoots, denial === "protected");
}

/**
 * The files whose committed state a commit of `rels` would change (changed,
 * deleted, untracked-not-ignored, or staged), by a read-only run; refuses
 * those a configured filter applies to.
 */
async function listChanges(
  sandbox: Sandbox,
  repo: Repo,
  rels: readonly string[],
  opts: GitToolOptions,
): Promise<string[]> {
  const specs = buildPathspecs(sandbox, repo, rels);
  const m = makeMarker();
  const r = await runGit(
    sandbox.restrict({ readonly: true }),
    repo,
    `{ g ls-files -z -m -o -d --exclude-standard -- ${specs} && g diff --cached --name-only -z --no-renames --ignore-submodules=all -- ${specs}; } > /tmp/mountbox-changes || exit 4
cat /tmp/mountbox-changes
printf '\\0%s\\0' ${m}
g check-attr -z --stdin filter < /tmp/mountbox-changes || exit 4
printf '\\0%s\\0' ${m}
g config -z --name-only --list`,
    { tool: "git_commit", env: { GIT_OPTIONAL_LOCKS: "0" }, ...pick(opts) },
  );
  if (r.exitCode !== 0) throw gitFailed("git_commit", repo.top, describeGitError(r.stderr));
  const [names = "", attrs = "", config = ""] = r.stdout.split(`\0${m}\0`);
  const files = [...new Set(splitNames(names))].sort();
  const drivers = new Set<string>();
  for (const key of splitNames(config)) {
    const d = /^filter\.(.*)\.(?:clean|smudge|process)$/s.exec(key);
    if (d) drivers.add(d[1]!);
  }
  const filtered: string[] = [];
  const a = attrs.split("\0");
  for (let i = 0; i + 2 < a.length; i += 3)
    if (drivers.has(a[i + 2]!)) filtered.push(showGitPath(repo, a[i]!));
  if (filtered.length > 0) throw gitCommitFiltered(filtered.sort());
  return files;
}

/** Stages exactly `quoted` (shell-quoted file names) and commits them. */
async function commitFiles(
  sandbox: Sandbox,
  repo: Repo,
  quoted: string,
  message: string,
  opts: GitToolOptions,
): Promise<string> {
  const m = makeMarker();
  const r = await runGit(
    sandbox,
    repo,
    `export GIT_LITERAL_PATHSPECS=1
g add -A -- ${quoted} || exit 4
g diff --cached --quiet --ignore-submodules=all -- ${quoted} && exit 3
g config user.name >/dev/null || export GIT_AUTHOR_NAME=${quoteShell(FALLBACK_NAME)} GIT_COMMITTER_NAME=${quoteShell(FALLBACK_NAME)}
g config user.email >/dev/null || export GIT_AUTHOR_EMAIL=${FALLBACK_EMAIL} GIT_COMMITTER_EMAIL=${FALLBACK_EMAIL}
g commit -q --no-verify --no-gpg-sign --cleanup=whitespace -m "$MOUNTBOX_GIT_MESSAGE" --only -- ${quoted} || exit 5
g log -1 -z --no-color --no-decorate --no-show-signature ${quoteShell(logFormat(m))} --name-status HEAD || exit 6
printf '\\0%s\\0' ${m}.branch
g symbolic-ref -q --short HEAD || true`,
    { tool: "git_commit", env: { MOUNTBOX_GIT_MESSAGE: message }, ...pick(opts) },
  );
  if (r.exitCode === 3) return "Nothing to commit: the files under those paths have no changes.";
  if (r.exitCode !== 0) throw gitFailed("git_commit", repo.top, describeGitError(r.stderr));
  const [log = "", branch = ""] = r.stdout.split(`\0${m}.branch\0`);
  const commit = parseLog(repo, log, m)[0];
  if (commit === undefined) throw gitFailed("git_commit", repo.top, describeGitError(r.stderr));
  const name = escapeControl(branch.replace(/\n$/, ""));
  const on = name === "" ? "(detached HEAD)" : `on branch ${name}`;
  return `Committed ${escapeControl(commit.hash.slice(0, 12))} ${on} in ${quotePath(repo.top)}.\n\n${formatCommits([commit])}`;
}

function pick(opts: GitToolOptions): { signal?: AbortSignal; timeoutMs?: number } {
  return {
    ...(opts.signal ? { signal: opts.signal } : {}),
    ...(opts.timeoutMs !== undefined ? { timeoutMs: opts.timeoutMs } : {}),
  };
}
