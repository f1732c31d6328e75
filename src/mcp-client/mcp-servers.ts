/**
 * MCP servers held by the host (DESIGN §10): `createHost({ mcpServers })`
 * is validated here ({@link checkMcpServers}), each server some worker names
 * (`mcp: [NAME]`) is connected once at `createHost` and its tools listed
 * ({@link connectMcpServers}); agents reach them only through the port
 * (`mcp.call`), the thread never holds a connection or a credential.
 *
 * A stdio server is started with the SDK's safe default environment
 * (`getDefaultEnvironment()`: HOME, LOGNAME, PATH, SHELL, TERM, USER) plus
 * exactly the `env` given — never the host's whole environment.
 */
import { resolve } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { type ConfigIssue, configError, escapeControl } from "../errors/index.js";
import { isPlainObject } from "../port/arg-checks.js";

/** Whether each call of a server's tools asks the host's approver first. */
export type McpApproval = "always" | "never";

/** A server the host starts itself and talks to over stdio. */
export interface McpStdioServerConfig {
  command: string;
  args?: string[];
  /** The server's environment, beside the SDK's safe defaults (HOME, PATH, …). */
  env?: Record<string, string>;
  cwd?: string;
  /** Default "never". */
  approval?: McpApproval;
}

/** A server reached over Streamable HTTP. */
export interface McpHttpServerConfig {
  url: string;
  headers?: Record<string, string>;
  /** Default "never". */
  approval?: McpApproval;
}

/** `createHost({ mcpServers })`: MCP servers by name. */
export type McpServerConfig = McpStdioServerConfig | McpHttpServerConfig;

/** One tool of a connected server, as its listing gave it. */
export interface McpToolInfo {
  /** The server's own name of the tool. */
  name: string;
  description?: string;
  /** Its input JSON schema (an object schema). */
  inputSchema: Record<string, unknown>;
}

/** Server names: they prefix tool names (`NAME__tool`), so kept plain. */
const SERVER_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,31}$/;
const STDIO_KEYS = ["command", "args", "env", "cwd", "approval"];
const HTTP_KEYS = ["url", "headers", "approval"];
/** How long connecting and listing may take at createHost. */
const CONNECT_TIMEOUT_MS = 30_000;

/**
 * Checks `mcpServers` and each worker's `mcp` list (names of known
 * servers). Issues name the key path; never a value (env and headers may
 * hold secrets).
 */
export function checkMcpServers(
  raw: unknown,
  workers: ReadonlyMap<string, { mcp?: unknown; module?: unknown }>,
  issues: ConfigIssue[],
): Map<string, McpServerConfig> {
  const out = new Map<string, McpServerConfig>();
  if (raw !== undefined) {
    if (!isPlainObject(raw))
      issues.push({ path: ["mcpServers"], message: "expected an object of MCP servers by name" });
    else
      for (const [name, v] of Object.entries(raw)) {
        const at = ["mcpServers", name];
        if (!SERVER_NAME.test(name) || name.includes("__")) {
          issues.push({
            path: at,
            message:
              "a server name may use letters, digits, '_' and '-' (no '__'), starts with a letter or digit, at most 32 characters",
          });
          continue;
        }
        const c = checkServer(v, at, issues);
        if (c) out.set(name, c);
      }
  }
  for (const [worker, spec] of workers) {
    const list = spec.mcp;
    if (list === undefined) continue;
    const at = ["workers", worker, "mcp"];
    if (!Array.isArray(list) || !list.every((s) => typeof s === "string")) {
      issues.push({ path: at, message: "expected a list of MCP server names" });
      continue;
    }
    if (spec.module !== undefined) {
      issues.push({
        path: at,
        message:
          "'mcp' is for LLM workers (instructions, no module): a code worker is offered no MCP tools",
      });
      continue;
    }
    list.forEach((s: string, i) => {
      if (!out.has(s))
        issues.push({
          path: [...at, i],
          message: `no MCP server named '${escapeControl(s.slice(0, 100))}' (mcpServers: ${[...out.keys()].join(", ") || "none"})`,
        });
    });
  }
  return out;
}

function checkServer(v: unknown, at: string[], issues: ConfigIssue[]): McpServerConfig | undefined {
  if (!isPlainObject(v)) {
    issues.push({
      path: at,
      message: "expected { command, args?, env?, cwd? } or { url, headers? }",
    });
    return undefined;
  }
  const stdio = v.command !== undefined;
  if (stdio === (v.url !== undefined)) {
    issues.push({ path: at, message: "give either 'command' (stdio) or 'url' (HTTP), not both" });
    return undefined;
  }
  const keys = stdio ? STDIO_KEYS : HTTP_KEYS;
  let ok = true;
  const bad = (k: string, message: string) => {
    ok = false;
    issues.push({ path: [...at, k], message });
  };
  for (const k of Object.keys(v))
    if (!keys.includes(k)) bad(k, `unknown key '${k}' (expected ${keys.join(", ")})`);
  if (v.approval !== undefined && v.approval !== "always" && v.approval !== "never")
    bad("approval", 'expected "always" or "never"');
  if (stdio) {
    if (typeof v.command !== "string" || v.command === "") bad("command", "expected a command");
    if (
      v.args !== undefined &&
      !(Array.isArray(v.args) && v.args.every((a) => typeof a === "string"))
    )
      bad("args", "expected a list of strings");
    if (v.env !== undefined && !isStringRecord(v.env)) bad("env", "expected an object of strings");
    if (v.cwd !== undefined && (typeof v.cwd !== "string" || v.cwd === ""))
      bad("cwd", "expected a folder path");
  } else {
    let url: URL | undefined;
    try {
      url = typeof v.url === "string" ? new URL(v.url) : undefined;
    } catch {}
    if (!url || (url.protocol !== "http:" && url.protocol !== "https:"))
      bad("url", "expected an http(s) URL");
    if (v.headers !== undefined && !isStringRecord(v.headers))
      bad("headers", "expected an object of strings");
  }
  if (!ok) return undefined;
  // A copy: the caller's object may change after createHost.
  const approval = v.approval as McpApproval | undefined;
  if (stdio)
    return {
      command: v.command as string,
      ...(v.args ? { args: [...(v.args as string[])] } : {}),
      ...(v.env ? { env: { ...(v.env as Record<string, string>) } } : {}),
      ...(v.cwd ? { cwd: v.cwd as string } : {}),
      ...(approval ? { approval } : {}),
    };
  return {
    url: v.url as string,
    ...(v.headers ? { headers: { ...(v.headers as Record<string, string>) } } : {}),
    ...(approval ? { approval } : {}),
  };
}

function isStringRecord(v: unknown): v is Record<string, string> {
  return isPlainObject(v) && Object.values(v).every((x) => typeof x === "string");
}

/** One connected server. */
export interface McpConnection {
  name: string;
  approval: McpApproval;
  tools: McpToolInfo[];
  client: Client;
}

/** The host's connected servers. */
export class McpConnections {
  readonly #servers: Map<string, McpConnection>;
  constructor(servers: Map<string, McpConnection>) {
    this.#servers = servers;
  }
  get(name: string): McpConnection | undefined {
    return this.#servers.get(name);
  }
  get size(): number {
    return this.#servers.size;
  }
  /** Closes every connection (stdio servers are stopped). */
  async close(): Promise<void> {
    await Promise.allSettled([...this.#servers.values()].map((s) => s.client.close()));
  }
}

/**
 * Connects to each server in `names` and lists its tools, all at once.
 * @throws ConfigError naming each server that failed (no command, env or header in the message)
 */
export async function connectMcpServers(
  configs: ReadonlyMap<string, McpServerConfig>,
  names: ReadonlySet<string>,
  basePath: string,
): Promise<McpConnections> {
  const connected = new Map<string, McpConnection>();
  const issues: ConfigIssue[] = [];
  await Promise.all(
    [...names].map(async (name) => {
      const config = configs.get(name)!;
      const client = new Client({ name: "mountbox", version: "1" });
      try {
        const transport = makeTransport(config, basePath);
        await withTimeout(client.connect(transport), name);
        const tools: McpToolInfo[] = [];
        let cursor: string | undefined;
        do {
          const page = await withTimeout(
            client.listTools(cursor === undefined ? {} : { cursor }),
            name,
          );
          for (const t of page.tools)
            tools.push({
              name: t.name,
              ...(t.description !== undefined ? { description: t.description } : {}),
              inputSchema: t.inputSchema as Record<string, unknown>,
            });
          cursor = page.nextCursor;
        } while (cursor !== undefined && tools.length < 1000);
        connected.set(name, { name, approval: config.approval ?? "never", tools, client });
      } catch (err) {
        await client.close().catch(() => undefined);
        issues.push({
          path: ["mcpServers", name],
          message: `MCP server '${name}' could not be started or listed: ${describeFailure(err)}`,
        });
      }
    }),
  );
  if (issues.length > 0) {
    await Promise.allSettled([...connected.values()].map((c) => c.client.close()));
    throw configError(issues);
  }
  return new McpConnections(connected);
}

function makeTransport(config: McpServerConfig, basePath: string): Transport {
  if ("command" in config)
    return new StdioClientTransport({
      command: config.command,
      args: config.args ?? [],
      // Merged by the SDK over getDefaultEnvironment() (HOME, PATH, …): the
      // host's own environment (its API keys) is not passed on.
      env: config.env ?? {},
      cwd: config.cwd === undefined ? basePath : resolve(basePath, config.cwd),
      stderr: "ignore",
    });
  return new StreamableHTTPClientTransport(
    new URL(config.url),
    config.headers ? { requestInit: { headers: config.headers } } : undefined,
  );
}

async function withTimeout<T>(p: Promise<T>, name: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      p,
      new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`no answer from '${name}' within ${CONNECT_TIMEOUT_MS} ms`)),
          CONNECT_TIMEOUT_MS,
        );
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Why a server failed, without what may be a secret: the error's code
 * (ENOENT, …) or its class and a short message with URLs cut out.
 */
function describeFailure(err: unknown): string {
  const code = (err as { code?: unknown })?.code;
  if (typeof code === "string") return code;
  const msg = err instanceof Error ? err.message : String(err);
  return escapeControl(msg.replace(/\bhttps?:\/\/\S+/g, "<url>").slice(0, 200));
}
