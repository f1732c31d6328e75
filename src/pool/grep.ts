/**
 * grep over a policy: the search itself, run the same way in-process and in a
 * pool thread, so both give identical results.
 *
 * Files come from `listFiles` (no directory link followed, only files the
 * policy lets the caller read), and each is read through the same checks as
 * `readBytes`: resolve, `openVerified` (O_NOFOLLOW, the descriptor's real path
 * mapped back and checked before a byte is read), a regular file only, the
 * mount's byte cap. A file that fails any of them is skipped, never read.
 * Only the byte loop is grep's own, so that it can stop at its budgets.
 */
import { closeSync, readSync, statSync } from "node:fs";
import { InvalidRequestError, ioError } from "../errors/index.js";
import { openVerified } from "../sandbox/fd-check.js";
import { listFiles } from "../sandbox/io-list.js";
import { capFor } from "../sandbox/io-read.js";
import { startPace, yieldIfDue } from "../sandbox/pace.js";
import type { Policy } from "../sandbox/policy.js";
import type { GrepMatch, GrepOptions, GrepResult } from "../sandbox/types.js";

export type { GrepMatch, GrepOptions, GrepResult };

/** A validated search with every default filled in (structured-cloneable). */
export interface GrepRequest {
  source: string;
  flags: string;
  /** Canonical virtual path. */
  path: string;
  glob: string;
  maxMatches: number;
  maxBytes: number;
  maxFileBytes: number;
  timeBudgetMs: number;
  maxLineChars: number;
}

/** Longest line text returned; the rest is replaced by `…`. */
export const MAX_LINE_CHARS = 500;
/** A file with a NUL byte in its first this-many bytes is binary, and skipped. */
export const BINARY_PROBE_BYTES = 8192;

const DEFAULTS = {
  maxMatches: 100,
  maxBytes: 64 * 1024 * 1024,
  maxFileBytes: 8 * 1024 * 1024,
  timeBudgetMs: 10_000,
  maxLineChars: Number.MAX_SAFE_INTEGER,
};
const LIMITS = {
  maxMatches: 10_000,
  maxBytes: 1024 * 1024 * 1024,
  maxFileBytes: 256 * 1024 * 1024,
  timeBudgetMs: 120_000,
  maxLineChars: Number.MAX_SAFE_INTEGER,
};
/** Lines matched between two looks at the clock. */
const LINES_PER_CHECK = 512;
const READ_CHUNK = 1024 * 1024;

/**
 * Validates search options (the public edge) and canonicalizes the path.
 * @throws InvalidRequestError for bad options (a bad pattern is reported
 *   by {@link runGrep}, which compiles it); the policy's path errors for a bad path
 */
export function prepareGrep(policy: Policy, opts: GrepOptions): GrepRequest {
  if (typeof opts !== "object" || opts === null)
    throw new InvalidRequestError("grep takes an options object with a 'pattern'.");
  if (typeof opts.pattern !== "string" || opts.pattern === "")
    throw new InvalidRequestError("grep needs a non-empty 'pattern' (a regular expression).");
  const flags = checkFlags(opts.flags);
  // The pattern is compiled where the search runs (`runGrep`), never here:
  // some patterns take seconds to compile (a class of a thousand
  // `\p{RGI_Emoji}` with `v`), and this runs on the host's event loop. The
  // flags alone are cheap to check.
  compilePattern("", flags);
  const raw = opts.path ?? "/";
  if (typeof raw !== "string") throw new InvalidRequestError("'path' must be a string.");
  const path = policy.normalize(raw);
  if (path === null) throw policy.climbError(raw, "read");
  const glob = opts.glob ?? "**/*";
  if (typeof glob !== "string" || glob === "")
    throw new InvalidRequestError("'glob' must be a non-empty string.");
  return {
    source: opts.pattern,
    flags,
    path,
    glob,
    maxMatches: checkCount("maxMatches", opts.maxMatches),
    maxBytes: checkCount("maxBytes", opts.maxBytes),
    maxFileBytes: checkCount("maxFileBytes", opts.maxFileBytes),
    timeBudgetMs: checkCount("timeBudgetMs", opts.timeBudgetMs, 0),
    maxLineChars: checkCount("maxLineChars", opts.maxLineChars),
  };
}

function checkFlags(flags: unknown): string {
  if (flags === undefined) return "";
  if (typeof flags !== "string" || !/^[dgimsuvy]*$/.test(flags))
    throw new InvalidRequestError(
      "'flags' may only contain the RegExp flags i, m, s, u, v (g and y are ignored).",
    );
  // Lines are tested one by one with `test`: a sticky or global regex would
  // carry `lastIndex` from line to line.
  return [...new Set(flags.replace(/[gy]/g, ""))].sort().join("");
}

function checkCount(name: keyof typeof DEFAULTS, value: unknown, min = 1): number {
  if (value === undefined) return DEFAULTS[name];
  if (typeof value !== "number" || !Number.isInteger(value) || value < min)
    throw new InvalidRequestError(
      `'${name}' must be a ${min === 0 ? "non-negative" : "positive"} integer.`,
    );
  return Math.min(value, LIMITS[name]);
}

function compilePattern(source: string, flags: string): RegExp {
  try {
    return new RegExp(source, flags);
  } catch (err) {
    throw new InvalidRequestError(
      `The pattern is not a valid regular expression: ${(err as Error).message}`,
    );
  }
}

/** Counters of one search. */
interface Tally {
  bytes: number;
  searched: number;
  binary: number;
  tooLarge: number;
  unreadable: number;
  stop: "matches" | "bytes" | "time" | undefined;
}

/**
 * Runs a prepared search. Yields to the event loop every few ms (so it can
 * run on the host's loop as a fallback) and checks `signal` as it goes.
 * @throws the listing's errors (path refused, not found, …); IoError if stopped
 */
export async function runGrep(
  policy: Policy,
  req: GrepRequest,
  signal?: AbortSignal,
): Promise<GrepResult> {
  // First, so a bad pattern is reported before any path error. In a pool
  // thread a compile that takes seconds holds only that thread, and the
  // task's deadline ends it.
  const regex = compilePattern(req.source, req.flags);
  const deadline = performance.now() + req.timeBudgetMs;
  const listed = await filesToSearch(policy, req, signal);
  throwIfStopped(signal, req.path);
  const files = listed === "time" ? [] : listed;
  const pace = startPace();
  const matches: GrepMatch[] = [];
  const tally: Tally = {
    bytes: 0,
    searched: 0,
    binary: 0,
    tooLarge: 0,
    unreadable: 0,
    stop: listed === "time" ? "time" : undefined,
  };
  for (const file of files) {
    if (await yieldIfDue(pace)) throwIfStopped(signal, req.path);
    if (performance.now() > deadline) {
      tally.stop = "time";
      break;
    }
    const bytes = readChecked(policy, file, req, tally);
    if (bytes === undefined) {
      if (tally.stop) break;
      continue;
    }
    if (isBinary(bytes)) {
      tally.binary++;
      continue;
    }
    tally.searched++;
    const stop = searchText(decoder.decode(bytes), file, regex, req, matches, deadline);
    if (stop) {
      tally.stop = stop;
      break;
    }
  }
  throwIfStopped(signal, req.path);
  const result: GrepResult = {
    matches,
    truncated: tally.stop !== undefined,
    filesSearched: tally.searched,
    filesListed: files.length,
    skipped: { binary: tally.binary, tooLarge: tally.tooLarge, unreadable: tally.unreadable },
  };
  if (tally.stop) result.stoppedBy = tally.stop;
  const notice = describeTally(tally, req, files.length);
  if (notice) result.notice = notice;
  return result;
}

/**
 * The files to search: the one file `path` names, or the listing under it
 * (cut short, as an empty list, when the time budget ends the walk).
 */
async function filesToSearch(
  policy: Policy,
  req: GrepRequest,
  signal: AbortSignal | undefined,
): Promise<string[] | "time"> {
  if (isRegularFile(policy, req.path)) {
    // The full read check (suffix included), so a refused file says why.
    policy.resolveVirtual(req.path, "read");
    return [req.path];
  }
  const timer = AbortSignal.timeout(req.timeBudgetMs);
  try {
    return await listFiles(
      policy,
      req.path,
      req.glob,
      signal ? AbortSignal.any([signal, timer]) : timer,
    );
  } catch (err) {
    if (timer.aborted && !signal?.aborted) return "time";
    throw err;
  }
}

/** True if `v` is readable (suffix aside) and leads to a regular file. */
function isRegularFile(policy: Policy, v: string): boolean {
  try {
    if (policy.deny(v, "read", false) !== undefined) return false;
    return statSync(policy.resolveVirtual(v, "read", false).real).isFile();
  } catch {
    return false; // the listing reports the path's error
  }
}

function throwIfStopped(signal: AbortSignal | undefined, path: string): void {
  if (signal?.aborted) throw ioError("grep", path, "the search was stopped before it finished");
}

const decoder = new TextDecoder("utf-8");

/**
 * The bytes of one listed file, read only through the verified open; or
 * undefined when it is skipped (counted in `tally`) or the byte budget ends
 * the search (`tally.stop`).
 */
function readChecked(
  policy: Policy,
  file: string,
  req: GrepRequest,
  tally: Tally,
): Uint8Array | undefined {
  let opened: ReturnType<typeof openVerified>;
  try {
    opened = openVerified(policy, policy.resolveVirtual(file, "read"), "read", true);
  } catch {
    tally.unreadable++; // refused, vanished, or swapped for a link since it was listed
    return undefined;
  }
  const { fd, stats } = opened;
  try {
    if (!stats.isFile()) {
      tally.unreadable++;
      return undefined;
    }
    const cap = Math.min(capFor(policy, file, opened.realVirtual) ?? Infinity, req.maxFileBytes);
    if (stats.size > cap) {
      tally.tooLarge++;
      return undefined;
    }
    if (tally.bytes + stats.size > req.maxBytes) {
      tally.stop = "bytes";
      return undefined;
    }
    const bytes = readUpTo(fd, stats.size, cap + 1);
    if (bytes.length > cap) {
      tally.tooLarge++; // it grew after fstat
      return undefined;
    }
    tally.bytes += bytes.length;
    return bytes;
  } catch {
    tally.unreadable++;
    return undefined;
  } finally {
    closeSync(fd);
  }
}

/** Reads from a verified descriptor until EOF or `limit` bytes. */
function readUpTo(fd: number, size: number, limit: number): Uint8Array {
  let buf = Buffer.allocUnsafe(Math.min(Math.max(size, 1), limit));
  let len = 0;
  for (;;) {
    if (len === buf.length) {
      if (buf.length >= limit) break;
      const bigger = Buffer.allocUnsafe(Math.min(buf.length + READ_CHUNK, limit));
      buf.copy(bigger, 0, 0, len);
      buf = bigger;
    }
    const n = readSync(fd, buf, len, buf.length - len, null);
    if (n === 0) break;
    len += n;
  }
  return new Uint8Array(buf.buffer, buf.byteOffset, len);
}

function isBinary(bytes: Uint8Array): boolean {
  const end = Math.min(bytes.length, BINARY_PROBE_BYTES);
  for (let i = 0; i < end; i++) if (bytes[i] === 0) return true;
  return false;
}

/** Tests each line; returns why the search must stop, if it must. */
function searchText(
  text: string,
  file: string,
  regex: RegExp,
  req: GrepRequest,
  matches: GrepMatch[],
  deadline: number,
): "matches" | "time" | undefined {
  const lines = text.split("\n");
  // A final newline ends the last line; it does not start an empty one.
  if (lines.length > 1 && lines[lines.length - 1] === "") lines.pop();
  for (let i = 0; i < lines.length; i++) {
    if (i % LINES_PER_CHECK === LINES_PER_CHECK - 1 && performance.now() > deadline) return "time";
    let line = lines[i] as string;
    if (line.endsWith("\r")) line = line.slice(0, -1);
    if (!regex.test(line.length > req.maxLineChars ? line.slice(0, req.maxLineChars) : line))
      continue;
    matches.push({ path: file, line: i + 1, text: capLine(line) });
    if (matches.length >= req.maxMatches) return "matches";
  }
  return undefined;
}

function capLine(line: string): string {
  if (line.length <= MAX_LINE_CHARS) return line;
  let end = MAX_LINE_CHARS;
  // Do not cut a surrogate pair in half.
  const c = line.charCodeAt(end - 1);
  if (c >= 0xd800 && c <= 0xdbff) end--;
  return `${line.slice(0, end)}…`;
}

function plural(n: number, one: string, many: string): string {
  return `${n} ${n === 1 ? one : many}`;
}

/** The notice for the model, or undefined when there is nothing to say. */
function describeTally(tally: Tally, req: GrepRequest, listed: number): string | undefined {
  const parts: string[] = [];
  if (tally.stop === "matches")
    parts.push(
      `Showing the first ${req.maxMatches} matches; there are more. Narrow the pattern, the path or the glob to see the rest.`,
    );
  else if (tally.stop === "bytes")
    parts.push(
      `Stopped after reading ${tally.bytes} bytes (the search's byte budget); ${tally.searched} of ${listed} files were searched. Narrow the path or the glob to search the rest.`,
    );
  else if (tally.stop === "time")
    parts.push(
      `Stopped after ${req.timeBudgetMs} ms (the search's time budget); ${tally.searched} of ${listed} files were searched. Narrow the path, the glob or the pattern.`,
    );
  const skipped: string[] = [];
  if (tally.binary) skipped.push(plural(tally.binary, "binary file", "binary files"));
  if (tally.tooLarge)
    skipped.push(plural(tally.tooLarge, "file over the size limit", "files over the size limit"));
  if (tally.unreadable)
    skipped.push(
      plural(tally.unreadable, "file that could not be read", "files that could not be read"),
    );
  if (skipped.length) parts.push(`Skipped ${skipped.join(", ")}.`);
  return parts.length ? parts.join(" ") : undefined;
}
