/**
 * `mountbox mcp --root DIR [--mount SRC:TARGET[:ro]]... [--readonly]`: serves
 * a sandbox to one MCP client over stdio until the client closes stdin.
 * stdout carries the protocol only; notes go to stderr, never a host path.
 */

import { parseArgs } from "node:util";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { type CliIo, UsageError } from "../cli/cli-io.js";
import { SANDBOX_HELP, SANDBOX_OPTIONS, sandboxFromFlags } from "../cli/sandbox-flags.js";
import { formatPathList } from "../errors/index.js";
import { closeSharedPool } from "../pool/index.js";
import { createMcpServer } from "./mcp-server.js";

const MCP_HELP = `Usage: mountbox mcp --root DIR [--mount SRC:TARGET[:ro]]... [--readonly]

Serves a sandbox's files to an MCP client (Claude Desktop, VS Code, …) over
stdio, with the reference filesystem server's tools (read_text_file,
write_file, edit_file, list_directory, directory_tree, search_files, …) plus
grep and list_allowed_paths. Paths are virtual: DIR is '/', a mount with
target /cache is /cache. Traversal and links out of the sandbox are refused;
writes to a read-only mount are refused with a message naming what is
writable. The server runs until the client closes its stdin.

Options:
${SANDBOX_HELP}
  -h, --help                   Show this help

Exit status: 0 when the client disconnects; 2 on bad usage or configuration.
See docs/mcp.md for client configuration.
`;

/** Runs `mountbox mcp`; resolves with the exit status once the client has gone. */
export async function runMcp(argv: readonly string[], io: CliIo, version: string): Promise<number> {
  let values: ReturnType<typeof parse>["values"];
  try {
    values = parse(argv).values;
  } catch (err) {
    // parseArgs' own messages are about the arguments, never about files.
    throw new UsageError(err instanceof Error ? err.message : "bad arguments");
  }
  if (values.help) {
    io.stdout(MCP_HELP);
    return 0;
  }
  const sandbox = sandboxFromFlags(values);
  const server = await createMcpServer(sandbox, { version });
  const transport = new StdioServerTransport();
  transport.onerror = (err) => {
    // A malformed message: the SDK answers the client; say only what it was.
    io.stderr(`mountbox mcp: ${err instanceof Error ? err.name : "error"} on the connection\n`);
  };
  const d = sandbox.describe();
  io.stderr(
    `mountbox mcp: serving on stdio. Readable: ${formatPathList(d.readable)}; writable: ${d.writable.length > 0 ? formatPathList(d.writable) : "nothing"}.\n`,
  );
  const closed = new Promise<void>((resolve) => {
    process.stdin.once("end", resolve);
    process.stdin.once("close", resolve);
  });
  await server.connect(transport);
  await closed;
  await server.close();
  await closeSharedPool();
  return 0;
}

function parse(argv: readonly string[]) {
  return parseArgs({
    args: [...argv],
    allowPositionals: false,
    strict: true,
    options: { ...SANDBOX_OPTIONS, help: { type: "boolean", short: "h" } },
  });
}
