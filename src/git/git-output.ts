/**
 * Git's machine output (`-z`: NUL-separated, paths as they are) turned into
 * text for a model, every path repository-relative in, virtual out.
 * Names and messages come from the repository (a hostile one, perhaps):
 * control characters are escaped, so nothing reaches a terminal or a log
 * as an escape sequence.
 */
import { escapeControl } from "../errors/index.js";
import { type Repo, toVirtualPath } from "./git-repo.js";

/** The `git log` format: fields NUL-separated, the message closed by the run's marker. */
export function logFormat(marker: string): string {
  return `--format=%x00${marker}%x00%H%x00%an <%ae>%x00%aI%x00%B%x00${marker}.`;
}

/** A repository-relative path from git, shown as a virtual path. */
export function showGitPath(repo: Repo, rel: string): string {
  return escapeControl(toVirtualPath(repo, rel));
}

/**
 * `git status --porcelain=v1 -z --branch` as lines: the branch, then
 * `XY /virtual/path` (`XY /from -> /to` for a rename or copy).
 */
export function formatStatus(
  repo: Repo,
  stdout: string,
  hide: (rel: string) => boolean = () => false,
): string {
  const tokens = stdout.split("\0");
  const lines: string[] = [];
  let branch = "";
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i]!;
    if (t === "") continue;
    if (i === 0 && t.startsWith("## ")) {
      branch = describeBranch(t.slice(3));
      continue;
    }
    const xy = t.slice(0, 2);
    const path = t.slice(3);
    if (xy[0] === "R" || xy[0] === "C") {
      const from = tokens[++i] ?? "";
      if (hide(from) || hide(path)) continue;
      lines.push(`${xy} ${showGitPath(repo, from)} -> ${showGitPath(repo, path)}`);
    } else if (!hide(path)) {
      lines.push(`${xy} ${showGitPath(repo, path)}`);
    }
  }
  const head = `Repository ${escapeControl(repo.top)}${branch === "" ? "" : `, ${branch}`}.`;
  if (lines.length === 0) return `${head}\nNo changes (nothing to commit, working tree clean).`;
  return `${head}\nX = staged, Y = not staged (M modified, A added, D deleted, R renamed, C copied, T type changed, U unmerged); ?? = untracked.\n${lines.join("\n")}`;
}

/** The `## …` line of `git status --branch`, in words. */
function describeBranch(line: string): string {
  const unborn = /^No commits yet on (.*)$/.exec(line);
  if (unborn) return `branch ${escapeControl(unborn[1]!)} (no commits yet)`;
  if (line.startsWith("HEAD (no branch)")) return "detached HEAD (no branch)";
  return `branch ${escapeControl(line)}`;
}

/** One commit of a `git log` run with {@link logFormat} and `--name-status -z`. */
interface Commit {
  hash: string;
  author: string;
  date: string;
  message: string;
  files: string[];
}

/**
 * Parses a `git log` run with {@link logFormat}, `-z` and `--name-status`;
 * files `hide` names are left out.
 */
export function parseLog(
  repo: Repo,
  stdout: string,
  marker: string,
  hide: (rel: string) => boolean = () => false,
): Commit[] {
  const out: Commit[] = [];
  const records = stdout.split(`\0${marker}\0`).slice(1);
  for (const rec of records) {
    const end = rec.indexOf(`\0${marker}.`);
    if (end < 0) continue;
    const head = rec.slice(0, end);
    const [hash = "", author = "", date = ""] = head.split("\0", 3);
    const message = head.slice(hash.length + author.length + date.length + 3);
    const tokens = rec
      .slice(end + marker.length + 2)
      .split("\0")
      .map((t) => t.replace(/^\n/, ""));
    const files: string[] = [];
    for (let i = 0; i < tokens.length; i++) {
      const status = tokens[i]!;
      if (status === "") continue;
      const letter = status[0]!;
      if (letter === "R" || letter === "C") {
        const from = tokens[++i] ?? "";
        const to = tokens[++i] ?? "";
        if (!hide(from) && !hide(to))
          files.push(`${letter} ${showGitPath(repo, from)} -> ${showGitPath(repo, to)}`);
      } else {
        const rel = tokens[++i] ?? "";
        if (!hide(rel)) files.push(`${escapeControl(letter)} ${showGitPath(repo, rel)}`);
      }
    }
    out.push({ hash, author, date, message, files });
  }
  return out;
}

/** Commits as text, `git log`'s medium format with the files changed. */
export function formatCommits(commits: readonly Commit[]): string {
  return commits
    .map((c) => {
      const body = c.message
        .replace(/\s+$/, "")
        .split("\n")
        .map((l) => (l === "" ? "" : `    ${escapeControl(l)}`));
      const files = c.files.map((f) => `    ${f}`);
      return [
        `commit ${escapeControl(c.hash)}`,
        `Author: ${escapeControl(c.author)}`,
        `Date:   ${escapeControl(c.date)}`,
        "",
        ...body,
        ...(files.length > 0 ? ["", ...files] : []),
      ].join("\n");
    })
    .join("\n\n");
}

/**
 * A diff's extended header lines that name a path without git's prefixes
 * (`rename from src/b.ts`, `copy to …`) made virtual. Only header lines
 * start with these words: every line of a hunk starts with ' ', '+', '-'
 * or '\\'. A name git had to quote keeps its quotes.
 */
export function rewriteDiffHeaders(repo: Repo, diff: string): string {
  const top = repo.top === "/" ? "/" : `${repo.top}/`;
  return diff.replace(
    /^((?:rename|copy) (?:from|to) )("?)/gm,
    (_, head: string, quote: string) => `${head}${quote}${top}`,
  );
}

/** NUL-separated names (`git … -z --name-only`, `ls-files -z`): the non-empty ones. */
export function splitNames(text: string): string[] {
  return text.split("\0").filter((t) => t !== "");
}
