/**
 * `read_file` and `read_multiple_files`: text in bounded slices, with a
 * notice that says exactly how to read on.
 */
import { z } from "zod";
import { defineTool, formatError, isSandboxError, mapLimited } from "./format.js";
import type { ToolDefinition, ToolEnv } from "./types.js";

const decoder = new TextDecoder("utf-8");

/** Bytes looked at for a NUL to call a file binary (as git and grep do). */
export const BINARY_SNIFF_BYTES = 8192;

/** True if the first 8 KiB of `bytes` hold a NUL byte. */
export function looksBinary(bytes: Uint8Array): boolean {
  const n = Math.min(bytes.length, BINARY_SNIFF_BYTES);
  for (let i = 0; i < n; i++) if (bytes[i] === 0) return true;
  return false;
}

/** Which lines to show. */
export interface LineWindow {
  offset?: number | undefined;
  limit?: number | undefined;
  head?: number | undefined;
  tail?: number | undefined;
}

/**
 * The part of `text` a window asks for, at most `maxLines` lines (when no
 * limit is given) and `maxChars` characters, followed by a notice when
 * anything was left out. A whole file that fits comes back unchanged.
 */
export function sliceLines(
  text: string,
  window: LineWindow,
  maxLines: number,
  maxChars: number,
): string {
  if (text === "") return "[The file is empty.]";
  const lines = text.split("\n");
  if (text.endsWith("\n")) lines.pop();
  const total = lines.length;
  let start = 0;
  let count = window.limit ?? maxLines;
  if (window.head !== undefined) count = window.head;
  else if (window.tail !== undefined) {
    count = window.tail;
    start = Math.max(0, total - window.tail);
  } else if (window.offset !== undefined) start = window.offset - 1;
  if (start >= total) {
    return `[The file has ${total} line${total === 1 ? "" : "s"}; offset ${start + 1} is past its end.]`;
  }
  const end = Math.min(total, start + count);
  if (start === 0 && end === total && text.length <= maxChars) return text;

  let shown = lines.slice(start, end).join("\n");
  let last = end; // 1-based number of the last line shown in full
  let notice: string;
  if (shown.length > maxChars) {
    const cut = shown.lastIndexOf("\n", maxChars);
    if (cut <= 0) {
      shown = shown.slice(0, maxChars);
      const more =
        start + 1 < total ? ` Read on from the next line with offset: ${start + 2}.` : "";
      return `${shown}\n\n[Line ${start + 1} is longer than ${maxChars} characters: only its start is shown. Use grep to find text in it.${more}]`;
    }
    shown = shown.slice(0, cut);
    last = start + countLines(shown);
    notice = `[Output cut at ${maxChars} characters: showing lines ${start + 1}-${last} of ${total}. To read on, call read_file with offset: ${last + 1}.]`;
  } else if (end < total) {
    notice = `[Showing lines ${start + 1}-${end} of ${total}. To read on, call read_file with offset: ${end + 1}.]`;
  } else {
    notice = `[Showing lines ${start + 1}-${end} of ${total} (the end of the file).]`;
  }
  return `${shown}\n\n${notice}`;
}

function countLines(s: string): number {
  let n = 1;
  for (let i = s.indexOf("\n"); i >= 0; i = s.indexOf("\n", i + 1)) n++;
  return n;
}

/** Reads `path` as text for a model: binaries are described, not shown. */
async function readText(
  env: ToolEnv,
  path: string,
  window: LineWindow,
  maxChars: number,
): Promise<string> {
  const bytes = await env.sandbox.readBytes(path);
  if (looksBinary(bytes)) {
    return `[Binary file (${bytes.length} bytes): not shown as text. Use get_file_info for its size and type.]`;
  }
  return sliceLines(decoder.decode(bytes), window, env.limits.readMaxLines, maxChars);
}

const PATH = z.string().describe("Virtual path of the file, e.g. /src/index.ts");

/** `read_file`: one file's text, in slices. */
export function readFileTool(env: ToolEnv): ToolDefinition {
  const { readMaxLines, readMaxChars } = env.limits;
  return defineTool({
    name: "read_file",
    description: `Read a text file from the sandbox. Paths are virtual and start at '/' (the sandbox root), e.g. /src/index.ts. Returns at most ${readMaxLines} lines or ${readMaxChars} characters; when a file is longer, the result ends with a notice giving the offset to read on from. Use offset and limit (lines, 1-based) to read a part, or head/tail for the first or last N lines.${readableNote(env)}`,
    inputSchema: z.strictObject({
      path: PATH,
      offset: z
        .number()
        .int()
        .min(1)
        .optional()
        .describe("First line to return, 1-based (default 1)"),
      limit: z
        .number()
        .int()
        .min(1)
        .optional()
        .describe(`Most lines to return (default ${readMaxLines})`),
      head: z.number().int().min(1).optional().describe("Return only the first N lines"),
      tail: z.number().int().min(1).optional().describe("Return only the last N lines"),
    }),
    annotations: { readOnlyHint: true, destructiveHint: false },
    pathOf: (a) => a.path,
    async run(a) {
      const ways = [a.head, a.tail, a.offset ?? a.limit].filter((v) => v !== undefined).length;
      if (ways > 1) {
        return "Error [invalid_request]: pass head, tail, or offset/limit — only one of them.";
      }
      return readText(env, a.path, a, readMaxChars);
    },
  });
}

/** `read_multiple_files`: several files at once; one failure does not sink the rest. */
export function readMultipleFilesTool(env: ToolEnv): ToolDefinition {
  const { readMaxChars } = env.limits;
  return defineTool({
    name: "read_multiple_files",
    description: `Read several text files at once (paths are virtual, starting at '/'). Each file's text comes after its path, separated by '---'. A file that cannot be read shows its error; the others are still returned. Long files are cut with a notice: read them on with read_file. All results together are at most about ${readMaxChars} characters.${readableNote(env)}`,
    inputSchema: z.strictObject({
      paths: z.array(PATH).min(1).max(100).describe("Virtual paths of the files to read"),
    }),
    annotations: { readOnlyHint: true, destructiveHint: false },
    async run(a) {
      const share = Math.max(1000, Math.floor(readMaxChars / a.paths.length));
      const parts = await mapLimited(a.paths, 4, async (path, i) => {
        try {
          const text = await readText(env, path, {}, share);
          return `${path}:\n${text.endsWith("\n") ? text : `${text}\n`}`;
        } catch (err) {
          return `${labelFor(path, i, err)}: ${formatError("read_multiple_files", path, err)}`;
        }
      });
      return parts.join("\n---\n");
    },
  });
}

/**
 * How to name a path that failed: a path refused as malformed (a pasted host
 * path among them) is named by the virtual path the sandbox suggests, or by
 * its position, never echoed.
 */
export function labelFor(path: string, index: number, err: unknown): string {
  if (isSandboxError(err) && err.code === "invalid_path") return err.path ?? `path #${index + 1}`;
  return path;
}

/** The sentence naming the readable areas, for a description. */
export function readableNote(env: ToolEnv): string {
  const r = env.description.readable;
  return r.length === 0 ? " Nothing is readable." : ` Readable paths: ${r.join(", ")}.`;
}

/** The sentence naming the writable areas, for a description. */
export function writableNote(env: ToolEnv): string {
  const w = env.description.writable;
  return w.length === 0 ? " Nothing is writable." : ` Writable paths: ${w.join(", ")}.`;
}
