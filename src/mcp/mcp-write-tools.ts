/**
 * The writing tools of `mountbox mcp`, named and shaped as the reference
 * filesystem server's: `write_file`, `edit_file`, `create_directory`,
 * `move_file`. The sandbox checks every write (read-only mounts, protected
 * places, links out); `edit_file` reuses the tool layer's tolerant matching,
 * stricter than the reference in one way: each match must be unique.
 */
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import type { Sandbox } from "../sandbox/sandbox.js";
import { resolveEdits } from "../tools/edit-match.js";
import { fenceDiff, guarded, textResult } from "./mcp-format.js";
import { MCP_READ_MAX_BYTES } from "./mcp-read-tools.js";

// ignoreBOM: the edits are matched on the text the sandbox's edit applies
// them to, a byte-order mark included.
const decoder = new TextDecoder("utf-8", { ignoreBOM: true });
const TEXT_OUTPUT = { content: z.string() };
const VIRTUAL =
  "Paths are virtual: the sandbox root is '/' (call list_allowed_paths to see what is writable).";

/**
 * The sandbox's diff (`--- /a.txt`, `+++ /a.txt`) with the reference's
 * header (`Index:` line, `original` / `modified` labels), virtual names kept.
 */
export function referenceStyleDiff(diff: string, name: string): string {
  const body = diff.replace(/^--- [^\n]*\n\+\+\+ [^\n]*\n/, "");
  return `Index: ${name}\n${"=".repeat(67)}\n--- ${name}\toriginal\n+++ ${name}\tmodified\n${body}`;
}

/** Registers the writing tools on `server`. */
export function registerWriteTools(server: McpServer, current: () => Sandbox): void {
  server.registerTool(
    "write_file",
    {
      title: "Write File",
      description: `Create a new file or completely overwrite an existing file with new content; missing parent directories are created and the write is atomic. ${VIRTUAL}`,
      inputSchema: { path: z.string(), content: z.string() },
      outputSchema: TEXT_OUTPUT,
      annotations: {
        readOnlyHint: false,
        idempotentHint: true,
        destructiveHint: true,
        openWorldHint: false,
      },
    },
    (args) =>
      guarded("write_file", args.path, async () => {
        await current().writeFile(args.path, args.content);
        return textResult(`Successfully wrote to ${args.path}`);
      }),
  );

  server.registerTool(
    "edit_file",
    {
      title: "Edit File",
      description: `Edit a text file by replacing text: each edit's oldText must occur exactly once in the file (edits apply in order, each to the result of the previous); a match may differ in line endings and indentation. If an oldText is not found, or found more than once, nothing is changed and the error says which edit failed: include more surrounding lines. Returns a git-style diff; dryRun previews it without writing. ${VIRTUAL}`,
      inputSchema: {
        path: z.string(),
        edits: z.array(
          z.object({
            oldText: z.string().describe("Text to search for - must match exactly"),
            newText: z.string().describe("Text to replace with"),
          }),
        ),
        dryRun: z.boolean().default(false).describe("Preview changes using git-style diff format"),
      },
      outputSchema: TEXT_OUTPUT,
      annotations: {
        readOnlyHint: false,
        idempotentHint: false,
        destructiveHint: true,
        openWorldHint: false,
      },
    },
    (args) =>
      guarded("edit_file", args.path, async () => {
        // One sandbox for the whole call (the client's roots may change meanwhile).
        const sb = current();
        const bytes = await sb.readBytes(args.path, { defaultMaxBytes: MCP_READ_MAX_BYTES });
        const { edits } = resolveEdits(args.path, decoder.decode(bytes), args.edits);
        const { diff } = await sb.editFile(args.path, edits, { dryRun: args.dryRun });
        return textResult(fenceDiff(referenceStyleDiff(diff, args.path)));
      }),
  );

  server.registerTool(
    "create_directory",
    {
      title: "Create Directory",
      description: `Create a directory with any missing parents; succeeds if it already exists. ${VIRTUAL}`,
      inputSchema: { path: z.string() },
      outputSchema: TEXT_OUTPUT,
      annotations: {
        readOnlyHint: false,
        idempotentHint: true,
        destructiveHint: false,
        openWorldHint: false,
      },
    },
    (args) =>
      guarded("create_directory", args.path, async () => {
        await current().mkdir(args.path);
        return textResult(`Successfully created directory ${args.path}`);
      }),
  );

  server.registerTool(
    "move_file",
    {
      title: "Move File",
      description: `Move or rename a file or directory, also between directories and mounts. Fails if the destination exists. Both paths must be writable. ${VIRTUAL}`,
      inputSchema: { source: z.string(), destination: z.string() },
      outputSchema: TEXT_OUTPUT,
      annotations: {
        readOnlyHint: false,
        idempotentHint: false,
        destructiveHint: true,
        openWorldHint: false,
      },
    },
    (args) =>
      guarded("move_file", args.source, async () => {
        await current().move(args.source, args.destination);
        return textResult(`Successfully moved ${args.source} to ${args.destination}`);
      }),
  );
}
