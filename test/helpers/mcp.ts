/**
 * `mountbox mcp` as users run it, for the MCP server tests: the packed
 * tarball installed by npm into a temp app, its bin spawned by the Node
 * running the tests from a working folder elsewhere (neither the app nor the
 * repository), and driven by the MCP SDK's real `Client` over stdio or
 * Streamable HTTP. One install per test file: it costs tens of seconds.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult, ClientCapabilities } from "@modelcontextprotocol/sdk/types.js";
import { assertBuilt } from "../conformance/thread.js";
import { packAndInstall } from "./packed.js";

/** The installed CLI and the folder its servers run in. */
export interface PackedCli {
  /** `node_modules/mountbox/dist/src/cli/main.js` of the npm app. */
  bin: string;
  /** The servers' working folder: not the app, not the repository. */
  cwd: string;
}

/**
 * Packs the repository (dist/ must be built), installs the tarball with npm
 * into an app under `base`, and makes the folder the servers run in.
 */
export function installPackedCli(base: string): PackedCli {
  assertBuilt();
  const { modules } = packAndInstall(join(base, "pack"));
  const cwd = join(base, "elsewhere");
  mkdirSync(cwd, { recursive: true });
  return { bin: join(modules, "mountbox", "dist", "src", "cli", "main.js"), cwd };
}

/** Options of {@link connectStdio}. */
export interface StdioOptions {
  /** Called with each chunk the server writes on stderr. */
  onStderr?: (text: string) => void;
  /** The client's capabilities (roots, elicitation). */
  capabilities?: ClientCapabilities;
  /** Called on the client before it connects (to set request handlers). */
  prepare?: (client: Client) => void;
}

/**
 * A `Client` connected over stdio to `node <script> ...args` run in
 * `cwd` — the installed bin (`cli.bin`, `mcp`, …) or another server.
 */
export async function connectStdio(
  cwd: string,
  script: string,
  args: string[],
  opts: StdioOptions = {},
): Promise<{ client: Client; transport: StdioClientTransport }> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [script, ...args],
    cwd,
    stderr: "pipe",
  });
  transport.stderr?.on("data", (d: Buffer) => opts.onStderr?.(d.toString()));
  const client = new Client(
    { name: "mountbox-test", version: "1.0.0" },
    opts.capabilities === undefined ? {} : { capabilities: opts.capabilities },
  );
  opts.prepare?.(client);
  await client.connect(transport);
  return { client, transport };
}

/** A `Client` connected over Streamable HTTP to `http://127.0.0.1:PORT/mcp`. */
export async function connectHttp(port: number): Promise<Client> {
  const client = new Client({ name: "mountbox-http-test", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`)));
  return client;
}

/** A running `mountbox mcp --http 0` and the port it printed. */
export interface HttpServer {
  server: ChildProcess;
  port: number;
  /** Everything it wrote on stderr so far. */
  stderr: () => string;
}

/** Starts the installed bin with `args` plus `--http 0`; resolves once it prints its port. */
export async function startHttp(cli: PackedCli, args: string[]): Promise<HttpServer> {
  const server = spawn(process.execPath, [cli.bin, ...args, "--http", "0"], {
    cwd: cli.cwd,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let err = "";
  const port = await new Promise<number>((res, rej) => {
    server.stderr?.on("data", (d: Buffer) => {
      err += d.toString();
      const m = /http:\/\/127\.0\.0\.1:(\d+)\/mcp/.exec(err);
      if (m) res(Number(m[1]));
    });
    server.once("exit", () => rej(new Error(`server exited: ${err}`)));
  });
  return { server, port, stderr: () => err };
}

/** A tool call's outcome: `isError`, its content as one text, and the raw result. */
export interface ToolOutcome {
  isError: boolean;
  text: string;
  result: CallToolResult;
}

/** Calls `name` with `args`; non-text blocks show as `[type]` in `text`. */
export async function callTool(
  client: Client,
  name: string,
  args: Record<string, unknown>,
): Promise<ToolOutcome> {
  const r = (await client.callTool({ name, arguments: args })) as CallToolResult;
  const text = r.content.map((c) => (c.type === "text" ? c.text : `[${c.type}]`)).join("\n");
  return { isError: r.isError === true, text, result: r };
}

/**
 * Resolves once `ready()` is true, polling: bounded by the test's timeout
 * only, since a loaded machine can take seconds (a server's log line).
 */
export async function waitUntil(ready: () => boolean): Promise<void> {
  while (!ready()) await new Promise((r) => setTimeout(r, 20));
}
