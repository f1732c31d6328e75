/**
 * `mountbox mcp --http PORT`: the same server over Streamable HTTP, bound to
 * 127.0.0.1 only, one MCP server per client session. DNS rebinding is
 * refused here, before the SDK sees a request: a web page that resolves its
 * own name to 127.0.0.1 sends its own `Host` (and `Origin`), so only
 * requests naming the loopback address and this port are served.
 */
import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";

/** Largest request body read (a `write_file` of a big file fits). */
const MAX_BODY_BYTES = 64 * 1024 * 1024;
/** Client sessions at once; more are refused until one ends. */
const MAX_SESSIONS = 64;

/** A running HTTP server. */
export interface McpHttpServer {
  /** The port it listens on (the one asked for, or the one the OS gave for 0). */
  port: number;
  close(): Promise<void>;
}

/** A JSON-RPC error answer with an HTTP status. */
function refuse(res: ServerResponse, status: number, message: string): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify({ jsonrpc: "2.0", error: { code: -32000, message }, id: null }));
}

/** True if `host` (a Host header) names this server's loopback address and port. */
function isOwnHost(host: string | undefined, port: number): boolean {
  return host === `127.0.0.1:${port}` || host === `localhost:${port}`;
}

/** True if `origin` is absent (not a browser) or a page served from this same address. */
function isOwnOrigin(origin: string | undefined, port: number): boolean {
  return (
    origin === undefined ||
    origin === `http://127.0.0.1:${port}` ||
    origin === `http://localhost:${port}`
  );
}

/** The request's body as JSON; undefined for an empty body; throws for too big or not JSON. */
async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) throw new RangeError("request body too large");
    chunks.push(chunk);
  }
  if (size === 0) return undefined;
  return JSON.parse(Buffer.concat(chunks).toString("utf8")) as unknown;
}

/**
 * Serves MCP over Streamable HTTP at http://127.0.0.1:`port`/mcp, making a server with
 * `makeServer` for each client session. A session answers each request as
 * one JSON body, unless `eventStreams(initialize)` says it needs event
 * streams (a question the server asks during a tool call, an elicitation,
 * travels on that call's stream before its result).
 */
export async function serveMcpHttp(
  makeServer: () => Promise<McpServer>,
  port: number,
  eventStreams: (initialize: unknown) => boolean = () => false,
): Promise<McpHttpServer> {
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  let bound = port;
  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (!isOwnHost(req.headers.host, bound) || !isOwnOrigin(req.headers.origin, bound)) {
      refuse(res, 403, "Forbidden: this server answers only requests to its own loopback address");
      return;
    }
    if (new URL(req.url ?? "/", "http://x").pathname !== "/mcp") {
      refuse(res, 404, "Not found: the MCP endpoint is /mcp");
      return;
    }
    let body: unknown;
    try {
      body = req.method === "POST" ? await readJson(req) : undefined;
    } catch (err) {
      refuse(res, err instanceof RangeError ? 413 : 400, "Parse error: the body is not JSON");
      return;
    }
    const id = req.headers["mcp-session-id"];
    let transport = typeof id === "string" ? sessions.get(id) : undefined;
    if (transport === undefined) {
      if (typeof id === "string") {
        refuse(res, 404, "Session not found: initialize a new session");
        return;
      }
      if (req.method !== "POST" || !isInitializeRequest(body)) {
        refuse(res, 400, "Bad request: no session; send an initialize request first");
        return;
      }
      if (sessions.size >= MAX_SESSIONS) {
        refuse(res, 503, `Too many sessions (${MAX_SESSIONS}); close one and try again`);
        return;
      }
      const created = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        // One JSON answer per request, no event stream to open and close,
        // unless the server may ask the client something mid-call.
        enableJsonResponse: !eventStreams(body),
        onsessioninitialized: (sid) => {
          sessions.set(sid, created);
        },
      });
      created.onclose = () => {
        if (created.sessionId !== undefined) sessions.delete(created.sessionId);
      };
      const server = await makeServer();
      await server.connect(created);
      transport = created;
    }
    await transport.handleRequest(req, res, body);
  };
  const http = createServer((req, res) => {
    handle(req, res).catch(() => {
      // Whatever failed may name host paths: say only that it failed.
      if (!res.headersSent) refuse(res, 500, "Internal error");
      else res.end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    http.once("error", reject);
    http.listen(port, "127.0.0.1", () => resolve());
  });
  bound = (http.address() as AddressInfo).port;
  return {
    port: bound,
    async close() {
      for (const t of sessions.values()) await t.close().catch(() => {});
      sessions.clear();
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}
