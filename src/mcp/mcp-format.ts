/**
 * How `mountbox mcp`'s tools answer: text results shaped as the reference
 * filesystem server's (`content` plus `structuredContent.content`), and
 * refusals as `isError` results whose text is the sandbox's own message —
 * never a host path, never a stack.
 */
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { quotePath } from "../errors/index.js";
import { isSandboxError } from "../tools/format.js";

/**
 * Most UTF-8 bytes of a result's text once JSON-encoded. The text goes
 * twice (content and its structured copy) in one message, and the SDK's
 * stdio client drops its connection over 10 MiB (a review's 6 MiB read did).
 */
const MAX_RESULT_JSON_BYTES = 4 * 1024 * 1024;
/** Texts this short fit whatever they hold (6 JSON bytes per character at most). */
const SURELY_FITS = 512 * 1024;

/** `text`, cut with a note saying how to read the rest if it would not fit one message. */
export function fitText(text: string): string {
  if (text.length <= SURELY_FITS) return text;
  const size = (t: string) => Buffer.byteLength(JSON.stringify(t));
  if (size(text) <= MAX_RESULT_JSON_BYTES) return text;
  let keep = Math.min(text.length, MAX_RESULT_JSON_BYTES);
  while (keep > SURELY_FITS && size(text.slice(0, keep)) > MAX_RESULT_JSON_BYTES)
    keep = Math.floor(keep * 0.8);
  return `${text.slice(0, keep)}\n… [cut: ${text.length.toLocaleString("en-US")} characters are more than one answer holds; read a part (head or tail), a narrower path, or use grep]`;
}

/** A successful text result, with the reference server's structured copy. */
export function textResult(text: string): CallToolResult {
  const fitted = fitText(text);
  return { content: [{ type: "text", text: fitted }], structuredContent: { content: fitted } };
}

/**
 * The sandbox's hints name its API (`listFiles`, `overwrite: true`); a client
 * holding these tools needs the tool that does it.
 */
const HINTS: [from: string, to: string][] = [
  ["(use listFiles)", "(use list_directory)"],
  ["(use readFile)", "(use read_text_file)"],
  ["Pass overwrite: true to replace it.", "Choose another destination, or move it away first."],
];

/**
 * The text for a failure: a mountbox error's code and LLM-friendly message;
 * anything else (Node's fs errors hold host paths) only says what failed.
 */
export function errorText(tool: string, path: string | undefined, err: unknown): string {
  if (isSandboxError(err)) {
    let message = err.message;
    for (const [from, to] of HINTS) message = message.replace(from, to);
    return `Error [${err.code}]: ${message}`;
  }
  const where = typeof path === "string" ? ` on ${quotePath(path.slice(0, 200))}` : "";
  return `Error: ${tool} failed${where} for an unexpected reason. Try again, or try another path.`;
}

/** An `isError` result for a failure (see {@link errorText}). */
export function errorResult(tool: string, path: string | undefined, err: unknown): CallToolResult {
  return { content: [{ type: "text", text: errorText(tool, path, err) }], isError: true };
}

/** An `isError` result for a request the tool refuses before touching a file. */
export function refusal(text: string): CallToolResult {
  return { content: [{ type: "text", text: `Error [invalid_request]: ${text}` }], isError: true };
}

/** Thrown inside a tool's body for a request it refuses: {@link guarded} answers it as {@link refusal}. */
export class McpRefusal extends Error {}

/**
 * Runs a tool's body: whatever it throws becomes an `isError` result, so a
 * call never reaches the SDK's own error text (which would echo the raw
 * message).
 */
export async function guarded(
  tool: string,
  path: string | undefined,
  run: () => Promise<CallToolResult>,
): Promise<CallToolResult> {
  try {
    return await run();
  } catch (err) {
    if (err instanceof McpRefusal) return refusal(err.message);
    return errorResult(tool, path, err);
  }
}

/** A byte count as the reference server shows it (`1.50 KB`). */
export function formatSize(bytes: number): string {
  const units = ["B", "KB", "MB", "GB", "TB"];
  if (bytes <= 0) return "0 B";
  const i = Math.floor(Math.log(bytes) / Math.log(1024));
  if (i <= 0) return `${bytes} B`;
  const unit = Math.min(i, units.length - 1);
  return `${(bytes / 1024 ** unit).toFixed(2)} ${units[unit]}`;
}

/** The diff in a ```diff block with enough backticks that none inside can close it (as the reference). */
export function fenceDiff(diff: string): string {
  let ticks = "```";
  while (diff.includes(ticks)) ticks += "`";
  return `${ticks}diff\n${diff.endsWith("\n") ? diff : `${diff}\n`}${ticks}\n\n`;
}
