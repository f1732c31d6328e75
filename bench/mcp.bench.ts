/**
 * `mountbox mcp` (issue 23): sequential `read_text_file` calls of a 1 KiB
 * file over stdio, from the MCP SDK's `Client` + `StdioClientTransport`,
 * against the reference filesystem server (`@modelcontextprotocol/server-
 * filesystem`) serving the same folder, driven by the same client code in the
 * same run. Each server is spawned once and warmed up with a fixed number of
 * calls; then fixed-duration rounds alternate between the two and the best
 * round of each is kept (a busy moment of the machine slows one round, not
 * the ratio). One call in flight at a time: what an agent does.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { type BenchRow, CI_MODE } from "./lib.js";

/** The built CLI (relative to dist/bench/ once built). */
const CLI = fileURLToPath(new URL("../src/cli/main.js", import.meta.url));
const REFERENCE = fileURLToPath(
  import.meta.resolve("@modelcontextprotocol/server-filesystem/dist/index.js"),
);

/** A client connected to `node <args>` over stdio; `stderr()` holds what it printed. */
async function connect(args: string[]): Promise<{ client: Client; stderr(): string }> {
  const transport = new StdioClientTransport({ command: process.execPath, args, stderr: "pipe" });
  let err = "";
  transport.stderr?.on("data", (d: Buffer) => {
    err = (err + d.toString()).slice(-2000);
  });
  const client = new Client({ name: "mountbox-bench", version: "1.0.0" });
  await client.connect(transport);
  return { client, stderr: () => err };
}

/** One `read_text_file` call; throws unless it returned the whole file. */
async function readOnce(client: Client, path: string, size: number): Promise<void> {
  const r = (await client.callTool({
    name: "read_text_file",
    arguments: { path },
  })) as CallToolResult;
  const first = r.content[0];
  if (r.isError || first?.type !== "text" || first.text.length !== size)
    throw new Error(`read_text_file ${path}: unexpected result ${JSON.stringify(r).slice(0, 300)}`);
}

/** Calls each server gets before measuring (see the warm-up below). */
const WARM_CALLS = 3000;

/** `n` calls, `inFlight` at a time. */
async function calls(call: () => Promise<void>, n: number, inFlight: number): Promise<void> {
  let left = n;
  const lane = async () => {
    while (left-- > 0) await call();
  };
  await Promise.all(Array.from({ length: inFlight }, lane));
}

/** Calls per second of `call`, one at a time, for `ms`. */
async function rate(call: () => Promise<void>, ms: number): Promise<number> {
  let n = 0;
  const start = performance.now();
  const end = start + ms;
  let now = start;
  while (now < end) {
    await call();
    n++;
    now = performance.now();
  }
  return (n * 1000) / (now - start);
}

export default async function benchMcp(): Promise<BenchRow[]> {
  const root = realpathSync(mkdtempSync(join(tmpdir(), "mountbox-bench-mcp-")));
  const size = 1024;
  writeFileSync(join(root, "small.txt"), "x".repeat(size));
  const servers: { client: Client; stderr(): string }[] = [];
  try {
    // Both at once; whichever started is closed below if the other failed.
    const started = await Promise.allSettled([
      connect([CLI, "mcp", "--root", root]),
      connect([REFERENCE, root]),
    ]);
    for (const s of started) if (s.status === "fulfilled") servers.push(s.value);
    for (const s of started) if (s.status === "rejected") throw s.reason;
    const [mb, ref] = servers as [(typeof servers)[0], (typeof servers)[0]];
    // mountbox takes virtual paths ('/' is the root); the reference, host paths.
    const mountbox = () => readOnce(mb.client, "/small.txt", size);
    const reference = () => readOnce(ref.client, join(root, "small.txt"), size);
    // Warm-up by count, not time: a fresh server (either) answers its first
    // ≈ 2000 calls 2–3× slower, then settles; a short warm-up by time left
    // CI's short rounds on cold servers (0.8–1.3× instead of ≈ 1.7×). Both
    // servers at once, 8 calls in flight each, to keep it short.
    await Promise.all([calls(mountbox, WARM_CALLS, 8), calls(reference, WARM_CALLS, 8)]);
    const ms = CI_MODE ? 250 : 2000;
    let hz = 0;
    let baselineHz = 0;
    for (let i = 0; i < (CI_MODE ? 2 : 3); i++) {
      hz = Math.max(hz, await rate(mountbox, ms));
      baselineHz = Math.max(baselineHz, await rate(reference, ms));
    }
    return [
      await benchHttp(root, size, ms),
      {
        name: "`mountbox mcp`: read_text_file 1 KiB over stdio, sequential (SDK Client)",
        baseline: "the reference filesystem server, same client, same file",
        hz,
        baselineHz,
        ratio: baselineHz > 0 ? hz / baselineHz : 0,
        goal: "≥ 1.5×",
      },
    ];
  } catch (err) {
    for (const s of servers) if (s.stderr()) console.error(s.stderr());
    throw err;
  } finally {
    for (const s of servers) await s.client.close().catch(() => {});
    rmSync(root, { recursive: true, force: true });
  }
}

/** Clients at once over Streamable HTTP (issue 23). */
const HTTP_CLIENTS = 16;

/**
 * `mountbox mcp --http`: the calls per second of 16 clients at once (each
 * one call in flight, its own session), beside one client alone on the same
 * server — how the server shares itself out; no goal.
 */
async function benchHttp(root: string, size: number, ms: number): Promise<BenchRow> {
  const server = spawn(process.execPath, [CLI, "mcp", "--root", root, "--http", "0"], {
    stdio: ["ignore", "ignore", "pipe"],
  });
  const clients: Client[] = [];
  try {
    let err = "";
    const port = await new Promise<number>((res, rej) => {
      server.stderr?.on("data", (d: Buffer) => {
        err += d.toString();
        const m = /127\.0\.0\.1:(\d+)\/mcp/.exec(err);
        if (m) res(Number(m[1]));
      });
      server.once("exit", () => rej(new Error(`mcp --http exited: ${err.slice(-500)}`)));
    });
    for (let i = 0; i < HTTP_CLIENTS; i++) {
      const c = new Client({ name: `bench-${i}`, version: "1.0.0" });
      await c.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`)));
      clients.push(c);
    }
    const read = (c: Client) => () => readOnce(c, "/small.txt", size);
    await Promise.all(clients.map((c) => calls(read(c), 200, 1)));
    let one = 0;
    let all = 0;
    for (let i = 0; i < (CI_MODE ? 1 : 3); i++) {
      one = Math.max(one, await rate(read(clients[0] as Client), ms));
      const rates = await Promise.all(clients.map((c) => rate(read(c), ms)));
      all = Math.max(
        all,
        rates.reduce((a, b) => a + b, 0),
      );
    }
    return {
      name: `\`mountbox mcp --http\`: read_text_file 1 KiB, ${HTTP_CLIENTS} clients at once (calls/s, all)`,
      baseline: "one client alone, same server",
      hz: all,
      baselineHz: one,
      ratio: one > 0 ? all / one : 0,
    };
  } finally {
    for (const c of clients) await c.close().catch(() => {});
    server.kill("SIGTERM");
  }
}
