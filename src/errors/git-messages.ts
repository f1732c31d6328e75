/**
 * Messages of the git tools' refusals and failures (issue 24), written for
 * an LLM like every other: what was refused, why, what IS allowed and what
 * to do next. Virtual paths only.
 */
import {
  FileNotFoundError,
  IoError,
  PathNotInSandboxError,
  PathNotWritableError,
} from "./error-classes.js";
import { formatPathList, quotePath } from "./escape-text.js";

/** How many paths a message names at most. */
const MAX_NAMED = 10;

function nameSome(paths: readonly string[]): string {
  const named = paths.slice(0, MAX_NAMED).map(quotePath).join(", ");
  return paths.length > MAX_NAMED ? `${named} and ${paths.length - MAX_NAMED} more` : named;
}

/** `path` lies in no git repository. */
export function notInGitRepository(path: string): FileNotFoundError {
  return new FileNotFoundError(
    `${quotePath(path)} is not inside a git repository: no folder at or above it holds a .git folder. Use the git tools on a path inside a repository.`,
    path,
  );
}

/** The repository holding `path` has its top folder outside the sandbox. */
export function gitTopOutside(path: string, readable: readonly string[]): PathNotInSandboxError {
  return new PathNotInSandboxError(
    `Cannot use git on ${quotePath(path)}: it lies in a git repository whose top folder (the one holding .git) is outside the sandbox, so git would show and record files this sandbox does not hold. The git tools work only on a repository that lies wholly in the sandbox; use the file tools here instead.\nReadable paths: ${formatPathList(readable)}`,
    path,
  );
}

/**
 * The agent cannot read the whole repository `top` holding `path`: its
 * history and status would show files it may not read. `why` says what
 * is missing (an area, a suffix allowlist).
 */
export function gitNeedsWholeRepository(
  path: string,
  top: string,
  readable: readonly string[],
  why = "this agent cannot read all of it",
): PathNotInSandboxError {
  return new PathNotInSandboxError(
    `Cannot use git on ${quotePath(path)}: the git tools need read access to the whole repository ${quotePath(top)}, and ${why}. Git's status, diffs and history would show files it may not read. Use the file tools (read_file, list_files, grep) on the readable paths instead, or ask for an agent that can read all of ${quotePath(top)}.\nReadable paths: ${formatPathList(readable)}`,
    path,
  );
}

/** The repository's `.git` at `top` is no folder (a gitfile, a link). */
export function gitDirUnsupported(top: string, kind: "file" | "link"): IoError {
  const what =
    kind === "file"
      ? "a file, not a folder (a linked work tree or a submodule)"
      : "a link, not a folder";
  const dotGit = top === "/" ? "/.git" : `${top}/.git`;
  return new IoError(
    `Cannot use git on the repository ${quotePath(top)}: its ${quotePath(dotGit)} is ${what}. The git tools work only on a repository whose .git is a folder inside the sandbox.`,
    top,
  );
}

/** A path given to a git tool is not in the repository of the first one, or is git's own. */
export function gitPathRefused(path: string, top: string, why: string): PathNotInSandboxError {
  return new PathNotInSandboxError(
    `Cannot use git on ${quotePath(path)}: ${why}. The repository is ${quotePath(top)}; name files and folders of its work tree (one repository per call).`,
    path,
  );
}

/** Committing needs `.git` writable, and it is not (protected, read-only or outside). */
export function gitDirNotWritable(
  top: string,
  writable: readonly string[],
  isProtected: boolean,
): PathNotWritableError {
  const dotGit = top === "/" ? "/.git" : `${top}/.git`;
  const why = isProtected
    ? `committing writes the repository's ${quotePath(dotGit)}, which is protected: by default no agent may write in a .git folder (a hook or config planted there would run as the user at their next git command). Only the user can allow it, by un-protecting .git in the sandbox config (\`protected: []\`, or a list without '.git')`
    : `committing writes the repository's ${quotePath(dotGit)}, which this agent cannot write`;
  return new PathNotWritableError(
    `Cannot commit in ${quotePath(top)}: ${why}. Nothing was staged or committed.\nWritable paths: ${formatPathList(writable)}`,
    dotGit,
  );
}

/** Some paths a commit would record are not writable by the agent. */
export function gitCommitNotWritable(
  paths: readonly string[],
  writable: readonly string[],
): PathNotWritableError {
  return new PathNotWritableError(
    `Cannot commit: committing records a path's current content, and this agent cannot write ${nameSome(paths)}. Nothing was staged or committed. Commit only paths under the writable ones (name the files you changed).\nWritable paths: ${formatPathList(writable)}`,
    paths[0],
  );
}

/** Some paths a commit would record go through a filter driver, which the git tools never run. */
export function gitCommitFiltered(paths: readonly string[]): IoError {
  return new IoError(
    `Cannot commit ${nameSome(paths)}: the repository's .gitattributes gives them a filter (Git LFS, say) whose program the git tools never run, so git would record them unfiltered. Nothing was staged or committed. Leave them out of the commit; the user can commit them with their own git.`,
    paths[0],
  );
}

/** A commit names more than a command line can carry. */
export function gitCommitTooLarge(count: number): IoError {
  return new IoError(
    `Cannot commit ${count} files in one call: their paths are too long for one command. Nothing was staged or committed. Commit them in smaller groups (fewer folders or files per call).`,
  );
}

/** Git itself failed; `detail` is its message (virtual paths, escaped). */
export function gitFailed(tool: string, top: string, detail: string): IoError {
  return new IoError(
    `${tool} failed in the repository ${quotePath(top)}: ${detail === "" ? "git gave no reason" : detail}`,
    top,
  );
}
