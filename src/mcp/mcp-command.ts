/**
 * `mountbox mcp --root DIR [--mount SRC:TARGET[:ro]]... [--readonly]` or
 * `mountbox mcp <program-dir> [--worker NAME]`: serves a sandbox to one MCP
 * client over stdio until the client closes stdin, or to clients on
 * 127.0.0.1 over Streamable HTTP (`--http PORT`) until interrupted. stdout
 * carries the protocol only; notes go to stderr, never a host path. A
 * program's areas that ask approval are decided by `--approve`
 * (mcp-approvals.ts); `--audit` logs each call and each decision.
 */

import { openSync, writeSync } from "node:fs";
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { type CliIo, UsageError } from "../cli/cli-io.js";
import { loadWorkerServing } from "../cli/program-sandbox.js";
import { SANDBOX_HELP, SANDBOX_OPTIONS, sandboxFromFlags } from "../cli/sandbox-flags.js";
import { escapeControl, formatPathList } from "../errors/index.js";
import { type AuditLog, formatAuditLine } from "../host/audit-log.js";
import { findAuditInside } from "../host/audit-placement.js";
import { closeSharedPool } from "../pool/index.js";
import { Sandbox } from "../sandbox/sandbox.js";
import {
  declaresElicitation,
  MCP_APPROVE_POLICIES,
  type McpApprovePolicy,
  needsGate,
} from "./mcp-approvals.js";
import { serveMcpHttp } from "./mcp-http.js";
import { createMcpServer, type McpCallRecord } from "./mcp-server.js";

const MCP_HELP = `Usage: mountbox mcp --root DIR [--mount SRC:TARGET[:ro]]... [--readonly] [--http PORT]
       mountbox mcp <program-dir> [--worker NAME] [--approve ask|all|none] [--http PORT]
       mountbox mcp [--readonly] [--http PORT]    (the client's roots are the folders)

Serves a sandbox's files to an MCP client (Claude Desktop, VS Code, …) over
stdio, with the reference filesystem server's tools (read_text_file,
write_file, edit_file, list_directory, directory_tree, search_files, …) plus
grep and list_allowed_paths. Paths are virtual: DIR is '/', a mount with
target /cache is /cache. Traversal and links out of the sandbox are refused;
writes to a read-only mount are refused with a message naming what is
writable. The server runs until the client closes its stdin. Without --root
or a program folder, the folders the client offers as MCP roots are served:
the first as '/', each other at /<its name>, updated when they change. With a program
folder, it serves the sandbox its worker NAME (default: 'main', or the only
worker) has when run at the top.

Options:
${SANDBOX_HELP.replace("(required)", "(default: the client's roots)")}
  --worker NAME                With <program-dir>: whose sandbox to serve
  --approve ask|all|none       Requests that need an approval (the program's
                               read_approval/write_approval areas, dynamic
                               expansion): ask the user through the client
                               (ask, the default; a client without elicitation
                               gets a refusal saying how to allow it), approve
                               all, or refuse all
  --audit FILE                 Append one JSON line per tool call to FILE (time,
                               tool, virtual path, outcome, error code), and
                               per approval request, decision, grant, denial
  --http PORT                  Serve Streamable HTTP at http://127.0.0.1:PORT/mcp
                               instead of stdio (0: any free port); requests
                               naming another host or origin are refused
  -h, --help                   Show this help

Exit status: 0 when the client disconnects (or, with --http, on Ctrl-C);
2 on bad usage or configuration.
See docs/mcp.md for client configuration.
`;

/** Runs `mountbox mcp`; resolves with the exit status once the client has gone. */
export async function runMcp(argv: readonly string[], io: CliIo, version: string): Promise<number> {
  let values: ReturnType<typeof parse>["values"];
  let positionals: string[];
  try {
    ({ values, positionals } = parse(argv));
  } catch (err) {
    // parseArgs' own messages are about the arguments, never about files.
    throw new UsageError(err instanceof Error ? err.message : "bad arguments");
  }
  if (values.help) {
    io.stdout(MCP_HELP);
    return 0;
  }
  const policy = values.approve ?? "ask";
  if (!(MCP_APPROVE_POLICIES as readonly string[]).includes(policy))
    throw new UsageError(
      `--approve takes 'ask', 'all' or 'none', not '${escapeControl(policy.slice(0, 20))}'`,
    );
  const { sandbox, worker, ceiling } = await chooseSandbox(values, positionals);
  // The client must not reach its own audit trail (createHost's rule too).
  const auditInside = (sb: Sandbox) =>
    values.audit === undefined ? undefined : findAuditInside(sb, values.audit);
  for (const sb of sandbox instanceof Sandbox ? [sandbox, ceiling] : [])
    if (sb !== undefined && auditInside(sb) !== undefined)
      throw new UsageError(
        `--audit: the file lies inside the served sandbox (at '${escapeControl(auditInside(sb)!)}'), where the client could read, change or replace it; give a file outside every served folder`,
      );
  const audit = values.audit === undefined ? undefined : openAudit(values.audit);
  const onCall = audit?.onCall;
  const approvals = {
    policy: policy as McpApprovePolicy,
    worker: worker ?? "mcp",
    ceiling,
    audit: audit?.log,
  };
  const onRoots = (sb: Sandbox | undefined) =>
    io.stderr(
      `mountbox mcp: roots ${sb === undefined ? "unusable: serving nothing" : `taken. ${describe(sb)}`}\n`,
    );
  const make = () =>
    createMcpServer(sandbox, {
      version,
      onRoots,
      approvals,
      refuseRoots: (sb: Sandbox) =>
        auditInside(sb) === undefined
          ? undefined
          : "the client's roots hold the --audit file, which the client could then change; restart mountbox mcp with an --audit file outside them",
      ...(onCall === undefined ? {} : { onCall }),
    });
  const describe = (sb: Sandbox) => {
    const d = sb.describe();
    return `Readable: ${formatPathList(d.readable)}; writable: ${d.writable.length > 0 ? formatPathList(d.writable) : "nothing"}.`;
  };
  const served =
    sandbox instanceof Sandbox ? describe(sandbox) : "The folders are the client's roots.";
  if (values.http !== undefined) {
    const port = Number(values.http);
    if (!Number.isInteger(port) || port < 0 || port > 65535)
      throw new UsageError("--http takes a port number (0 to 65535)");
    // A session whose client can be asked needs event streams to ask it.
    const asks = policy === "ask" && sandbox instanceof Sandbox && needsGate(sandbox, approvals);
    const http = await serveMcpHttp(make, port, (init) => asks && declaresElicitation(init));
    io.stderr(`mountbox mcp: serving on http://127.0.0.1:${http.port}/mcp. ${served}\n`);
    await new Promise<void>((resolve) => {
      process.once("SIGINT", resolve);
      process.once("SIGTERM", resolve);
    });
    await http.close();
    await closeSharedPool();
    return 0;
  }
  const server = await make();
  const transport = new StdioServerTransport();
  transport.onerror = (err) => {
    // A malformed message: the SDK answers the client; say only what it was.
    io.stderr(`mountbox mcp: ${err instanceof Error ? err.name : "error"} on the connection\n`);
  };
  io.stderr(`mountbox mcp: serving on stdio. ${served}\n`);
  // Ends when the client closes stdin, or when the SDK closes the
  // connection (a message over its 10 MiB limit does): either way, exit 0
  // rather than leave the process waiting on a stdin that never ends.
  const closed = new Promise<void>((resolve) => {
    process.stdin.once("end", resolve);
    process.stdin.once("close", resolve);
    transport.onclose = () => resolve();
  });
  await server.connect(transport);
  await closed;
  await server.close();
  await closeSharedPool();
  return 0;
}

/**
 * The `--audit` file, opened for appending now (a file it cannot open is a
 * usage error before serving); each call is one JSON line, written at once,
 * and so is each line of the approvals (as the host's audit log writes them).
 */
function openAudit(file: string): { onCall: (call: McpCallRecord) => void; log: AuditLog } {
  let fd: number;
  try {
    fd = openSync(resolve(file), "a", 0o600);
  } catch (err) {
    throw new UsageError(
      `--audit: cannot open '${escapeControl(file.slice(0, 200))}' (${(err as NodeJS.ErrnoException).code ?? "error"})`,
    );
  }
  return {
    onCall: (call) => {
      writeSync(
        fd,
        `${JSON.stringify({ time: new Date().toISOString(), type: "tool_call", ...call })}\n`,
      );
    },
    log: {
      write: (entry) => {
        writeSync(fd, `${JSON.stringify(formatAuditLine(entry))}\n`);
      },
      failed: false,
      close: () => {},
    },
  };
}

/** What to serve: the flags' sandbox, a program worker's (with its name and ceiling), or the roots. */
async function chooseSandbox(
  values: ReturnType<typeof parse>["values"],
  positionals: string[],
): Promise<{
  sandbox: Sandbox | { roots: { readonly: boolean } };
  worker?: string;
  ceiling?: Sandbox;
}> {
  const [dir, ...extra] = positionals;
  if (extra.length > 0)
    throw new UsageError(`unexpected argument '${escapeControl(extra[0]!.slice(0, 40))}'`);
  if (dir === undefined) {
    if (values.worker !== undefined) throw new UsageError("--worker needs a program folder");
    // No folder given: the client's roots are the folders.
    if (values.root === undefined && values.mount === undefined)
      return { sandbox: { roots: { readonly: values.readonly ?? false } } };
    return { sandbox: sandboxFromFlags(values) };
  }
  if (values.root !== undefined || values.mount !== undefined || values.readonly !== undefined)
    throw new UsageError("give a program folder or --root/--mount/--readonly, not both");
  return await loadWorkerServing(dir, values.worker);
}

function parse(argv: readonly string[]) {
  return parseArgs({
    args: [...argv],
    allowPositionals: true,
    strict: true,
    options: {
      ...SANDBOX_OPTIONS,
      worker: { type: "string" },
      approve: { type: "string" },
      audit: { type: "string" },
      http: { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
}
