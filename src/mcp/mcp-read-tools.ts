/**
 * The reading tools of `mountbox mcp`, named and shaped as the reference
 * filesystem server's: `read_text_file` (and its deprecated alias
 * `read_file`), `read_media_file`, `read_multiple_files`, `get_file_info`,
 * `list_allowed_directories`. Paths are virtual; results never hold a host
 * path.
 */
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import type { Sandbox } from "../sandbox/sandbox.js";
import { mapLimited } from "../tools/format.js";
import { labelFor } from "../tools/read.js";
import { errorText, guarded, refusal, textResult } from "./mcp-format.js";

/** Largest file a read tool loads whole, where no mount sets its own cap. */
export const MCP_READ_MAX_BYTES = 32 * 1024 * 1024;

// ignoreBOM: a byte-order mark is returned as the reference server returns
// it (Node's utf-8 decoding keeps it), not dropped.
const decoder = new TextDecoder("utf-8", { ignoreBOM: true });
const READ = { readOnlyHint: true, openWorldHint: false } as const;
const TEXT_OUTPUT = { content: z.string() };

/**
 * Largest file `read_media_file` sends, and each file of
 * `read_multiple_files`: a result travels as one message, and the SDK's
 * stdio client drops its connection over a 10 MiB message (base64 is 4/3
 * of the bytes; found by a review).
 */
export const MCP_PART_MAX_BYTES = 3 * 1024 * 1024;
/** Most paths of one `read_multiple_files` call. */
const MAX_PATHS = 50;

async function readText(
  sandbox: Sandbox,
  path: string,
  maxBytes = MCP_READ_MAX_BYTES,
): Promise<string> {
  return decoder.decode(await sandbox.readBytes(path, { defaultMaxBytes: maxBytes }));
}

/** The first `n` lines, as the reference's `headFile` returns them (no final newline). */
export function headLines(text: string, n: number): string {
  const lines = text.split("\n");
  if (text.endsWith("\n")) lines.pop();
  return lines.slice(0, n).join("\n");
}

/** The last `n` pieces between newlines, CRLF folded, as the reference's `tailFile`. */
export function tailLines(text: string, n: number): string {
  return text.replace(/\r\n/g, "\n").split("\n").slice(-n).join("\n");
}

/** Registers the reading tools on `server`. */
export function registerReadTools(server: McpServer, current: () => Sandbox): void {
  const readTextFile = (args: {
    path: string;
    head?: number | undefined;
    tail?: number | undefined;
  }) =>
    guarded("read_text_file", args.path, async () => {
      for (const [name, n] of [
        ["head", args.head],
        ["tail", args.tail],
      ] as const) {
        // The reference answers "" for a negative count and rounds a fraction
        // up for head only; neither is an answer a caller can have meant.
        if (n !== undefined && !(Number.isInteger(n) && n >= 0))
          return refusal(`${name} must be a whole number of lines, 1 or more (got ${n})`);
      }
      if (args.head && args.tail) {
        return refusal("Cannot specify both head and tail parameters simultaneously");
      }
      const text = await readText(current(), args.path);
      if (args.tail) return textResult(tailLines(text, args.tail));
      if (args.head) return textResult(headLines(text, args.head));
      return textResult(text);
    });
  const readShape = {
    path: z.string(),
    tail: z.number().optional().describe("If provided, returns only the last N lines of the file"),
    head: z.number().optional().describe("If provided, returns only the first N lines of the file"),
  };

  server.registerTool(
    "read_file",
    {
      title: "Read File (Deprecated)",
      description:
        "Read the complete contents of a file as text. DEPRECATED: Use read_text_file instead.",
      inputSchema: readShape,
      outputSchema: TEXT_OUTPUT,
      annotations: READ,
    },
    readTextFile,
  );

  server.registerTool(
    "read_text_file",
    {
      title: "Read Text File",
      description:
        "Read the complete contents of a file as text. Use 'head' to read only the first N lines, or 'tail' for the last N lines. Paths are virtual: the sandbox root is '/', e.g. /src/index.ts (call list_allowed_paths to see what is readable).",
      inputSchema: readShape,
      outputSchema: TEXT_OUTPUT,
      annotations: READ,
    },
    readTextFile,
  );

  server.registerTool(
    "read_media_file",
    {
      title: "Read Media File",
      description:
        "Read a file and return it as a base64-encoded content block with its MIME type. Image and audio files are returned as image/audio content; any other file type as an embedded resource (its URI is the virtual path, mountbox:///…). Paths are virtual.",
      inputSchema: { path: z.string() },
      annotations: READ,
    },
    (args) =>
      guarded("read_media_file", args.path, async (): Promise<CallToolResult> => {
        const bytes = await current().readBytes(args.path, { defaultMaxBytes: MCP_PART_MAX_BYTES });
        const data = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString(
          "base64",
        );
        const mimeType = mimeTypeOf(args.path);
        if (mimeType.startsWith("image/")) return { content: [{ type: "image", data, mimeType }] };
        if (mimeType.startsWith("audio/")) return { content: [{ type: "audio", data, mimeType }] };
        // A virtual URI: the reference's file:// URL would name the host path.
        const uri = `mountbox://${encodeURI(args.path.startsWith("/") ? args.path : `/${args.path}`)}`;
        return { content: [{ type: "resource", resource: { uri, mimeType, blob: data } }] };
      }),
  );

  server.registerTool(
    "read_multiple_files",
    {
      title: "Read Multiple Files",
      description:
        "Read several files at once. Each file's content comes after its path, the files separated by '---'. A file that cannot be read shows its error; the others are still returned. Paths are virtual.",
      inputSchema: {
        paths: z
          .array(z.string())
          .min(1)
          .describe("Array of virtual file paths to read, e.g. ['/src/a.ts', '/README.md']"),
      },
      outputSchema: TEXT_OUTPUT,
      annotations: READ,
    },
    (args) =>
      guarded("read_multiple_files", undefined, async () => {
        if (args.paths.length > MAX_PATHS)
          return refusal(
            `${args.paths.length} paths; read at most ${MAX_PATHS} at once (call again for the rest)`,
          );
        const parts = await mapLimited(args.paths, 4, async (path, i) => {
          try {
            return `${path}:\n${await readText(current(), path, MCP_PART_MAX_BYTES)}\n`;
          } catch (err) {
            return `${labelFor(path, i, err)}: Error - ${errorText("read_multiple_files", path, err)}`;
          }
        });
        return textResult(parts.join("\n---\n"));
      }),
  );

  server.registerTool(
    "get_file_info",
    {
      title: "Get File Info",
      description:
        "Metadata of a file or directory without reading it: size in bytes, last modification time, and whether it is a file or a directory. Paths are virtual.",
      inputSchema: { path: z.string() },
      outputSchema: TEXT_OUTPUT,
      annotations: READ,
    },
    (args) =>
      guarded("get_file_info", args.path, async () => {
        const st = await current().stat(args.path);
        const info = {
          size: st.size,
          modified: new Date(st.mtimeMs).toISOString(),
          isDirectory: st.type === "directory",
          isFile: st.type === "file",
        };
        return textResult(
          Object.entries(info)
            .map(([k, v]) => `${k}: ${v}`)
            .join("\n"),
        );
      }),
  );

  server.registerTool(
    "list_allowed_directories",
    {
      title: "List Allowed Directories",
      description:
        "Returns the virtual directories this server may read (everything below each is included). Paths are virtual: use them exactly as shown. list_allowed_paths also says what is writable.",
      inputSchema: {},
      outputSchema: TEXT_OUTPUT,
      annotations: READ,
    },
    () =>
      guarded("list_allowed_directories", undefined, async () =>
        textResult(`Allowed directories:\n${current().describe().readable.join("\n")}`),
      ),
  );
}

const MIME_TYPES: Record<string, string> = {
  ".png": "image/png",
  ".jpg": "image/jpeg",
  ".jpeg": "image/jpeg",
  ".gif": "image/gif",
  ".webp": "image/webp",
  ".bmp": "image/bmp",
  ".svg": "image/svg+xml",
  ".mp3": "audio/mpeg",
  ".wav": "audio/wav",
  ".ogg": "audio/ogg",
  ".flac": "audio/flac",
};

/** The reference server's MIME type for a path, by extension. */
export function mimeTypeOf(path: string): string {
  const name = path.slice(path.lastIndexOf("/") + 1);
  const dot = name.lastIndexOf(".");
  return (dot > 0 && MIME_TYPES[name.slice(dot).toLowerCase()]) || "application/octet-stream";
}
