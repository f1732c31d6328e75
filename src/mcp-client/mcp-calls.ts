/**
 * An agent's MCP tool calls, served by the host (DESIGN §10): which servers
 * an agent may use (its worker's `mcp`, narrowed along the delegation
 * chain), the tools its LLM loop is offered, and one call — checked, asked
 * for approval where the server says `always`, reported (event `mcp_call`
 * and an audit line) and answered as text.
 */
import type { Agent } from "../agents/agent.js";
import { DelegationRefusedError, escapeControl } from "../errors/index.js";
import type { EventHub } from "../host/event-hub.js";
import type { LlmMcpTool } from "../port/protocol.js";
import type { McpConnections } from "./mcp-servers.js";

/** Longest text an MCP call answers with; the rest is cut with a note. */
const MAX_RESULT_CHARS = 100_000;
/** Most tool names a refusal lists. */
const MAX_LISTED_TOOLS = 20;

/**
 * The servers `agent` may use: its worker's `mcp`, and for a callee only
 * those its caller may use too.
 */
export function effectiveMcpServers(
  spec: { mcp?: string[] },
  parent: { mcpServers?: readonly string[] } | undefined,
): string[] {
  const own = spec.mcp ?? [];
  if (!parent) return [...own];
  const allowed = new Set(parent.mcpServers ?? []);
  return own.filter((s) => allowed.has(s));
}

/**
 * The tools an LLM agent is offered for `servers`, as their servers list
 * them now: `SERVER__TOOL`, each with the server's description and input
 * schema (names were checked at listing: plain, at most 64 characters;
 * server names make them unique).
 */
export function mcpToolsFor(
  conns: McpConnections | undefined,
  servers: readonly string[],
): LlmMcpTool[] {
  const out: LlmMcpTool[] = [];
  if (!conns) return out;
  const seen = new Set<string>();
  for (const s of servers) {
    const c = conns.get(s);
    if (!c) continue;
    for (const t of c.tools) {
      const name = `${s}__${t.name}`;
      if (seen.has(name)) continue;
      seen.add(name);
      out.push({
        name,
        server: s,
        tool: t.name,
        ...(t.description !== undefined ? { description: t.description } : {}),
        inputSchema: t.inputSchema,
      });
    }
  }
  return out;
}

/**
 * Serves one `mcp.call` of `agent` (arguments already checked by the port):
 * refused unless the agent may use the server and the server lists the
 * tool now; asks approval when the server says `always`; waits for a slot
 * of the server (`MAX_CALLS_PER_SERVER`) and restarts it if it
 * stopped. Answers once a tool list the server announced changed during
 * the call has been read, so agents started after see it.
 */
export async function serveAgentMcpCall(
  hub: EventHub,
  conns: McpConnections | undefined,
  agent: Agent,
  server: string,
  tool: string,
  args: Record<string, unknown>,
): Promise<string> {
  const allowed = agent.mcpServers ?? [];
  const conn = allowed.includes(server) ? conns?.get(server) : undefined;
  if (!conn)
    throw new DelegationRefusedError(
      `Worker '${agent.worker}' may not use the MCP server '${escapeControl(server.slice(0, 100))}'. It may use: ${allowed.length ? allowed.join(", ") : "no MCP servers"}.`,
    );
  // Only what the server lists now (a thread could send any name straight
  // over the port; a tool the server removed since the agent started is gone).
  await conn.settled();
  if (!conn.tools.some((t) => t.name === tool)) {
    const names = conn.tools.slice(0, MAX_LISTED_TOOLS).map((t) => `${server}__${t.name}`);
    throw new DelegationRefusedError(
      `The MCP server '${server}' has no tool '${escapeControl(tool.slice(0, 100))}' (not any more, if it was offered: its tool list changed). Its tools now: ${names.length ? names.join(", ") + (conn.tools.length > names.length ? ", …" : "") : "none"}.`,
    );
  }
  const started = Date.now();
  const emit = (outcome: "ok" | "error" | "denied") =>
    hub.emit({
      type: "mcp_call",
      agentId: agent.id,
      worker: agent.worker,
      server,
      tool: escapeControl(tool),
      outcome,
      durationMs: Date.now() - started,
      time: Date.now(),
    });
  if (conn.approval === "always") {
    if (!agent.gate) throw new Error("internal: an MCP server asking approval needs a gate");
    try {
      await agent.gate.checkMcp(server, tool, args);
    } catch (err) {
      emit("denied");
      throw err;
    }
  }
  let result: Awaited<ReturnType<typeof conn.call>>;
  try {
    result = await conn.call(tool, args, agent.controller.signal);
  } catch (err) {
    emit("error");
    if (err instanceof DelegationRefusedError) throw err;
    // The server's own error text (a protocol or tool error), never a host
    // stack, a URL, nor a value of its env or headers.
    throw new DelegationRefusedError(
      `The MCP tool '${server}__${escapeControl(tool.slice(0, 100))}' failed: ${conn.describe(err, 500)}`,
    );
  }
  await conn.settled();
  // The server's env and header values hidden here too: a server's tool
  // error is a result (the SDK turns a thrown error into one), and a
  // careless one echoes its token there (found by a review).
  const text = resultText(result, (t) => conn.hide(t));
  emit(result.isError === true ? "error" : "ok");
  return result.isError === true ? `Error from the tool: ${text}` : text;
}

/** A call's content as text: text parts joined; other parts named; `hide` applied before the cut. */
function resultText(result: Record<string, unknown>, hide: (text: string) => string): string {
  const content = Array.isArray(result.content) ? result.content : [];
  const parts: string[] = [];
  for (const c of content as { type?: unknown; text?: unknown; mimeType?: unknown }[]) {
    if (c?.type === "text" && typeof c.text === "string") parts.push(c.text);
    else if (c?.type === "resource" || c?.type === "resource_link")
      parts.push(`[${String(c.type)}: ${JSON.stringify(c).slice(0, 2000)}]`);
    else
      parts.push(
        `[${String(c?.type)} content${typeof c?.mimeType === "string" ? ` (${c.mimeType})` : ""} omitted]`,
      );
  }
  if (parts.length === 0 && result.structuredContent !== undefined)
    parts.push(JSON.stringify(result.structuredContent));
  const text = hide(parts.join("\n"));
  return text.length > MAX_RESULT_CHARS
    ? `${text.slice(0, MAX_RESULT_CHARS)}\n[cut: ${text.length - MAX_RESULT_CHARS} more characters]`
    : text;
}
