/**
 * `grep`: a regular expression over the readable files under a folder,
 * output as `path:line: text`. Bounded in every direction a model could push
 * it: matches, output size, time (checked between files and every 1024
 * lines), and the characters of each line it scans. Binary files (a NUL in
 * the first 8 KiB) are skipped.
 *
 * Where the search runs: over an in-process `Sandbox`, in the host's pool of
 * search threads (`searchSandbox`); over a thread's `ctx.sandbox`, through its
 * `grep` port operation, which the host serves the same way. Only a sandbox
 * with neither is walked here, one `readBytes` per file. The text the model
 * gets is the same in every case.
 */
import { z } from "zod";
import type { GrepOptions, GrepResult } from "../sandbox/types.js";
import { defineTool, isSandboxError, oneLine, showPath } from "./format.js";
import { looksBinary, readableNote } from "./read.js";
import type { ToolContext, ToolDefinition, ToolEnv, ToolSandbox } from "./types.js";

const decoder = new TextDecoder("utf-8");

/** Characters of a matching line shown in the output. */
const SHOWN_LINE_CHARS = 300;

/** `grep`: search file contents with a regular expression. */
export function grepTool(env: ToolEnv): ToolDefinition {
  const { grepMaxMatches, grepTimeMs } = env.limits;
  return defineTool({
    name: "grep",
    description: `Search the contents of files for a regular expression (JavaScript syntax). Searches the files under path whose relative path matches glob (default '**/*': all), or the one file path names. Returns one line per match as 'path:line: text', at most ${grepMaxMatches} matches; binary files are skipped, long lines are shortened, and the search stops after ${grepTimeMs / 1000} s with a notice — narrow path or glob then. Paths are virtual and start at '/'.${readableNote(env)}`,
    inputSchema: z.strictObject({
      pattern: z.string().min(1).describe("Regular expression, e.g. 'function \\w+\\(' "),
      path: z
        .string()
        .default("/")
        .describe("Virtual directory (or file) to search in (default '/')"),
      glob: z
        .string()
        .default("**/*")
        .describe("Only files whose path relative to path matches, e.g. '**/*.ts'"),
      ignoreCase: z.boolean().default(false).describe("Match letters in any case"),
    }),
    annotations: { readOnlyHint: true, destructiveHint: false },
    pathOf: (a) => a.path,
    run: (a, ctx) => runGrep(env, a, ctx),
  });
}

interface GrepArgs {
  pattern: string;
  path: string;
  glob: string;
  ignoreCase: boolean;
}

/** Runs a search somewhere other than this loop; see {@link findSearch}. */
type Search = (opts: GrepOptions, signal: AbortSignal | undefined) => Promise<GrepResult>;

/** A sandbox that may offer the port's `grep` (a thread's `ctx.sandbox` does). */
type MaybeSearchable = ToolSandbox & {
  grep?: (opts: GrepOptions) => Promise<GrepResult>;
  resolve?: unknown;
};

/**
 * How this sandbox searches without a read per file: `ctx.sandbox.grep` in a
 * thread, the host's pool for an in-process `Sandbox`; undefined otherwise.
 */
async function findSearch(sandbox: ToolSandbox): Promise<Search | undefined> {
  const sb = sandbox as MaybeSearchable;
  if (typeof sb.grep === "function") {
    const grep = sb.grep.bind(sb);
    return (opts) => grep(opts);
  }
  // Only an in-process `Sandbox` has `resolve` (a thread's has no way to a
  // host path): the host modules load on the host only, never in a thread.
  if (typeof sb.resolve !== "function") return undefined;
  const [{ Sandbox }, { searchSandbox }] = await Promise.all([
    import("../sandbox/sandbox.js"),
    import("../pool/index.js"),
  ]);
  if (!(sandbox instanceof Sandbox)) return undefined;
  return (opts, signal) => searchSandbox(sandbox, opts, { signal });
}

async function runGrep(env: ToolEnv, a: GrepArgs, ctx: ToolContext): Promise<string> {
  let re: RegExp;
  try {
    // No `g` flag: `test` keeps no state between lines.
    re = new RegExp(a.pattern, a.ignoreCase ? "i" : "");
  } catch (err) {
    return `Error [invalid_request]: the pattern is not a valid regular expression: ${oneLine((err as Error).message)}`;
  }
  const search = await findSearch(env.sandbox);
  return search ? searchElsewhere(env, a, ctx, search) : walkAndSearch(env, a, ctx, re);
}

/** Largest time budget the search accepts, in ms. */
const MAX_TIME_BUDGET_MS = 120_000;

/** The search run by `search`, its result told in the tool's words. */
async function searchElsewhere(
  env: ToolEnv,
  a: GrepArgs,
  ctx: ToolContext,
  search: Search,
): Promise<string> {
  const { grepMaxMatches, grepMaxChars, grepTimeMs, grepMaxLineChars } = env.limits;
  let r: GrepResult;
  try {
    r = await search(
      {
        pattern: a.pattern,
        flags: a.ignoreCase ? "i" : "",
        path: a.path,
        glob: a.glob,
        maxMatches: grepMaxMatches,
        maxLineChars: grepMaxLineChars,
        timeBudgetMs: Math.min(grepTimeMs, MAX_TIME_BUDGET_MS),
      },
      ctx.signal,
    );
  } catch (err) {
    if (ctx.signal?.aborted) return "[Stopped: the search was cancelled before it finished.]";
    throw err;
  }
  const out: string[] = [];
  let chars = 0;
  let stop: string | undefined;
  for (const m of r.matches) {
    const entry = `${m.path}:${m.line}: ${showLine(m.text)}`;
    if (chars + entry.length + 1 > grepMaxChars) {
      stop = outputNote(grepMaxChars, out.length);
      break;
    }
    out.push(entry);
    chars += entry.length + 1;
  }
  // Binary files count as searched, as they do in the walk below.
  const searched = r.filesSearched + r.skipped.binary;
  // The search caps matches at 10 000, whatever the tool's limit says.
  if (stop === undefined && r.stoppedBy === "matches") stop = matchesNote(r.matches.length);
  else if (stop === undefined && r.stoppedBy === "time")
    stop = `[Stopped after ${grepTimeMs / 1000} s: searched ${searched} of ${r.filesListed} files. Narrow the search with a deeper path or a glob.]`;
  else if (stop === undefined && r.stoppedBy === "bytes")
    stop = `[Stopped: the search read as many bytes as it may after ${searched} of ${r.filesListed} files. Narrow the search with a deeper path or a glob.]`;
  const { binary, tooLarge, unreadable } = r.skipped;
  return finish(a, out, searched, stop, binary, unreadable, tooLarge);
}

/** A matching line as shown: control characters escaped, cut at {@link SHOWN_LINE_CHARS}. */
function showLine(line: string): string {
  const text = oneLine(line);
  return text.length > SHOWN_LINE_CHARS ? `${text.slice(0, SHOWN_LINE_CHARS)}…` : text;
}

function outputNote(maxChars: number, matches: number): string {
  return `[Stopped: the output reached ${maxChars} characters after ${matches} matches. Use a more specific pattern, path or glob.]`;
}

function matchesNote(maxMatches: number): string {
  return `[Stopped after ${maxMatches} matches. Use a more specific pattern, path or glob to see the rest.]`;
}

/** The tool's text: the matches, then a notice for each way the search fell short. */
function finish(
  a: GrepArgs,
  out: string[],
  searched: number,
  stop: string | undefined,
  binaries: number,
  unreadable: number,
  tooLarge: number,
): string {
  const notes: string[] = [];
  if (stop) notes.push(stop);
  if (binaries > 0) notes.push(`[Skipped ${binaries} binary file${binaries === 1 ? "" : "s"}.]`);
  if (tooLarge > 0)
    notes.push(
      `[Skipped ${tooLarge} file${tooLarge === 1 ? "" : "s"} over the size limit of a search.]`,
    );
  if (unreadable > 0) {
    notes.push(
      `[Skipped ${unreadable} file${unreadable === 1 ? "" : "s"} that could not be read.]`,
    );
  }
  if (out.length === 0) {
    const head = `No matches for ${showPath(a.pattern)} in ${searched} file${searched === 1 ? "" : "s"} under ${showPath(a.path)}.`;
    return [head, ...notes].join("\n");
  }
  return notes.length === 0 ? out.join("\n") : `${out.join("\n")}\n\n${notes.join("\n")}`;
}

/** The search walked here: a listing, then one `readBytes` per file. */
async function walkAndSearch(
  env: ToolEnv,
  a: GrepArgs,
  ctx: ToolContext,
  re: RegExp,
): Promise<string> {
  const { grepMaxMatches, grepMaxChars, grepTimeMs, grepMaxLineChars } = env.limits;
  const started = performance.now();
  const files = await filesToSearch(env, a.path, a.glob);
  const out: string[] = [];
  let chars = 0;
  let matches = 0;
  let binaries = 0;
  let unreadable = 0;
  let searched = 0;
  let stop: string | undefined;
  const overTime = () => performance.now() - started > grepTimeMs;

  scan: for (const file of files) {
    if (ctx.signal?.aborted) {
      stop = `[Stopped: the search was cancelled after ${searched} of ${files.length} files.]`;
      break;
    }
    if (overTime()) {
      stop = `[Stopped after ${grepTimeMs / 1000} s: searched ${searched} of ${files.length} files. Narrow the search with a deeper path or a glob.]`;
      break;
    }
    let bytes: Uint8Array;
    try {
      bytes = await env.sandbox.readBytes(file);
    } catch (err) {
      // A file that vanished, grew too large or was refused is skipped, not fatal.
      if (!isSandboxError(err)) throw err;
      unreadable++;
      continue;
    }
    searched++;
    if (looksBinary(bytes)) {
      binaries++;
      continue;
    }
    const lines = decoder.decode(bytes).split("\n");
    for (let i = 0; i < lines.length; i++) {
      if ((i & 1023) === 1023 && overTime()) {
        stop = `[Stopped after ${grepTimeMs / 1000} s, inside ${file}: searched ${searched} of ${files.length} files. Narrow the search with a deeper path or a glob.]`;
        break scan;
      }
      const line = lines[i] as string;
      const scanned = line.length > grepMaxLineChars ? line.slice(0, grepMaxLineChars) : line;
      if (!re.test(scanned)) continue;
      const entry = `${file}:${i + 1}: ${showLine(scanned.replace(/\r$/, ""))}`;
      if (chars + entry.length + 1 > grepMaxChars) {
        stop = outputNote(grepMaxChars, matches);
        break scan;
      }
      out.push(entry);
      chars += entry.length + 1;
      matches++;
      if (matches >= grepMaxMatches) {
        stop = matchesNote(grepMaxMatches);
        break scan;
      }
    }
  }
  return finish(a, out, searched, stop, binaries, unreadable, 0);
}

/** The files under `path` matching `glob`; a file given as `path` is searched alone. */
async function filesToSearch(env: ToolEnv, path: string, glob: string): Promise<string[]> {
  try {
    return await env.sandbox.listFiles(path, glob);
  } catch (err) {
    // Models often grep one file: listing it fails as "not a directory".
    if (!isSandboxError(err) || err.code !== "io_error") throw err;
    const st = await env.sandbox.stat(path).catch(() => undefined);
    if (st?.type !== "file") throw err;
    return [path];
  }
}
