/**
 * MCP servers held by the host (DESIGN §10), beyond one stdio server and
 * one call: a tool list that changes, a Streamable HTTP server with
 * headers (never shown), calls from an agent process, a limit of calls in
 * flight per server, names that always say which server, and
 * `mountbox check` listing the servers without starting them.
 */
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { ConfigError, createHost as createBuiltHost } from "../dist/src/index.js";
import { runCheck } from "../src/cli/check-command.js";
import type { Host, HostEvent, HostOptions } from "../src/index.js";
import { MAX_CALLS_PER_SERVER, McpServerConnection } from "../src/mcp-client/mcp-connection.js";
import { checkMcpServers } from "../src/mcp-client/mcp-servers.js";
import { assertBuilt } from "./conformance/thread.js";
import { describeWithBwrap } from "./helpers/bwrap.js";
import {
  nextWarning,
  offeredTools,
  plan,
  planModel,
  startHttpMcpServer,
  writeStdioServer,
} from "./helpers/mcp-fixtures.js";
import { makeTempDir, removeDir } from "./helpers/tree.js";

const createHost = createBuiltHost as unknown as (o: HostOptions) => Promise<Host>;
const TOKEN = "http-token-secret-4242";
/** How long a poll for what must happen may take on a loaded machine. */
const WAIT = { timeout: 15_000, interval: 20 };
const text = (t: string) => ({ content: [{ type: "text" as const, text: t }] });

let dir: string;
let serverFile: string;

beforeAll(() => {
  assertBuilt();
  dir = makeTempDir("mountbox-mcp-features-");
  serverFile = writeStdioServer(dir);
});
afterAll(() => removeDir(dir));

const demo = (env: Record<string, string> = {}) => ({
  command: process.execPath,
  args: [serverFile],
  env,
});
const worker = (mcp: string[], extra: Record<string, unknown> = {}) => ({
  instructions: "Follow the plan.",
  model: "m",
  mcp,
  ...extra,
});

describe("tool lists", () => {
  it("re-lists on list_changed: agents started after see the new list; a removed tool is refused", async () => {
    const model = planModel();
    const host = await createHost({
      workers: { w: worker(["demo"]) },
      models: { m: model },
      mcpServers: { demo: demo() },
    });
    try {
      expect(await host.run("w", plan([["demo__add_tool", {}]]))).toBe("added");
      const out = (await host.run(
        "w",
        plan([
          ["demo__fresh", {}],
          ["demo__remove_echo", {}],
          ["demo__echo", { text: "x" }],
        ]),
      )) as string;
      const [fresh, removed, refused] = out.split(" | ");
      expect([fresh, removed]).toEqual(["fresh!", "removed"]);
      expect(refused).toMatchInlineSnapshot(
        `"The MCP server 'demo' has no tool 'echo' (not any more, if it was offered: its tool list changed). Its tools now: demo__pid, demo__die, demo__spawn_sleep, demo__add_tool, demo__remove_echo, demo__fresh."`,
      );
      await host.run("w", plan([]));
    } finally {
      await host.close();
    }
    const first = (i: number) => offeredTools(model.doGenerateCalls[i]!);
    // Run 1 (2 model calls), run 2 (4), run 3 (1).
    expect(first(0)).toContain("demo__echo");
    expect(first(0)).not.toContain("demo__fresh");
    expect(first(2)).toEqual(expect.arrayContaining(["demo__echo", "demo__fresh"]));
    expect(first(6)).toContain("demo__fresh");
    expect(first(6)).not.toContain("demo__echo");
  });

  it("offers no tool whose SERVER__TOOL name providers refuse, and warns once", async () => {
    const warned = nextWarning("MOUNTBOX_MCP_TOOL_SKIPPED");
    const conn = new McpServerConnection("demo", demo({ BAD_NAME: "1" }), dir);
    await conn.start();
    try {
      expect(await warned).toMatchInlineSnapshot(
        `"The MCP server 'demo' lists tools that are not offered (a name 'demo__TOOL' must be [A-Za-z0-9_-], at most 64 characters, and appear once): bad name!"`,
      );
      expect(conn.tools.map((t) => t.name)).not.toContain("bad name!");
      expect(conn.tools.map((t) => t.name)).toContain("echo");
    } finally {
      await conn.close();
    }
  });

  it("server names cannot make two tools one name: no '__', no '_' at the end", () => {
    const issues: { path: (string | number)[] }[] = [];
    const names = ["a", "a_", "a__b", "_a", "a-", "a_b", "A9"];
    const out = checkMcpServers(
      Object.fromEntries(names.map((n) => [n, { command: "x" }])),
      new Map(),
      issues as never,
    );
    // 'a_' + 'x' and 'a' + '_x' would both be 'a___x': 'a_' is refused.
    expect([...out.keys()]).toEqual(["a", "a-", "a_b", "A9"]);
    expect(issues.map((i) => i.path.join("."))).toEqual([
      "mcpServers.a_",
      "mcpServers.a__b",
      "mcpServers._a",
    ]);
  });
});

describe("Streamable HTTP", () => {
  it("sends the server's headers; their values are in no error, event, warning or model call", async () => {
    const http = await startHttpMcpServer(TOKEN, (s) => {
      s.registerTool("whoami", { description: "Says who." }, async () => text("http ok"));
    });
    const model = planModel();
    const events: HostEvent[] = [];
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(w.message);
    process.on("warning", onWarning);
    const mcpServers = { docs: { url: http.url, headers: { Authorization: `Bearer ${TOKEN}` } } };
    try {
      const host = await createHost({
        workers: { w: worker(["docs"]) },
        models: { m: model },
        mcpServers,
        onEvent: (e) => events.push(e),
      });
      let out: string;
      try {
        expect(await host.run("w", plan([["docs__whoami", {}]]))).toBe("http ok");
        // The server refuses from now on, echoing the header it got.
        http.accept = false;
        out = (await host.run(
          "w",
          plan([
            ["docs__whoami", {}],
            ["docs__whoami", {}],
          ]),
        )) as string;
      } finally {
        await host.close();
      }
      expect(http.refused.some((r) => r.includes(TOKEN))).toBe(true);
      expect(out.split(" | ")).toMatchInlineSnapshot(`
        [
          "The connection to the MCP server 'docs' failed during the call of 'whoami' (Streamable HTTP error: Error POSTing to endpoint: refused: <hidden>); whether the call took effect is not known. It is made again at the next call of one of its tools.",
          "The connection to the MCP server 'docs' failed and could not be made again (Streamable HTTP error: Error POSTing to endpoint: refused: <hidden>). Try again later, or go on without it.",
        ]
      `);
      expect(JSON.stringify(events)).not.toContain(TOKEN);
      expect(JSON.stringify(model.doGenerateCalls)).not.toContain(TOKEN);
      // Refused at createHost: a ConfigError without the value.
      const err = await createHost({
        workers: { w: worker(["docs"]) },
        models: { m: model },
        mcpServers,
      }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ConfigError);
      expect((err as ConfigError).message).toMatchInlineSnapshot(`
        "Invalid configuration:
        ✖ MCP server 'docs' could not be started or listed: Streamable HTTP error: Error POSTing to endpoint: refused: <hidden> → at mcpServers.docs"
      `);
    } finally {
      process.off("warning", onWarning);
      await http.close();
    }
    expect(warnings.join("\n")).not.toContain(TOKEN);
  });
});

describe("calls in flight", () => {
  it(`runs at most ${MAX_CALLS_PER_SERVER} calls of one server at once; the rest wait in order; a waiting call of a stopped agent leaves`, async () => {
    let inFlight = 0;
    let most = 0;
    const started: number[] = [];
    let release!: () => void;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    const http = await startHttpMcpServer(TOKEN, (s) => {
      s.registerTool("slow", { inputSchema: { i: z.number() } }, async ({ i }) => {
        started.push(i);
        most = Math.max(most, ++inFlight);
        await gate;
        inFlight--;
        return text(String(i));
      });
    });
    const conn = new McpServerConnection(
      "slow",
      { url: http.url, headers: { Authorization: `Bearer ${TOKEN}` } },
      dir,
    );
    try {
      await conn.start();
      const signal = new AbortController().signal;
      const calls = Array.from({ length: 12 }, (_, i) => conn.call("slow", { i }, signal));
      const stop = new AbortController();
      const late = conn.call("slow", { i: 99 }, stop.signal);
      await vi.waitFor(() => {
        expect(inFlight).toBe(8);
        expect(conn.load).toEqual({ running: 8, waiting: 5 });
      }, WAIT);
      stop.abort(new Error("the agent stopped"));
      await expect(late).rejects.toThrow("the agent stopped");
      expect(conn.load).toEqual({ running: 8, waiting: 4 });
      release();
      const results = await Promise.all(calls);
      expect(results.map((r) => (r.content as { text: string }[])[0]!.text)).toEqual(
        Array.from({ length: 12 }, (_, i) => String(i)),
      );
      expect(most).toBe(8);
      expect([...started.slice(8)].sort((a, b) => a - b)).toEqual([8, 9, 10, 11]);
      expect(started).not.toContain(99);
      expect(conn.load).toEqual({ running: 0, waiting: 0 });
    } finally {
      await conn.close();
      await http.close();
    }
  });
});

describeWithBwrap("agent processes", () => {
  it("an LLM worker in its own process calls an MCP tool over its channel", async () => {
    const events: HostEvent[] = [];
    const host = await createHost({
      workers: { w: worker(["demo"], { isolation: "process" }) },
      models: { m: planModel() },
      mcpServers: { demo: demo() },
      onEvent: (e) => events.push(e),
    });
    try {
      await expect(host.run("w", plan([["demo__echo", { text: "from a process" }]]))).resolves.toBe(
        "echo: from a process",
      );
    } finally {
      await host.close();
    }
    expect(
      events.filter((e) => e.type === "mcp_call").map((e) => e.type === "mcp_call" && e.outcome),
    ).toEqual(["ok"]);
  });
});

describe("mountbox check", () => {
  const SECRET = "check-secret-value-77";

  function program(name: string, files: Record<string, string>): string {
    const root = join(dir, name);
    mkdirSync(join(root, "workers"), { recursive: true });
    for (const [f, body] of Object.entries(files)) writeFileSync(join(root, f), body);
    return root;
  }
  async function check(root: string, ...flags: string[]) {
    let stdout = "";
    const code = await runCheck([root, ...flags], {
      stdout: (t) => {
        stdout += t;
      },
      stderr: () => undefined,
    }).catch((e: unknown) => e);
    return { code, stdout };
  }

  it("lists the servers (kind, approval, workers) without starting them or showing env or header values", async () => {
    const marker = join(dir, "started.txt");
    const root = program("prog", {
      "program.yaml": [
        "model: m",
        "mcp_servers:",
        "  gh:",
        `    command: ${JSON.stringify(process.execPath)}`,
        `    args: ["-e", ${JSON.stringify(`require("fs").writeFileSync(${JSON.stringify(marker)}, "")`)}]`,
        `    env: { GITHUB_TOKEN: ${SECRET} }`,
        "  docs:",
        "    url: https://example.com/mcp",
        `    headers: { Authorization: "Bearer ${SECRET}" }`,
        "    approval: always",
        "  spare: { command: nothing }",
        "",
      ].join("\n"),
      "workers/triage.worker": "---\nmcp: [gh, docs]\n---\nTriage.\n",
      "workers/writer.worker": "---\nmcp: [docs]\n---\nWrite.\n",
    });
    const r = await check(root);
    expect(r.code).toBe(0);
    expect(r.stdout.slice(r.stdout.indexOf("MCP servers"))).toMatchInlineSnapshot(`
      "MCP servers (not started by check; env and header values not shown; a callee uses a server only if its caller may):
        server  kind   approval    workers (mcp)
        docs    http   every call  triage, writer
        gh      stdio  no          triage
        spare   stdio  no          none (not started)
      "
    `);
    expect(r.stdout).not.toContain(SECRET);
    const j = await check(root, "--json");
    expect(JSON.parse(j.stdout).mcpServers).toEqual([
      { name: "docs", kind: "http", approval: "always", workers: ["triage", "writer"] },
      { name: "gh", kind: "stdio", approval: "never", workers: ["triage"] },
      { name: "spare", kind: "stdio", approval: "never", workers: [] },
    ]);
    expect(j.stdout).not.toContain(SECRET);
    expect(existsSync(marker)).toBe(false);
  });

  it("names the file and key of a bad server or a worker's unknown server", async () => {
    const bad = program("bad-server", {
      "program.yaml": `mcp_servers:\n  docs: { url: "ftp://x", headers: { A: ${SECRET} } }\n`,
    });
    const r = await check(bad);
    expect((r.code as ConfigError).message).toMatchInlineSnapshot(`
      "Invalid configuration in program.yaml:
      ✖ expected an http(s) URL → at mcp_servers.docs.url"
    `);
    const unknown = program("bad-worker", {
      "program.yaml": "model: m\nmcp_servers:\n  docs: { url: https://example.com/mcp }\n",
      "workers/w.worker": "---\nmcp: [docs, nope]\n---\nHi.\n",
    });
    const r2 = await check(unknown);
    expect((r2.code as ConfigError).message).toMatchInlineSnapshot(`
      "Invalid configuration in workers/w.worker:
      ✖ no MCP server named 'nope' (MCP servers: docs) → at mcp[1]"
    `);
  });
});
