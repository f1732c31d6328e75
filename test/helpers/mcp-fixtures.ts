/**
 * Real MCP servers for the client-side tests (the SDK's `McpServer`): a
 * stdio server script the host starts, a Streamable HTTP server run in the
 * test's own process, and a mock model that follows a plan given as its
 * input (which tools to call, in order).
 */
import { randomUUID } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { createRequire } from "node:module";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { MockLanguageModelV3 } from "ai/test";
import { readToolResults } from "./tool-results.js";

type CallOptions = Parameters<MockLanguageModelV3["doGenerate"]>[0];
type GenerateResult = Awaited<ReturnType<MockLanguageModelV3["doGenerate"]>>;

/**
 * Writes the stdio test server to `dir/server.mjs`. Tools: `echo`, `pid`,
 * `die` (exits without answering), `spawn_sleep` (starts `sleep 1000`
 * holding the server's stdout; answers its pid), `add_tool` (adds
 * `fresh`), `remove_echo`, and with BAD_NAME set `bad name!` (a name
 * providers refuse). Environment: START_LOG (a file each start appends its
 * pid to), CRASH_FILE (while it exists, the server exits at once when
 * started).
 */
export function writeStdioServer(dir: string): string {
  const require = createRequire(import.meta.url);
  const url = (s: string) => JSON.stringify(pathToFileURL(require.resolve(s)).href);
  const file = join(dir, "server.mjs");
  writeFileSync(
    file,
    `import { spawn } from "node:child_process";
import { appendFileSync, existsSync } from "node:fs";
import { McpServer } from ${url("@modelcontextprotocol/sdk/server/mcp.js")};
import { StdioServerTransport } from ${url("@modelcontextprotocol/sdk/server/stdio.js")};
import { z } from ${url("zod")};
if (process.env.START_LOG) appendFileSync(process.env.START_LOG, process.pid + "\\n");
if (process.env.CRASH_FILE && existsSync(process.env.CRASH_FILE)) process.exit(1);
const server = new McpServer({ name: "demo", version: "1.0.0" });
const text = (t) => ({ content: [{ type: "text", text: String(t) }] });
const echo = server.registerTool("echo", { description: "Echoes its text.", inputSchema: { text: z.string() } },
  async ({ text: t }) => text("echo: " + t));
server.registerTool("pid", { description: "The server's pid." }, async () => text(process.pid));
server.registerTool("die", { description: "Exits without answering." }, async () => process.exit(3));
server.registerTool("spawn_sleep", { description: "Starts a sleep holding stdout." }, async () =>
  text(spawn("sleep", ["1000"], { stdio: ["ignore", "inherit", "ignore"] }).pid));
server.registerTool("add_tool", { description: "Adds the tool fresh." }, async () => {
  server.registerTool("fresh", { description: "Added later." }, async () => text("fresh!"));
  return text("added");
});
server.registerTool("remove_echo", { description: "Removes echo." }, async () => {
  echo.remove();
  return text("removed");
});
if (process.env.BAD_NAME) server.registerTool("bad name!", { description: "A name providers refuse." }, async () => text("x"));
await server.connect(new StdioServerTransport());
`,
  );
  return file;
}

/** The pids a START_LOG file holds, in start order. */
export function readStarts(file: string): number[] {
  try {
    return readFileSync(file, "utf8").split("\n").filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/** True once `pid` has exited (no such process, or a zombie nobody reaped yet). */
export function isGone(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).startsWith("Z");
  } catch {
    return true;
  }
}

/** Resolves with the message of the next process warning with `code`. */
export function nextWarning(code: string): Promise<string> {
  return new Promise((resolve) => {
    const on = (w: Error & { code?: string }) => {
      if (w.code !== code) return;
      process.off("warning", on);
      resolve(w.message);
    };
    process.on("warning", on);
  });
}

const usage = (): GenerateResult["usage"] => ({
  inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 1, text: 1, reasoning: undefined },
});

/** `plan([[tool, args], …])`: the input that makes {@link planModel} call those tools in order. */
export function plan(steps: [string, Record<string, unknown>][]): string {
  return `PLAN ${JSON.stringify(steps)}`;
}

/**
 * A model that calls the tools its input's plan names, one per step, then
 * answers with every result joined by " | ".
 */
export function planModel(): MockLanguageModelV3 {
  return new MockLanguageModelV3({
    doGenerate: async (o) => {
      const user = o.prompt.find((m) => m.role === "user");
      const input =
        user?.role === "user"
          ? user.content.map((p) => (p.type === "text" ? p.text : "")).join("")
          : "";
      const steps = JSON.parse(input.replace(/^PLAN /, "")) as [string, unknown][];
      const seen = readToolResults(o);
      const next = steps[seen.length];
      const result: GenerateResult = next
        ? {
            content: [
              {
                type: "tool-call",
                toolCallId: `c${seen.length}`,
                toolName: next[0],
                input: JSON.stringify(next[1]),
              },
            ],
            finishReason: { unified: "tool-calls", raw: undefined },
            usage: usage(),
            warnings: [],
          }
        : {
            content: [{ type: "text", text: seen.join(" | ") }],
            finishReason: { unified: "stop", raw: undefined },
            usage: usage(),
            warnings: [],
          };
      return result;
    },
  });
}

/** The tool names a model call was offered, sorted. */
export function offeredTools(o: CallOptions): string[] {
  return (o.tools ?? []).map((t) => t.name).sort();
}

/** A Streamable HTTP MCP server in this process. */
export interface HttpMcpServer {
  url: string;
  /** Whether requests with the right Authorization header are still served. */
  accept: boolean;
  /** Authorization headers that were refused. */
  refused: string[];
  close(): Promise<void>;
}

/**
 * Serves MCP over Streamable HTTP on 127.0.0.1 (one session per client),
 * answering only requests with `Authorization: Bearer <token>`; a refusal
 * (401) echoes the header it got, as a careless server might.
 */
export async function startHttpMcpServer(
  token: string,
  register: (server: McpServer) => void,
): Promise<HttpMcpServer> {
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const state: HttpMcpServer = { url: "", accept: true, refused: [], close: async () => {} };
  const http = createServer((req: IncomingMessage, res: ServerResponse) => {
    const auth = req.headers.authorization ?? "";
    if (!state.accept || auth !== `Bearer ${token}`) {
      state.refused.push(auth);
      res.writeHead(401, { "content-type": "text/plain" }).end(`refused: ${auth}`);
      return;
    }
    const id = req.headers["mcp-session-id"];
    let transport = typeof id === "string" ? sessions.get(id) : undefined;
    if (!transport) {
      if (typeof id === "string") {
        res.writeHead(404).end("no such session");
        return;
      }
      const t = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (sid) => {
          sessions.set(sid, t);
        },
      });
      const server = new McpServer({ name: "http-demo", version: "1.0.0" });
      register(server);
      void server.connect(t);
      transport = t;
    }
    void transport.handleRequest(req, res);
  });
  await new Promise<void>((r) => http.listen(0, "127.0.0.1", r));
  state.url = `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`;
  state.close = async () => {
    await Promise.allSettled([...sessions.values()].map((t) => t.close()));
    http.closeAllConnections();
    await new Promise((r) => http.close(r));
  };
  return state;
}
