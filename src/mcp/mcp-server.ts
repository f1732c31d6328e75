/**
 * `createMcpServer`: a sandbox served to MCP clients (DESIGN §10) with the
 * reference filesystem server's tool names, input schemas, annotations and
 * output texts, over virtual paths — plus mountbox's `grep` and
 * `list_allowed_paths`. Every tool answers a refusal with an `isError`
 * result holding the sandbox's LLM-friendly message; nothing returns a host
 * path. A sandbox whose areas ask approval is served through the host's
 * approval gate, one per session (mcp-approvals.ts). See docs/mcp.md.
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { createSandbox, Sandbox } from "../sandbox/sandbox.js";
import { createToolDefinitions, type ToolDefinition } from "../tools/index.js";
import { type McpApprovalOptions, McpApprovals, needsGate } from "./mcp-approvals.js";
import { guarded } from "./mcp-format.js";
import { registerReadTools } from "./mcp-read-tools.js";
import { registerResources } from "./mcp-resources.js";
import { followRoots } from "./mcp-roots.js";
import { registerTreeTools } from "./mcp-tree-tools.js";
import { registerWriteTools } from "./mcp-write-tools.js";

/** The tools `mountbox mcp` serves, in the order it lists them. */
export const MCP_TOOL_NAMES = [
  "read_file",
  "read_text_file",
  "read_media_file",
  "read_multiple_files",
  "write_file",
  "edit_file",
  "create_directory",
  "list_directory",
  "list_directory_with_sizes",
  "directory_tree",
  "move_file",
  "search_files",
  "get_file_info",
  "list_allowed_directories",
  "grep",
  "list_allowed_paths",
] as const;

/**
 * An MCP server (not yet connected) serving `sandbox`'s files. The write
 * tools are always offered, as the reference server does; on a read-only
 * sandbox each call is refused with a message naming what is writable.
 */
export async function createMcpServer(
  sandbox: Sandbox | { roots: { readonly: boolean } },
  opts: {
    version: string;
    onCall?: (call: McpCallRecord) => void;
    onRoots?: (sandbox: Sandbox | undefined) => void;
    /** Why the client's roots may not be served (the `--audit` file inside them). */
    refuseRoots?: (sandbox: Sandbox) => string | undefined;
    /** Approvals of a fixed sandbox's flagged mounts and expansion (this session's). */
    approvals?: McpApprovalOptions;
  },
): Promise<McpServer> {
  const server = new McpServer({ name: "mountbox", version: opts.version });
  if (opts.onCall !== undefined) recordCalls(server, opts.onCall);
  // Only a fixed sandbox can ask: roots and --root/--mount set no approval flags.
  const gated =
    sandbox instanceof Sandbox && opts.approvals !== undefined && needsGate(sandbox, opts.approvals)
      ? new McpApprovals(server, sandbox, opts.approvals)
      : undefined;
  gated?.gateTools();
  const current =
    gated !== undefined
      ? gated.current
      : sandbox instanceof Sandbox
        ? () => sandbox
        : followRoots(server, sandbox.roots.readonly, opts.onRoots, opts.refuseRoots);
  registerReadTools(server, current);
  registerWriteTools(server, current);
  registerTreeTools(server, current);
  registerResources(server, current, gated);
  // mountbox's own tools, made once per sandbox (roots can change it).
  const made = new WeakMap<Sandbox, Promise<ToolDefinition[]>>();
  const ownOf = (sb: Sandbox) => {
    let defs = made.get(sb);
    if (defs === undefined) {
      defs = createToolDefinitions(sb, { tools: [...OWN_TOOLS] });
      made.set(sb, defs);
    }
    return defs;
  };
  const schemaSource = sandbox instanceof Sandbox ? sandbox : createSandbox({ paths: {} });
  for (const tool of await ownOf(schemaSource))
    registerOwnTool(server, tool, async () => {
      const defs = await ownOf(current());
      return defs.find((d) => d.name === tool.name) as ToolDefinition;
    });
  return server;
}

/** mountbox's own tools, beside the reference server's. */
const OWN_TOOLS = ["grep", "list_allowed_paths"] as const;

/** One tool call, as `--audit` writes it: virtual paths only. */
export interface McpCallRecord {
  tool: string;
  /** The path (or `source`) the call named, cut to 4096 characters. */
  path?: string;
  /** `destination` of a move. */
  destination?: string;
  outcome: "ok" | "error";
  /** The error's code (`path_not_writable`, …) for a failed call. */
  code?: string;
}

/** Wraps every tool registered on `server` so that each call is reported to `onCall`. */
function recordCalls(server: McpServer, onCall: (call: McpCallRecord) => void): void {
  const register = server.registerTool.bind(server) as (...a: unknown[]) => unknown;
  const cut = (v: unknown) => (typeof v === "string" ? v.slice(0, 4096) : undefined);
  (server as { registerTool: unknown }).registerTool = (
    name: string,
    config: unknown,
    cb: (args: Record<string, unknown>, extra: unknown) => Promise<CallToolResult>,
  ) =>
    register(name, config, async (args: Record<string, unknown>, extra: unknown) => {
      const result = await cb(args, extra);
      const first = result.content[0];
      const code =
        result.isError === true && first?.type === "text"
          ? /^Error \[([a-z_]+)\]/.exec(first.text)?.[1]
          : undefined;
      const path = cut(args?.path ?? args?.source);
      const destination = cut(args?.destination);
      onCall({
        tool: name,
        ...(path === undefined ? {} : { path }),
        ...(destination === undefined ? {} : { destination }),
        outcome: result.isError === true ? "error" : "ok",
        ...(code === undefined ? {} : { code }),
      });
      return result;
    });
}

/**
 * One of mountbox's own tools (tool layer) as an MCP tool: its schema and
 * text, with a result starting `Error` marked `isError`.
 */
function registerOwnTool(
  server: McpServer,
  tool: ToolDefinition,
  resolve: () => Promise<ToolDefinition>,
): void {
  server.registerTool(
    tool.name,
    {
      title: tool.name === "grep" ? "Search File Contents" : "List Allowed Paths",
      description: tool.description,
      inputSchema: tool.inputSchema as never,
      annotations: { ...tool.annotations, openWorldHint: false },
    },
    ((args: Record<string, unknown>) =>
      guarded(tool.name, undefined, async (): Promise<CallToolResult> => {
        const text = await (await resolve()).execute(args);
        const failed = text.startsWith("Error");
        return failed
          ? { content: [{ type: "text", text }], isError: true }
          : { content: [{ type: "text", text }] };
      })) as never,
  );
}
