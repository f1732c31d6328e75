/**
 * Read-only tools about the tree rather than file contents: `list_files`,
 * `get_file_info`, `list_allowed_paths`.
 */
import { z } from "zod";
import { formatPathList } from "../errors/index.js";
import { defineTool, showPath } from "./format.js";
import { readableNote } from "./read.js";
import type { ToolDefinition, ToolEnv } from "./types.js";

/** `list_files`: files under a folder matching a glob, capped. */
export function listFilesTool(env: ToolEnv): ToolDefinition {
  const max = env.limits.listMaxEntries;
  return defineTool({
    name: "list_files",
    description: `List the files under a directory whose path relative to it matches a glob pattern: '*.ts' matches one level, '**/*.ts' every level, '**/*' (the default) everything. Returns virtual paths (starting at '/'), sorted, one per line, at most ${max}; when there are more, a notice says how many — narrow the path or the pattern.${readableNote(env)}`,
    inputSchema: z.strictObject({
      path: z.string().default("/").describe("Virtual directory to search in (default '/')"),
      pattern: z.string().default("**/*").describe("Glob relative to path (default '**/*')"),
    }),
    annotations: { readOnlyHint: true, destructiveHint: false },
    pathOf: (a) => a.path,
    async run(a) {
      const files = await env.sandbox.listFiles(a.path, a.pattern);
      if (files.length === 0) {
        return `No files match ${showPath(a.pattern)} under ${showPath(a.path)}.`;
      }
      if (files.length <= max) return files.join("\n");
      return `${files.slice(0, max).join("\n")}\n\n[Showing ${max} of ${files.length} files. Narrow the search with a deeper path or a more specific pattern.]`;
    },
  });
}

/** `get_file_info`: type, size and modification time. */
export function getFileInfoTool(env: ToolEnv): ToolDefinition {
  return defineTool({
    name: "get_file_info",
    description: `Get a file's or directory's type, size in bytes and last modification time, without reading it. Paths are virtual and start at '/'.${readableNote(env)}`,
    inputSchema: z.strictObject({
      path: z.string().describe("Virtual path, e.g. /src/index.ts"),
    }),
    annotations: { readOnlyHint: true, destructiveHint: false },
    pathOf: (a) => a.path,
    async run(a) {
      const st = await env.sandbox.stat(a.path);
      return [
        `path: ${a.path}`,
        `type: ${st.type}`,
        `size: ${st.size} bytes`,
        `modified: ${new Date(st.mtimeMs).toISOString()}`,
      ].join("\n");
    },
  });
}

/** `list_allowed_paths`: what this sandbox lets the model read and write. */
export function listAllowedPathsTool(env: ToolEnv): ToolDefinition {
  return defineTool({
    name: "list_allowed_paths",
    description:
      "List the paths you may read and write, and the mounts. Paths are virtual: the sandbox root is '/', and everything below a listed path is included. Call this first when unsure where to look, or after an access was refused.",
    inputSchema: z.strictObject({}),
    annotations: { readOnlyHint: true, destructiveHint: false },
    async run() {
      // Asked afresh: what an agent may access can change during its session.
      const d = await env.sandbox.describe();
      const lines = [
        `Readable paths: ${formatPathList(d.readable)}`,
        `Writable paths: ${formatPathList(d.writable)}`,
        // A mount's flag says what the mount allows; the writable paths above say what this agent may write.
        `Mounts: ${d.mounts.map((m) => (m.readonly ? `${m.target} (read-only)` : m.target)).join(", ") || "none"}`,
      ];
      if (d.suffixes) lines.push(`Allowed file suffixes: ${formatPathList(d.suffixes)}`);
      if (d.maxFileBytes !== undefined) lines.push(`Largest file: ${d.maxFileBytes} bytes`);
      // Said up front, so a model does not hunt for what is withheld.
      if (d.secrets?.length)
        lines.push(
          `Withheld (secrets, names at any depth; never readable, listed or searched): ${d.secrets.join(", ")}`,
        );
      lines.push("Paths are virtual (the sandbox root is '/'): use them exactly as shown.");
      return lines.join("\n");
    },
  });
}
