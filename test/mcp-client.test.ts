/**
 * MCP servers held by the host (DESIGN §10): a real stdio MCP server (the
 * SDK's `McpServer`, written here) started by `createHost`, whose tools an
 * LLM worker (driven by a mock model) is offered as `SERVER__TOOL` and calls
 * through its port. The thread never holds the connection nor the
 * server's environment; a callee gets only servers its caller has.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { MockLanguageModelV3 } from "ai/test";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigError, createHost as createBuiltHost, loadProgram } from "../dist/src/index.js";
import type { Host, HostEvent, HostOptions } from "../src/index.js";
import { serveAgentMcpCall } from "../src/mcp-client/mcp-calls.js";
import { connectMcpServers } from "../src/mcp-client/mcp-servers.js";
import { assertBuilt } from "./conformance/thread.js";
import { readToolResults } from "./helpers/tool-results.js";
import { makeTempDir, removeDir } from "./helpers/tree.js";

const createHost = createBuiltHost as unknown as (o: HostOptions) => Promise<Host>;

type CallOptions = Parameters<MockLanguageModelV3["doGenerate"]>[0];
type GenerateResult = Awaited<ReturnType<MockLanguageModelV3["doGenerate"]>>;

const usage = (): GenerateResult["usage"] => ({
  inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 1, text: 1, reasoning: undefined },
});
const callTool = (id: string, toolName: string, input: unknown): GenerateResult => ({
  content: [{ type: "tool-call", toolCallId: id, toolName, input: JSON.stringify(input) }],
  finishReason: { unified: "tool-calls", raw: undefined },
  usage: usage(),
  warnings: [],
});
const answer = (text: string): GenerateResult => ({
  content: [{ type: "text", text }],
  finishReason: { unified: "stop", raw: undefined },
  usage: usage(),
  warnings: [],
});
const systemOf = (o: CallOptions): string => {
  const first = o.prompt[0];
  return first?.role === "system" ? first.content : "";
};
const toolNames = (o: CallOptions) => (o.tools ?? []).map((t) => t.name).sort();

const SECRET = "mcp-secret-value-4711";
const HOST_SECRET = "host-only-secret-0815";

let dir: string;
let serverFile: string;

beforeAll(() => {
  assertBuilt();
  dir = makeTempDir("mountbox-mcp-client-");
  const require = createRequire(import.meta.url);
  const url = (s: string) => pathToFileURL(require.resolve(s)).href;
  serverFile = join(dir, "server.mjs");
  writeFileSync(
    serverFile,
    `import { McpServer } from ${JSON.stringify(url("@modelcontextprotocol/sdk/server/mcp.js"))};
import { StdioServerTransport } from ${JSON.stringify(url("@modelcontextprotocol/sdk/server/stdio.js"))};
import { z } from ${JSON.stringify(url("zod"))};
const server = new McpServer({ name: "demo", version: "1.0.0" });
server.registerTool("echo", { description: "Echoes its text.", inputSchema: { text: z.string() } },
  async ({ text }) => ({ content: [{ type: "text", text: "echo: " + text }] }));
server.registerTool("add", { description: "Adds two numbers.", inputSchema: { a: z.number(), b: z.number() } },
  async ({ a, b }) => ({ content: [{ type: "text", text: String(a + b) }] }));
server.registerTool("has_env", { description: "Whether an environment variable is set.", inputSchema: { name: z.string() } },
  async ({ name }) => ({ content: [{ type: "text", text: process.env[name] === undefined ? "unset" : "set:" + process.env[name].length } ] }));
server.registerTool("login", { description: "Fails echoing its token, as a careless server does." },
  async () => { throw new Error("auth failed for token " + process.env.MCP_SECRET); });
server.registerTool("whoami", { description: "Answers with its token in the text." },
  async () => ({ content: [{ type: "text", text: "token=" + process.env.MCP_SECRET + ";" }] }));
await server.connect(new StdioServerTransport());
`,
  );
  process.env.MOUNTBOX_TEST_HOST_SECRET = HOST_SECRET;
});

afterAll(() => {
  delete process.env.MOUNTBOX_TEST_HOST_SECRET;
  removeDir(dir);
});

const demo = () => ({
  command: process.execPath,
  args: [serverFile],
  env: { MCP_SECRET: SECRET },
});

/** The model: each worker's script, by its instructions. */
function scripted(): MockLanguageModelV3 {
  return new MockLanguageModelV3({
    doGenerate: async (o) => {
      const seen = readToolResults(o);
      const sys = systemOf(o);
      if (sys.includes("You add.")) {
        if (seen.length === 0) return callTool("c1", "demo__add", { a: 2, b: 40 });
        if (seen.length === 1) return callTool("c2", "demo__echo", { text: "hi" });
        return answer(`results: ${seen.join(" | ")}`);
      }
      if (sys.includes("You probe env.")) {
        if (seen.length === 0) return callTool("p1", "demo__has_env", { name: "MCP_SECRET" });
        if (seen.length === 1)
          return callTool("p2", "demo__has_env", { name: "MOUNTBOX_TEST_HOST_SECRET" });
        return answer(seen.join(" | "));
      }
      if (sys.includes("You boss.")) {
        if (seen.length === 0)
          return callTool("b1", "call_worker", { worker: "adder", input: "go" });
        return answer(`boss got: ${seen.join(" | ")}`);
      }
      if (sys.includes("You add thrice.")) {
        if (seen.length === 0)
          return {
            ...callTool("x1", "demo__add", { a: 1, b: 1 }),
            content: [1, 2, 3].map((i) => ({
              type: "tool-call" as const,
              toolCallId: `x${i}`,
              toolName: "demo__add",
              input: JSON.stringify({ a: i, b: 100 }),
            })),
          };
        return answer(`thrice: ${seen.join(" | ")}`);
      }
      if (sys.includes("You leak.")) {
        if (seen.length === 0) return callTool("l1", "demo__login", {});
        if (seen.length === 1) return callTool("l2", "demo__whoami", {});
        return answer(seen.join(" | "));
      }
      if (sys.includes("You try anyway.")) {
        if (seen.length === 0) return callTool("t1", "demo__add", { a: 1, b: 1 });
        return answer(`tried: ${seen.join(" | ")}`);
      }
      return answer("?");
    },
  });
}

describe("MCP servers held by the host", () => {
  it("offers an LLM worker its servers' tools (SERVER__TOOL) and serves their calls", async () => {
    const model = scripted();
    const events: HostEvent[] = [];
    const host = await createHost({
      workers: {
        adder: { instructions: "You add.", model: "m", mcp: ["demo"] },
        plain: { instructions: "You try anyway.", model: "m" },
      },
      models: { m: model },
      mcpServers: { demo: demo() },
      onEvent: (e) => events.push(e),
    });
    try {
      await expect(host.run("adder", "go")).resolves.toBe("results: 42 | echo: hi");
      // A worker not given the server is not offered its tools; its model's
      // call of one is refused by the SDK as an unknown tool.
      const out = (await host.run("plain", "go")) as string;
      expect(out).toMatch(/^tried: /);
      expect(out).not.toContain("2");
    } finally {
      await host.close();
    }
    const adderCalls = model.doGenerateCalls.filter((c) => systemOf(c).includes("You add."));
    expect(toolNames(adderCalls[0]!)).toEqual(
      expect.arrayContaining(["demo__add", "demo__echo", "demo__has_env"]),
    );
    const addTool = adderCalls[0]!.tools!.find((t) => t.name === "demo__add")!;
    expect(addTool).toMatchObject({ description: "Adds two numbers." });
    expect(JSON.stringify(addTool)).toContain('"a"');
    const plainCalls = model.doGenerateCalls.filter((c) => systemOf(c).includes("You try anyway."));
    expect(toolNames(plainCalls[0]!).filter((n) => n.startsWith("demo__"))).toEqual([]);
    const mcpEvents = events.filter((e) => e.type === "mcp_call");
    expect(mcpEvents.map((e) => e.type === "mcp_call" && [e.server, e.tool, e.outcome])).toEqual([
      ["demo", "add", "ok"],
      ["demo", "echo", "ok"],
    ]);
  });

  it("gives the server its own env (plus safe defaults), never the host's; the thread sees neither", async () => {
    const model = scripted();
    const host = await createHost({
      workers: { probe: { instructions: "You probe env.", model: "m", mcp: ["demo"] } },
      models: { m: model },
      mcpServers: { demo: demo() },
    });
    try {
      await expect(host.run("probe", "go")).resolves.toBe(`set:${SECRET.length} | unset`);
    } finally {
      await host.close();
    }
    // Everything the thread sent (its prompts and the tools it was given) lacks the secret.
    expect(JSON.stringify(model.doGenerateCalls)).not.toContain(SECRET);
  });

  it("hides the server's env values in its own answers: a tool error and a result (review)", async () => {
    const model = scripted();
    const host = await createHost({
      workers: { leaker: { instructions: "You leak.", model: "m", mcp: ["demo"] } },
      models: { m: model },
      mcpServers: { demo: demo() },
    });
    try {
      await expect(host.run("leaker", "go")).resolves.toBe(
        "Error from the tool: auth failed for token <hidden> | token=<hidden>;",
      );
    } finally {
      await host.close();
    }
    expect(JSON.stringify(model.doGenerateCalls)).not.toContain(SECRET);
  });

  it("a callee gets only the servers its caller has", async () => {
    const model = scripted();
    const host = await createHost({
      workers: {
        boss: { instructions: "You boss.", model: "m", delegates: ["adder"] },
        richBoss: {
          instructions: "You boss. Rich.",
          model: "m",
          delegates: ["adder"],
          mcp: ["demo"],
        },
        adder: { instructions: "You add.", model: "m", mcp: ["demo"] },
      },
      models: { m: model },
      mcpServers: { demo: demo() },
    });
    try {
      // The caller lacks the server: the callee is offered none of its tools.
      const out = (await host.run("boss", "go")) as string;
      expect(out).toMatch(/^boss got: /);
      expect(out).not.toContain("42");
      const adderCalls = model.doGenerateCalls.filter((c) => systemOf(c).includes("You add."));
      expect(toolNames(adderCalls[0]!).filter((n) => n.startsWith("demo__"))).toEqual([]);
      // A caller with the server: the callee has it.
      await expect(host.run("richBoss", "go")).resolves.toBe("boss got: results: 42 | echo: hi");
    } finally {
      await host.close();
    }
  });

  it("refuses a call host-side for a server the agent may not use", async () => {
    const conns = await connectMcpServers(new Map([["demo", demo()]]), new Set(["demo"]), dir);
    try {
      const hub = { emit: () => undefined } as never;
      const agent = {
        id: "a1",
        worker: "w",
        mcpServers: [] as string[],
        controller: new AbortController(),
      } as never;
      await expect(
        serveAgentMcpCall(hub, conns, agent, "demo", "add", { a: 1, b: 2 }),
      ).rejects.toThrow(/may not use the MCP server 'demo'/);
      const allowed = { ...(agent as object), mcpServers: ["demo"] } as never;
      await expect(serveAgentMcpCall(hub, conns, allowed, "demo", "nope", {})).rejects.toThrow(
        /has no tool 'nope'/,
      );
      await expect(
        serveAgentMcpCall(hub, conns, allowed, "demo", "add", { a: 1, b: 2 }),
      ).resolves.toBe("3");
    } finally {
      await conns.close();
    }
  });

  it("asks approval for a server with approval: always; a denial refuses the call", async () => {
    const model = scripted();
    const asked: unknown[] = [];
    const events: HostEvent[] = [];
    const host = await createHost({
      workers: { adder: { instructions: "You add.", model: "m", mcp: ["demo"] } },
      models: { m: model },
      mcpServers: { demo: { ...demo(), approval: "always" } },
      onApproval: (r) => {
        asked.push(r);
        return "deny";
      },
      onEvent: (e) => events.push(e),
    });
    try {
      const out = (await host.run("adder", "go")) as string;
      expect(out).toMatch(/^results: /);
      expect(out).toContain("not approved");
      expect(out).not.toContain("42");
    } finally {
      await host.close();
    }
    expect(asked[0]).toMatchObject({
      operation: "mcp",
      worker: "adder",
      path: "mcp:demo/add",
      mcp: { server: "demo", tool: "add", arguments: '{"a":2,"b":40}' },
    });
    expect(
      events.filter((e) => e.type === "mcp_call").map((e) => e.type === "mcp_call" && e.outcome),
    ).toEqual(["denied", "denied"]);
  });

  it("a 'once' answers one call: three calls at once are asked one by one, each with its arguments (review)", async () => {
    const asked: string[] = [];
    const host = await createHost({
      workers: { adder: { instructions: "You add thrice.", model: "m", mcp: ["demo"] } },
      models: { m: scripted() },
      mcpServers: { demo: { ...demo(), approval: "always" } },
      onApproval: async (r) => {
        asked.push(r.mcp?.arguments ?? "");
        await new Promise((res) => setTimeout(res, 50));
        return asked.length === 1 ? "once" : "deny";
      },
    });
    try {
      const out = (await host.run("adder", "go")) as string;
      // One ran (the approved one); two were refused.
      expect(out.match(/\b10[1-3]\b/g)?.length).toBe(1);
      expect(out.match(/not approved/g)?.length).toBe(2);
    } finally {
      await host.close();
    }
    expect(asked.sort()).toEqual(['{"a":1,"b":100}', '{"a":2,"b":100}', '{"a":3,"b":100}']);
  });

  it("a server that fails to start is a ConfigError at createHost naming it, without its env", async () => {
    const err = await createHost({
      workers: { adder: { instructions: "You add.", model: "m", mcp: ["broken"] } },
      models: { m: scripted() },
      mcpServers: {
        broken: {
          command: process.execPath,
          args: [join(dir, "missing.mjs")],
          env: { TOKEN: SECRET },
        },
      },
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).message).toContain("'broken'");
    expect((err as ConfigError).message).not.toContain(SECRET);
  });

  it("validates mcpServers and each worker's mcp at the edge", async () => {
    const err = await createHost({
      workers: { adder: { instructions: "You add.", model: "m", mcp: ["demo", "nope"] } },
      models: { m: scripted() },
      mcpServers: {
        demo: {
          command: process.execPath,
          args: [serverFile],
          approval: "sometimes",
          extra: 1,
        } as never,
        other: { url: "ftp://x" },
        both: { command: "x", url: "http://x" } as never,
      },
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    const paths = (err as ConfigError).issues.map((i) => i.path.join("."));
    expect(paths).toEqual(
      expect.arrayContaining([
        "mcpServers.demo.approval",
        "mcpServers.demo.extra",
        "mcpServers.other.url",
        "mcpServers.both",
        "workers.adder.mcp.1",
      ]),
    );
  });

  it("reads mcp_servers from program.yaml and mcp from a .worker file", async () => {
    const prog = join(dir, "prog");
    mkdirSync(join(prog, "workers"), { recursive: true });
    writeFileSync(
      join(prog, "program.yaml"),
      `name: mcp-demo\nmodel: m\nmcp_servers:\n  demo:\n    command: ${JSON.stringify(process.execPath)}\n    args: [${JSON.stringify(serverFile)}]\n    approval: never\n`,
    );
    writeFileSync(join(prog, "workers", "adder.worker"), "---\nmcp: [demo]\n---\nYou add.\n");
    const options = await loadProgram(prog);
    expect(options.mcpServers).toEqual({
      demo: { command: process.execPath, args: [serverFile], approval: "never" },
    });
    expect(options.workers.adder?.mcp).toEqual(["demo"]);
    const host = await createHost({ ...options, models: { m: scripted() } });
    try {
      await expect(host.run("adder", "go")).resolves.toBe("results: 42 | echo: hi");
    } finally {
      await host.close();
    }
    writeFileSync(join(prog, "workers", "adder.worker"), "---\nmcp: demo\n---\nYou add.\n");
    await expect(loadProgram(prog)).rejects.toThrow(/mcp/);
  });
});
