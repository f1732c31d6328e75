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
import { type ConfigIssue, configError, escapeControl } from "../errors/index.js";
import { isPlainObject } from "../port/arg-checks.js";
import { McpServerConnection } from "./mcp-connection.js";

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

/**
 * Server names: they prefix tool names (`NAME__tool`), so kept plain — and
 * without `__` and a last `_`, so the first `__` of a tool name always ends
 * the server's name: `a_` + `x` and `a` + `_x` cannot both be `a___x`.
 */
const SERVER_NAME = /^[A-Za-z0-9](?:[A-Za-z0-9_-]{0,30}[A-Za-z0-9-])?$/;
const STDIO_KEYS = ["command", "args", "env", "cwd", "approval"];
const HTTP_KEYS = ["url", "headers", "approval"];

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
              "a server name may use letters, digits, '_' and '-', starts with a letter or digit, has no '__' and does not end with '_' (tools are named SERVER__TOOL), at most 32 characters",
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
          message: `no MCP server named '${escapeControl(s.slice(0, 100))}' (MCP servers: ${[...out.keys()].join(", ") || "none"})`,
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

/** The host's servers, by name. */
export class McpConnections {
  readonly #servers: Map<string, McpServerConnection>;
  constructor(servers: Map<string, McpServerConnection>) {
    this.#servers = servers;
  }
  /** The server named `name`, if the host holds it. */
  get(name: string): McpServerConnection | undefined {
    return this.#servers.get(name);
  }
  /** How many servers the host holds. */
  get size(): number {
    return this.#servers.size;
  }
  /** Stops every server (a stdio server with its whole process group). */
  async close(): Promise<void> {
    await Promise.allSettled([...this.#servers.values()].map((s) => s.close()));
  }
}

/**
 * Connects to each server in `names` and lists its tools, all at once; if
 * any fails, those started are stopped again.
 * @throws ConfigError naming each server that failed (no command, env, header or URL in the message)
 */
export async function connectMcpServers(
  configs: ReadonlyMap<string, McpServerConfig>,
  names: ReadonlySet<string>,
  basePath: string,
): Promise<McpConnections> {
  const servers = new Map<string, McpServerConnection>();
  const issues: ConfigIssue[] = [];
  await Promise.all(
    [...names].map(async (name) => {
      const server = new McpServerConnection(name, configs.get(name)!, basePath);
      servers.set(name, server);
      try {
        await server.start();
      } catch (err) {
        issues.push({
          path: ["mcpServers", name],
          message: `MCP server '${name}' could not be started or listed: ${server.describe(err)}`,
        });
      }
    }),
  );
  const conns = new McpConnections(servers);
  if (issues.length > 0) {
    await conns.close();
    throw configError(issues);
  }
  return conns;
}
