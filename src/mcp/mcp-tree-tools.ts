/**
 * The tree tools of `mountbox mcp`, named and shaped as the reference
 * filesystem server's: `list_directory`, `list_directory_with_sizes`,
 * `directory_tree`, `search_files`. Listings come from the sandbox's own
 * walk (never through a directory link, temp files left out,
 * mounts shown under their targets), sorted by name.
 */
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import { wrapFsError } from "../errors/index.js";
import { compileGlob } from "../sandbox/glob.js";
import { type DirEntry, listEntries } from "../sandbox/io-list.js";
import { policyOf, type Sandbox } from "../sandbox/sandbox.js";
import { mapLimited } from "../tools/format.js";
import { formatSize, guarded, McpRefusal, refusal, textResult } from "./mcp-format.js";

const READ = { readOnlyHint: true, openWorldHint: false } as const;
const TEXT_OUTPUT = { content: z.string() };
/** Most entries a recursive listing returns (a JSON tree of more helps no model). */
export const MCP_MAX_ENTRIES = 20_000;

/** Entries under `path`, at most `depth` levels down, as SandboxErrors when refused. */
async function entriesOf(sandbox: Sandbox, path: string, depth?: number): Promise<DirEntry[]> {
  try {
    return await listEntries(policyOf(sandbox), path, depth);
  } catch (err) {
    throw wrapFsError(err, "list", path);
  }
}

/** `v` relative to the listed folder `start` (its canonical virtual form). */
function relativeTo(start: string, v: string): string {
  return start === "/" ? v.slice(1) : v.slice(start.length + 1);
}

/** The canonical virtual folder a listing started at (the parent of its entries' paths). */
function startOf(sandbox: Sandbox, path: string): string {
  return policyOf(sandbox).normalize(path) ?? "/";
}

/**
 * A test for excluded entries: an entry is left out when its relative path,
 * or a folder above it, matches a pattern (as the reference, which never
 * walks into an excluded folder). `bare`: a pattern without `*` also matches
 * at any depth, and everything below (the reference's `directory_tree`).
 */
function excluder(patterns: readonly string[], bare: boolean): (rel: string) => boolean {
  if (patterns.length > MAX_EXCLUDES)
    throw new McpRefusal(
      `excludePatterns has ${patterns.length} patterns; give at most ${MAX_EXCLUDES} (a folder's name leaves out everything below it)`,
    );
  const tests = patterns.flatMap((p) =>
    bare && !p.includes("*") ? [compileGlob(p), compileGlob(`**/${p}`)] : [compileGlob(p)],
  );
  if (tests.length === 0) return () => false;
  return (rel) => {
    const parts = rel.split("/");
    for (let i = 1; i <= parts.length; i++) {
      const prefix = parts.slice(0, i).join("/");
      if (tests.some((t) => t(prefix))) return true;
    }
    return false;
  };
}

/** Most `excludePatterns` of a call: each is tried on every entry and folder above it. */
const MAX_EXCLUDES = 64;

/**
 * `entries` without the excluded ones, yielding to the event loop as it
 * goes: patterns × entries is work other calls must not wait behind (a
 * review froze the server for minutes with one call).
 */
async function keepIncluded<T>(entries: T[], keep: (entry: T) => boolean): Promise<T[]> {
  const out: T[] = [];
  for (let i = 0; i < entries.length; i++) {
    if (i % 500 === 499) await new Promise((r) => setImmediate(r));
    const e = entries[i] as T;
    if (keep(e)) out.push(e);
  }
  return out;
}

function tooMany(n: number): ReturnType<typeof refusal> {
  return refusal(
    `the listing has ${n} entries, more than ${MCP_MAX_ENTRIES}. Narrow it: a deeper path, or excludePatterns such as ["node_modules", ".git"].`,
  );
}

interface TreeNode {
  name: string;
  type: "file" | "directory";
  children?: TreeNode[];
}

/** Registers the tree tools on `server`. */
export function registerTreeTools(server: McpServer, current: () => Sandbox): void {
  server.registerTool(
    "list_directory",
    {
      title: "List Directory",
      description:
        "List the files and directories directly in a directory, one per line, prefixed [FILE] or [DIR], sorted by name. Paths are virtual: the sandbox root is '/'.",
      inputSchema: { path: z.string() },
      outputSchema: TEXT_OUTPUT,
      annotations: READ,
    },
    (args) =>
      guarded("list_directory", args.path, async () => {
        const entries = await entriesOf(current(), args.path, 1);
        return textResult(
          entries
            .map((e) => `${e.type === "directory" ? "[DIR]" : "[FILE]"} ${nameOf(e.path)}`)
            .join("\n"),
        );
      }),
  );

  server.registerTool(
    "list_directory_with_sizes",
    {
      title: "List Directory with Sizes",
      description:
        "List the files and directories directly in a directory with their sizes, prefixed [FILE] or [DIR], then totals. Paths are virtual.",
      inputSchema: {
        path: z.string(),
        sortBy: z
          .enum(["name", "size"])
          .optional()
          .default("name")
          .describe("Sort entries by name or size"),
      },
      outputSchema: TEXT_OUTPUT,
      annotations: READ,
    },
    (args) =>
      guarded("list_directory_with_sizes", args.path, async () => {
        const sb = current(); // one sandbox for the whole call
        const entries = await entriesOf(sb, args.path, 1);
        const sized = await mapLimited(entries, 8, async (e) => {
          const size =
            e.type === "file"
              ? await sb.stat(e.path).then(
                  (s) => s.size,
                  () => 0,
                )
              : 0;
          return { name: nameOf(e.path), dir: e.type === "directory", size };
        });
        sized.sort((a, b) =>
          args.sortBy === "size" ? b.size - a.size : a.name.localeCompare(b.name),
        );
        const lines = sized.map(
          (e) =>
            `${e.dir ? "[DIR]" : "[FILE]"} ${e.name.padEnd(30)} ${e.dir ? "" : formatSize(e.size).padStart(10)}`,
        );
        const files = sized.filter((e) => !e.dir);
        const total = files.reduce((sum, e) => sum + e.size, 0);
        lines.push(
          "",
          `Total: ${files.length} files, ${sized.length - files.length} directories`,
          `Combined size: ${formatSize(total)}`,
        );
        return textResult(lines.join("\n"));
      }),
  );

  server.registerTool(
    "directory_tree",
    {
      title: "Directory Tree",
      description:
        "A recursive tree of files and directories as JSON (2-space indentation): each entry has 'name', 'type' (file/directory), and directories a 'children' array. excludePatterns are globs on paths relative to path; one without '*' matches that name at any depth. Paths are virtual.",
      inputSchema: {
        path: z.string(),
        excludePatterns: z.array(z.string()).optional().default([]),
      },
      outputSchema: TEXT_OUTPUT,
      annotations: READ,
    },
    (args) =>
      guarded("directory_tree", args.path, async () => {
        const sb = current(); // one sandbox for the whole call
        const entries = await entriesOf(sb, args.path);
        const start = startOf(sb, args.path);
        const excluded = excluder(args.excludePatterns, true);
        const kept = await keepIncluded(entries, (e) => !excluded(relativeTo(start, e.path)));
        if (kept.length > MCP_MAX_ENTRIES) return tooMany(kept.length);
        const root: TreeNode[] = [];
        const byPath = new Map<string, TreeNode[]>([[start, root]]);
        for (const e of kept) {
          const node: TreeNode = { name: nameOf(e.path), type: e.type };
          if (e.type === "directory") {
            node.children = [];
            byPath.set(e.path, node.children);
          }
          byPath.get(parentOf(e.path))?.push(node);
        }
        return textResult(JSON.stringify(root, null, 2));
      }),
  );

  server.registerTool(
    "search_files",
    {
      title: "Search Files",
      description:
        "Recursively find files and directories whose path relative to path matches a glob: '*.ts' matches in path itself, '**/*.ts' at every depth. Returns virtual paths, one per line, sorted. excludePatterns leave out matching paths and everything below them. To search file contents, use grep.",
      inputSchema: {
        path: z.string(),
        pattern: z.string(),
        excludePatterns: z.array(z.string()).optional().default([]),
      },
      outputSchema: TEXT_OUTPUT,
      annotations: READ,
    },
    (args) =>
      guarded("search_files", args.path, async () => {
        const matches = compileGlob(args.pattern);
        const excluded = excluder(args.excludePatterns, false);
        const sb = current(); // one sandbox for the whole call
        const entries = await entriesOf(sb, args.path);
        const start = startOf(sb, args.path);
        const found = await keepIncluded(
          entries.map((e) => e.path),
          (v) => {
            const rel = relativeTo(start, v);
            return !excluded(rel) && matches(rel);
          },
        );
        if (found.length > MCP_MAX_ENTRIES) return tooMany(found.length);
        return textResult(found.length > 0 ? found.join("\n") : "No matches found");
      }),
  );
}

function nameOf(v: string): string {
  return v.slice(v.lastIndexOf("/") + 1);
}

function parentOf(v: string): string {
  const i = v.lastIndexOf("/");
  return i <= 0 ? "/" : v.slice(0, i);
}
