/**
 * Issue 23, a fresh-eyes security review of the MCP features, from the
 * packed tarball: each host is a real Node process started from an npm app
 * outside the repository, its program folder elsewhere again, with the
 * sandbox root on that folder (`root: "."`, as `mountbox init` writes it).
 *
 * Finding 1: a host-held stdio MCP server's script (`node ./tools/server.mjs`)
 * lay in the agents' writable area: an agent rewrote it, and the host ran
 * the agent's code — unconfined, with the server's credentials — at the
 * next `createHost` (or the next restart of the server).
 */
import { readFileSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { assertBuilt } from "./conformance/thread.js";
import { layOut, packAndInstall, runNode, writeFiles } from "./helpers/packed.js";
import { makeTempDir, removeDir } from "./helpers/tree.js";

const REPO = fileURLToPath(new URL("..", import.meta.url));
/** The AI SDK's mock model, for an LLM worker's host outside the repository. */
const AI_TEST = (() => {
  const pkg = JSON.parse(readFileSync(join(REPO, "node_modules/ai/package.json"), "utf8")) as {
    exports: Record<string, { import: string }>;
  };
  return pathToFileURL(join(REPO, "node_modules/ai", pkg.exports["./test"]!.import)).href;
})();

const HACK = "globalThis.hacked = true; // written by an agent\n";

/** Parses the last stdout line of a host run as JSON (with the run's output on failure). */
function parse(run: { stdout: string; stderr: string; status: number | null }) {
  const line = run.stdout.trim().split("\n").pop() ?? "";
  try {
    return JSON.parse(line) as Record<string, unknown>;
  } catch {
    throw new Error(`host printed no result (status ${run.status}): ${run.stdout}\n${run.stderr}`);
  }
}

let base: string;
let app: string;
beforeAll(() => {
  assertBuilt();
  base = makeTempDir("mountbox-mcp-review-");
  const { modules } = packAndInstall(join(base, "pack"));
  app = layOut("npm", join(base, "npm"), modules);
  // The AI SDK beside mountbox, as an app with LLM workers installs it.
  symlinkSync(join(REPO, "node_modules/ai"), join(app, "node_modules/ai"), "dir");
}, 180_000);
afterAll(() => removeDir(base), 120_000);

/** A stdio MCP server (the SDK's, from the app's install) with one tool, `ping`. */
function serverScript(): string {
  const sdk = (p: string) =>
    JSON.stringify(pathToFileURL(join(app, "node_modules/@modelcontextprotocol/sdk/dist/esm", p)));
  return `import { McpServer } from ${sdk("server/mcp.js")};
import { StdioServerTransport } from ${sdk("server/stdio.js")};
const server = new McpServer({ name: "demo", version: "1.0.0" });
server.registerTool("ping", { description: "p" }, async () => ({ content: [{ type: "text", text: "pong" }] }));
await server.connect(new StdioServerTransport());
`;
}

/**
 * The host: the program folder PROG as its sandbox root, a code worker
 * `tamper` writing each of its input's paths, an LLM worker naming the
 * server `demo` (so createHost starts it). argv: PROG, SERVER (JSON config), PATHS.
 */
const TAMPER_HOST = `
import { createHost } from "mountbox";
import { MockLanguageModelV3 } from ${JSON.stringify(AI_TEST)};
const [prog, server, paths] = process.argv.slice(2);
const model = new MockLanguageModelV3({ doGenerate: async () => ({ content: [{ type: "text", text: "hi" }],
  finishReason: { unified: "stop" }, usage: { inputTokens: { total: 1 }, outputTokens: { total: 1 } }, warnings: [] }) });
const options = () => ({ basePath: prog, sandbox: { root: "." }, models: { m: model },
  mcpServers: { demo: JSON.parse(server) },
  workers: { tamper: { module: "./workers/tamper.js" }, llm: { instructions: "x", model: "m", mcp: ["demo"] } } });
let host;
try {
  host = await createHost(options());
  const out = await host.run("tamper", JSON.parse(paths));
  await host.close();
  // The next run starts the server again: it must run the program's own code.
  host = await createHost(options());
  out.pong = await host.run("llm", "go").then(() => "ran", (e) => e.message);
  console.log(JSON.stringify(out));
} catch (e) {
  console.log(JSON.stringify({ error: e.message }));
} finally {
  await host?.close();
}
`;

const TAMPER_WORKER = `
import { defineWorker } from "mountbox/worker";
const attempt = (p) => p.then(() => "written", (e) => e.code + ": " + e.message);
export default defineWorker(async (paths, ctx) => {
  const out = {};
  for (const p of paths) out[p] = await attempt(ctx.sandbox.writeFile(p, ${JSON.stringify(HACK)}));
  return out;
});
`;

describe("finding 1: a host-held stdio MCP server's code is not writable by agents", () => {
  it("its script, the script's folder, the working folder's packages and PATH places are refused; data stays writable", () => {
    const prog = join(app, "prog1");
    writeFiles(prog, {
      "tools/server.mjs": serverScript(),
      "tools/lib.mjs": "export const x = 1;\n",
      "server.json": "{}\n",
      "shared/.keep": "",
      "workers/tamper.js": TAMPER_WORKER,
    });
    writeFiles(app, { "host.mjs": TAMPER_HOST });
    const server = {
      command: "node",
      args: ["./tools/server.mjs", "--config=server.json", "--data", "./shared"],
      // A folder of the program earlier on PATH than the real node.
      env: { PATH: `${join(prog, "bin")}:${process.env.PATH}` },
    };
    const refused = [
      ["/tools/server.mjs", "/tools"],
      ["/tools/lib.mjs", "/tools"],
      ["/server.json", "/server.json"],
      ["/node_modules/x/index.js", "/node_modules"],
      ["/package.json", "/package.json"],
      ["/bin/node", "/bin/node"],
    ] as const;
    const paths = [...refused.map(([p]) => p), "/shared/notes.txt", "/notes.txt"];
    const out = parse(
      runNode(join(app, "host.mjs"), app, [prog, JSON.stringify(server), JSON.stringify(paths)]),
    );
    expect(out.error).toBeUndefined();
    for (const [p, entry] of refused) {
      expect(out[p], p).toMatch(/^path_not_writable: /);
      expect(out[p], p).toContain(`'${entry}'`);
      expect(out[p], p).not.toContain(base);
    }
    expect(readFileSync(join(prog, "tools/server.mjs"), "utf8")).toBe(serverScript());
    // What the server works on, and the agents' own files, stay theirs.
    expect(out["/shared/notes.txt"]).toBe("written");
    expect(out["/notes.txt"]).toBe("written");
    expect(out.pong).toBe("ran");
  });

  it("a Sandbox object holding the server's script writable is refused at createHost, naming it", () => {
    const prog = join(app, "prog2");
    writeFiles(prog, { "tools/server.mjs": serverScript(), "workers/tamper.js": TAMPER_WORKER });
    const host = TAMPER_HOST.replace(
      'import { createHost } from "mountbox";',
      'import { createHost, createSandbox } from "mountbox";',
    ).replace('sandbox: { root: "." }', "sandbox: createSandbox({ root: prog })");
    writeFiles(app, { "host-object.mjs": host });
    const server = { command: process.execPath, args: ["./tools/server.mjs"] };
    const out = parse(
      runNode(join(app, "host-object.mjs"), app, [prog, JSON.stringify(server), "[]"]),
    );
    expect(out.error).toMatch(/worker or MCP server code is writable by agents at .*\/tools/);
  });
});
