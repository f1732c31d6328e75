/**
 * Message factories. Every user-facing text is built here so wording stays
 * consistent and is pinned by snapshot tests. Each message is written for an
 * LLM: what was refused, what IS allowed, and what to do next. Node's fs
 * errors are wrapped without their messages (which hold host paths).
 */
import {
  ApprovalDeniedError,
  ConfigError,
  type ConfigIssue,
  EditFailedError,
  FileExistsError,
  FileNotFoundError,
  FileTooLargeError,
  InvalidPathError,
  IoError,
  PathNotInSandboxError,
  PathNotWritableError,
  SandboxError,
  SecretWithheldError,
  SuffixNotAllowedError,
} from "./error-classes.js";
import { escapeControl, formatKeyPath, formatPathList, quotePath } from "./escape-text.js";

/**
 * Builds a {@link PathNotInSandboxError} for `path`. `writable`, when given,
 * adds the writable paths (for a refused write).
 */
export function notInSandbox(
  path: string,
  readable: readonly string[],
  why?: string,
  writable?: readonly string[],
): PathNotInSandboxError {
  const reason = why ?? "it is outside the sandbox";
  const w = writable === undefined ? "" : `\nWritable paths: ${formatPathList(writable)}`;
  return new PathNotInSandboxError(
    `Cannot access ${quotePath(path)}: ${reason}.\nReadable paths: ${formatPathList(readable)}${w}`,
    path,
  );
}

/**
 * Builds a {@link PathNotWritableError} for `path`. `readOnlyInside` names
 * read-only mounts nested inside the writable paths.
 */
export function notWritable(
  path: string,
  writable: readonly string[],
  why?: string,
  readOnlyInside: readonly string[] = [],
): PathNotWritableError {
  const reason = why ?? "this path is read-only";
  const except =
    readOnlyInside.length > 0 ? ` (read-only inside: ${readOnlyInside.join(", ")})` : "";
  return new PathNotWritableError(
    `Cannot write to ${quotePath(path)}: ${reason}.\nWritable paths: ${formatPathList(writable)}${except}`,
    path,
  );
}

/** Builds a {@link SuffixNotAllowedError} for `path`. */
export function suffixNotAllowed(
  path: string,
  suffix: string,
  allowed: readonly string[],
): SuffixNotAllowedError {
  const what = suffix === "" ? "files without a suffix are" : `files ending in '${suffix}' are`;
  return new SuffixNotAllowedError(
    `Cannot access ${quotePath(path)}: ${what} not allowed.\nAllowed suffixes: ${formatPathList(allowed)}`,
    path,
  );
}

/** Builds a {@link FileTooLargeError}. */
export function fileTooLarge(
  path: string,
  size: number,
  limit: number,
  verb = "read",
): FileTooLargeError {
  return new FileTooLargeError(
    `Cannot ${verb} ${quotePath(path)}: ${size} bytes is over the limit of ${limit} bytes.\nWork with a smaller file, or ask for a larger max_file_bytes.`,
    path,
  );
}

/**
 * Builds the {@link FileTooLargeError} of a whole-file read past a default
 * cap (one no mount set): names the cap and says how to read a part.
 */
export function fileTooLargeToReadWhole(
  path: string,
  size: number,
  limit: number,
): FileTooLargeError {
  return new FileTooLargeError(
    `Cannot read ${quotePath(path)}: ${size} bytes is over the limit of ${limit} bytes for reading a whole file (no max_file_bytes is set for it).\nRead a part instead: search it with grep (it reads big files in chunks, up to its maxFileBytes), or run head, tail or sed on it if you have a shell; or ask for a larger max_file_bytes on its mount.`,
    path,
  );
}

/** Builds an {@link InvalidPathError}: `problem` says what is wrong, `fix` what to use. */
export function invalidPath(
  path: string | undefined,
  problem: string,
  fix: string,
): InvalidPathError {
  return new InvalidPathError(
    `Invalid path${path === undefined ? "" : ` ${quotePath(path)}`}: ${problem}. ${fix}`,
    path,
  );
}

/** Builds a {@link FileNotFoundError}, naming the nearest existing directory if known. */
export function notFound(path: string, nearestDir?: string): FileNotFoundError {
  const hint =
    nearestDir === undefined ? "" : `\nNearest existing directory: ${quotePath(nearestDir)}`;
  return new FileNotFoundError(`Not found: ${quotePath(path)} does not exist.${hint}`, path);
}

/** What a {@link secretWithheld} error is about. */
export interface SecretRefusal {
  /** What was asked: `read`, `write`, or a change (move, remove) of a folder holding one. */
  access: "read" | "write" | "holds";
  /** The `secrets` entry matched (absent for `holds`: no name is given away). */
  entry?: string | undefined;
  /** The secret a link leads to, when `path` itself is not one. */
  via?: string | undefined;
}

/**
 * Builds a {@link SecretWithheldError}: the path is withheld by
 * configuration (the sandbox's `secrets` list), not missing; nothing an
 * agent can do reaches it; the user can change the list.
 */
export function secretWithheld(path: string, r: SecretRefusal): SecretWithheldError {
  const entry =
    r.entry === undefined ? "" : ` (it matches the secrets entry ${quotePath(r.entry)})`;
  const next =
    "Do not look for another way to it: no tool, search, listing or shell command shows secrets. If the task needs it, ask the user: they can change the sandbox's 'secrets' list.";
  if (r.access === "holds")
    return new SecretWithheldError(
      `Cannot change ${quotePath(path)}: it holds a file withheld by configuration (the sandbox's 'secrets' list), which agents cannot read, move or remove, so neither can its folder be moved or removed. Move or remove the other entries one by one. ${next}`,
      path,
    );
  const what =
    r.via === undefined
      ? r.access === "read"
        ? `it exists, but it is a secret withheld by configuration${entry}`
        : `its name is a secret withheld by configuration${entry}: agents cannot create, change, move or remove such files`
      : `it leads (through a link) to ${quotePath(r.via)}, a secret withheld by configuration${entry}`;
  return new SecretWithheldError(
    `Cannot ${r.access === "read" ? "read" : "write to"} ${quotePath(path)}: ${what}. ${next}`,
    path,
  );
}

/** Builds a {@link FileExistsError}. */
export function alreadyExists(path: string, option = "overwrite: true"): FileExistsError {
  return new FileExistsError(
    `Cannot create ${quotePath(path)}: it already exists. Pass ${option} to replace it.`,
    path,
  );
}

/** Builds an {@link EditFailedError}; `count` is how often `oldText` was found. */
export function editFailed(
  path: string,
  index: number,
  oldText: string,
  count: number,
): EditFailedError {
  const start = oldText.length > 60 ? `${oldText.slice(0, 60)}…` : oldText;
  const problem =
    count === 0
      ? "oldText was not found. Read the file again and copy the text exactly, including whitespace"
      : `oldText was found ${count} times. Include more surrounding lines so it matches exactly once`;
  return new EditFailedError(
    `Edit #${index + 1} on ${quotePath(path)} failed: ${problem}.\noldText starts with: ${JSON.stringify(start)}`,
    path,
  );
}

/**
 * Builds an {@link EditFailedError} for an edit whose file was changed by
 * someone else (a shell command, another program) between its read and its
 * write: `problem` is why the edits no longer apply to the new text, or
 * undefined when the file kept changing for `attempts` reads in a row.
 */
export function editFileChanged(path: string, problem?: string, attempts = 0): EditFailedError {
  const head = `Cannot edit ${quotePath(path)}: the file changed while it was being edited`;
  const message =
    problem === undefined
      ? `${head}, ${attempts} times in a row (another program or a shell command is writing it). Nothing was written. Read the file again and retry the edit once it is no longer being written.`
      : `${head} (another program or a shell command wrote it), and the edit no longer applies to it. Nothing was written. Read the file again and retry the edit.\n${problem}`;
  return new EditFailedError(message, path);
}

/**
 * Builds an {@link EditFailedError} for an editFile call whose edits would
 * take too long on a file this size (each edit scans the whole text).
 * `perCall` is how many edits one call may carry on this file.
 */
export function editTooMuchWork(
  path: string,
  edits: number,
  chars: number,
  budget: number,
  perCall: number,
): EditFailedError {
  const n = (x: number) => x.toLocaleString("en-US");
  const fix =
    perCall >= 1
      ? `Split the edits into several editFile calls of at most ${n(perCall)} edit${perCall === 1 ? "" : "s"} each, or write the whole file with writeFile.`
      : "The file is too large for editFile; write the whole file with writeFile.";
  return new EditFailedError(
    `Edit on ${quotePath(path)} refused: ${n(edits)} edit${edits === 1 ? "" : "s"} on a file of about ${n(chars)} characters is more work than one call may do (edits × characters at most ${n(budget)}). Nothing was changed. ${fix}`,
    path,
  );
}

/** Builds an {@link ApprovalDeniedError}. */
export function approvalDenied(what: string, path?: string): ApprovalDeniedError {
  return new ApprovalDeniedError(
    `Access denied: ${what} was not approved. Do not retry the same request; ask the user or choose another path.`,
    path,
  );
}

/** Builds an {@link IoError} for an operation on a virtual path. */
export function ioError(operation: string, path: string | undefined, detail: string): IoError {
  const where = path === undefined ? "" : ` on ${quotePath(path)}`;
  return new IoError(`I/O error during ${operation}${where}: ${detail}.`, path);
}

/**
 * Builds a {@link ConfigError} listing every issue as `✖ message → at key.path`.
 * Messages and the source are escaped: they quote what a config file said
 * (its keys, file names, module paths), and a hostile one would otherwise
 * put escape sequences on the terminal of whoever checks it.
 */
export function configError(issues: ConfigIssue[], source?: string): ConfigError {
  const lines = issues.map(
    (i) => `✖ ${escapeControl(i.message)}${i.path.length ? ` → at ${formatKeyPath(i.path)}` : ""}`,
  );
  const head =
    source === undefined
      ? "Invalid configuration"
      : `Invalid configuration in ${escapeControl(source)}`;
  return new ConfigError(`${head}:\n${lines.join("\n")}`, issues);
}

const ERRNO_TEXT: Record<string, string> = {
  EISDIR: "it is a directory, not a file",
  ENOTDIR: "a parent of it is not a directory",
  EACCES: "permission denied by the operating system",
  EPERM: "operation not permitted by the operating system",
  ENOSPC: "no space left on the device",
  EDQUOT: "disk quota exceeded",
  EROFS: "the file system is read-only",
  ENOTEMPTY: "the directory is not empty (pass recursive: true to remove it with its contents)",
  EEXIST: "it already exists",
  ELOOP: "too many levels of symbolic links",
  EMFILE: "too many open files",
  ENAMETOOLONG: "the name is too long",
  EXDEV: "cannot move across devices",
  EBUSY: "the resource is busy",
  EINVAL: "invalid argument",
  EFBIG: "the file is too large",
};

/**
 * Wraps any thrown value from Node's fs into a mountbox error that carries
 * only the virtual path. Node's own messages include host paths, so the
 * original message is never reused.
 */
export function wrapFsError(err: unknown, operation: string, virtualPath: string): SandboxError {
  if (err instanceof SandboxError) return err;
  const code =
    typeof err === "object" && err !== null && "code" in err
      ? String((err as { code: unknown }).code)
      : "";
  if (code === "ENOENT") return notFound(virtualPath);
  if (code === "EEXIST") return alreadyExists(virtualPath);
  const detail = ERRNO_TEXT[code]
    ? `${ERRNO_TEXT[code]} (${code})`
    : code
      ? `system error ${code}`
      : "unexpected error";
  return ioError(operation, virtualPath, detail);
}
