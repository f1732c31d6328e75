/**
 * The port's `mcp.call`: an LLM agent's call of an MCP tool the host holds
 * (DESIGN §10) — `[server, tool, arguments]`, checked here (a hostile
 * thread may send anything); the host decides whether the agent may use it.
 */
import { arity, asString, type Handler, isPlainObject } from "./arg-checks.js";
import type { PortServerOptions } from "./port-options.js";

/** Longest server or tool name accepted. */
const MAX_NAME_CHARS = 256;
/** Most bytes of a call's arguments as JSON (strings count 2 per code unit). */
export const MAX_MCP_ARGS_BYTES = 1024 * 1024;

/** The `mcp.call` operation, served by the owner's `onMcpCall`. */
export function mcpHandler(onMcpCall: NonNullable<PortServerOptions["onMcpCall"]>): Handler {
  return {
    check(args) {
      const bad = arity(args, 3, 3);
      if (bad) return bad;
      const [server, tool, input] = args;
      for (const [what, v] of [
        ["server", server],
        ["tool", tool],
      ] as const)
        if (typeof v !== "string" || v === "" || v.length > MAX_NAME_CHARS)
          return `${what} must be a non-empty string of at most ${MAX_NAME_CHARS} characters`;
      if (!isPlainObject(input)) return "arguments must be a plain object";
      // A JSON copy: plain data only, bounded, and nothing the thread can still change.
      let json: string | undefined;
      try {
        json = JSON.stringify(input);
      } catch {
        return "arguments must be plain JSON data";
      }
      if (json === undefined || json.length * 2 > MAX_MCP_ARGS_BYTES)
        return `arguments must be at most ${MAX_MCP_ARGS_BYTES} bytes as JSON`;
      const copy = JSON.parse(json) as Record<string, unknown>;
      return { args: [server, tool, copy], bytes: json.length * 2 };
    },
    run: (_sb, a) => onMcpCall(asString(a[0]), asString(a[1]), a[2] as Record<string, unknown>),
  };
}
