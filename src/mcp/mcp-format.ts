/**
 * How `mountbox mcp`'s tools answer: text results shaped as the reference
 * filesystem server's (`content` plus `structuredContent.content`), and
 * refusals as `isError` results whose text is the sandbox's own message —
 * never a host path, never a stack.
 */
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { quotePath } from "../errors/index.js";
import { isSandboxError } from "../tools/format.js";

/** A successful text result, with the reference server's structured copy. */
export function textResult(text: string): CallToolResult {
  return { content: [{ type: "text", text }], structuredContent: { content: text } };
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
