/**
 * The tools that change files: `write_file`, `edit_file`, `create_directory`,
 * `move_file`, `delete_file`. The sandbox checks every write; these tools add
 * tolerant edit matching and results a model can act on.
 */
import { z } from "zod";
import { type MatchKind, resolveEdits } from "./edit-match.js";
import { defineTool, showPath } from "./format.js";
import { looksBinary, writableNote } from "./read.js";
import type { ToolDefinition, ToolEnv } from "./types.js";

const decoder = new TextDecoder("utf-8");

const PATH = z.string().describe("Virtual path, e.g. /src/index.ts");

/** `write_file`: creates or replaces a file. */
export function writeFileTool(env: ToolEnv): ToolDefinition {
  return defineTool({
    name: "write_file",
    description: `Create a file, or replace an existing file's whole content, with the given text. Missing parent directories are created. The write is atomic. To change part of a file, use edit_file instead. Paths are virtual and start at '/'.${writableNote(env)}`,
    inputSchema: z.strictObject({
      path: PATH,
      content: z.string().describe("The complete new content of the file"),
    }),
    annotations: { readOnlyHint: false, destructiveHint: true },
    pathOf: (a) => a.path,
    async run(a) {
      await env.sandbox.writeFile(a.path, a.content);
      return `Wrote ${a.content.length} characters to ${showPath(a.path)}.`;
    },
  });
}

const KIND_TEXT: Record<Exclude<MatchKind, "exact">, string> = {
  line_endings: "after normalising line endings",
  whitespace: "ignoring leading and trailing whitespace (indentation adjusted to the file's)",
};

/** `edit_file`: unique-match replacements, tolerant of line endings and indentation. */
export function editFileTool(env: ToolEnv): ToolDefinition {
  return defineTool({
    name: "edit_file",
    description: `Edit a text file by replacing text: each edit's oldText must occur exactly once in the file (edits apply in order, each to the result of the previous). A match may differ in line endings (CRLF/LF) and in indentation; if oldText is not found, or found more than once, nothing is changed and the error says which edit failed — include more surrounding lines to make it unique. Returns a unified diff. Use dryRun: true to preview the diff without writing. Paths are virtual and start at '/'.${writableNote(env)}`,
    inputSchema: z.strictObject({
      path: PATH,
      edits: z
        .array(
          z.strictObject({
            oldText: z.string().describe("Text to search for: copy it from the file"),
            newText: z.string().describe("Text to replace it with"),
          }),
        )
        .min(1)
        .describe("Replacements, applied in order"),
      dryRun: z
        .boolean()
        .default(false)
        .describe("Preview the changes as a diff without writing them"),
    }),
    annotations: { readOnlyHint: false, destructiveHint: true },
    pathOf: (a) => a.path,
    async run(a) {
      const bytes = await env.sandbox.readBytes(a.path);
      if (looksBinary(bytes)) {
        return `Error [edit_failed]: ${showPath(a.path)} is a binary file; edit_file only edits text.`;
      }
      const { edits, kinds } = resolveEdits(a.path, decoder.decode(bytes), a.edits);
      const { diff } = await env.sandbox.editFile(a.path, edits, { dryRun: a.dryRun });
      const notes = kinds.flatMap((k, i) =>
        k === "exact" ? [] : [`Note: edit #${i + 1} matched ${KIND_TEXT[k]}.`],
      );
      const head = a.dryRun
        ? `Dry run: nothing was written. The edits would change ${showPath(a.path)} like this:`
        : `Edited ${showPath(a.path)}:`;
      return [head, fence(diff), ...notes].join("\n");
    },
  });
}

/** The diff in a ```diff block with enough backticks that none inside can close it. */
function fence(diff: string): string {
  let ticks = "```";
  while (diff.includes(ticks)) ticks += "`";
  return `${ticks}diff\n${diff.endsWith("\n") ? diff : `${diff}\n`}${ticks}`;
}

/** `create_directory`: a directory and its missing parents. */
export function createDirectoryTool(env: ToolEnv): ToolDefinition {
  return defineTool({
    name: "create_directory",
    description: `Create a directory, with any missing parent directories. Succeeds if it already exists. Paths are virtual and start at '/'.${writableNote(env)}`,
    inputSchema: z.strictObject({ path: PATH }),
    annotations: { readOnlyHint: false, destructiveHint: false },
    pathOf: (a) => a.path,
    async run(a) {
      await env.sandbox.mkdir(a.path);
      return `Created directory ${showPath(a.path)}.`;
    },
  });
}

/** `move_file`: moves or renames, never over an existing destination. */
export function moveFileTool(env: ToolEnv): ToolDefinition {
  return defineTool({
    name: "move_file",
    description: `Move or rename a file or directory, also between directories and mounts. Fails if the destination exists. Both paths must be writable; paths are virtual and start at '/'.${writableNote(env)}`,
    inputSchema: z.strictObject({
      source: z.string().describe("Virtual path to move"),
      destination: z.string().describe("Virtual path it should have afterwards"),
    }),
    annotations: { readOnlyHint: false, destructiveHint: true },
    pathOf: (a) => a.source,
    async run(a) {
      await env.sandbox.move(a.source, a.destination);
      return `Moved ${showPath(a.source)} to ${showPath(a.destination)}.`;
    },
  });
}

/** `delete_file`: removes a file, or a directory with `recursive`. */
export function deleteFileTool(env: ToolEnv): ToolDefinition {
  return defineTool({
    name: "delete_file",
    description: `Delete a file, or an empty directory. To delete a directory with everything in it, pass recursive: true. This cannot be undone. Paths are virtual and start at '/'.${writableNote(env)}`,
    inputSchema: z.strictObject({
      path: PATH,
      recursive: z
        .boolean()
        .default(false)
        .describe("Also delete a directory's contents (default false)"),
    }),
    annotations: { readOnlyHint: false, destructiveHint: true },
    pathOf: (a) => a.path,
    async run(a) {
      await env.sandbox.remove(a.path, { recursive: a.recursive });
      return `Deleted ${showPath(a.path)}.`;
    },
  });
}
