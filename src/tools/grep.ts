/**
 * `grep`: a regular expression over the readable files under a folder,
 * output as `path:line: text`. Bounded in every direction a model could push
 * it: matches, output size, time (checked between files and every 1024
 * lines), and the characters of each line it scans. Binary files (a NUL in
 * the first 8 KiB) are skipped.
 */
import { z } from "zod";
import { defineTool, isSandboxError, oneLine, showPath } from "./format.js";
import { looksBinary, readableNote } from "./read.js";
import type { ToolContext, ToolDefinition, ToolEnv } from "./types.js";

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

async function runGrep(env: ToolEnv, a: GrepArgs, ctx: ToolContext): Promise<string> {
  const { grepMaxMatches, grepMaxChars, grepTimeMs, grepMaxLineChars } = env.limits;
  let re: RegExp;
  try {
    // No `g` flag: `test` keeps no state between lines.
    re = new RegExp(a.pattern, a.ignoreCase ? "i" : "");
  } catch (err) {
    return `Error [invalid_request]: the pattern is not a valid regular expression: ${oneLine((err as Error).message)}`;
  }
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
      const text = oneLine(scanned.replace(/\r$/, ""));
      const shown = text.length > SHOWN_LINE_CHARS ? `${text.slice(0, SHOWN_LINE_CHARS)}…` : text;
      const entry = `${file}:${i + 1}: ${shown}`;
      if (chars + entry.length + 1 > grepMaxChars) {
        stop = `[Stopped: the output reached ${grepMaxChars} characters after ${matches} matches. Use a more specific pattern, path or glob.]`;
        break scan;
      }
      out.push(entry);
      chars += entry.length + 1;
      matches++;
      if (matches >= grepMaxMatches) {
        stop = `[Stopped after ${grepMaxMatches} matches. Use a more specific pattern, path or glob to see the rest.]`;
        break scan;
      }
    }
  }

  const notes: string[] = [];
  if (stop) notes.push(stop);
  if (binaries > 0) notes.push(`[Skipped ${binaries} binary file${binaries === 1 ? "" : "s"}.]`);
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
