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
 *
 * Finding 3: `mountbox mcp --audit FILE` took a file inside the served
 * folders: the client could read its own trail, forge lines, or replace the
 * file (an atomic write_file), after which every later line went to the
 * unlinked file. createHost refused that for `auditLog`; now so does
 * `mountbox mcp`, for the command line's folders and for client roots.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { ListRootsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { assertBuilt } from "./conformance/thread.js";
import { callTool, connectStdio, installPackedCli, waitUntil } from "./helpers/mcp.js";
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

  it("a script reached through a link is protected where it really is", () => {
    const prog = join(app, "prog3");
    writeFiles(prog, {
      "lib/srv/server.mjs": serverScript(),
      "lib/srv/helper.mjs": "export const x = 1;\n",
      "workers/tamper.js": TAMPER_WORKER,
    });
    symlinkSync("lib/srv", join(prog, "srv"), "dir");
    writeFiles(app, { "host.mjs": TAMPER_HOST });
    const server = { command: process.execPath, args: ["./srv/server.mjs"] };
    const paths = ["/lib/srv/server.mjs", "/lib/srv/helper.mjs", "/srv/server.mjs", "/lib/x.txt"];
    const out = parse(
      runNode(join(app, "host.mjs"), app, [prog, JSON.stringify(server), JSON.stringify(paths)]),
    );
    expect(out.error).toBeUndefined();
    for (const p of paths.slice(0, 3)) expect(out[p], p).toMatch(/^path_not_writable: /);
    expect(out["/lib/x.txt"]).toBe("written");
    expect(readFileSync(join(prog, "lib/srv/server.mjs"), "utf8")).toBe(serverScript());
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

describe("finding 3: mountbox mcp --audit never lies where the client can reach it", () => {
  const run = (args: string[]) => {
    const { bin, cwd } = installPackedCli(base);
    return spawnSync(process.execPath, [bin, "mcp", ...args], { cwd, encoding: "utf8", input: "" });
  };

  it("an --audit file inside --root, a mount, or reached through a link is refused before serving", () => {
    const dir = join(base, "audit1");
    mkdirSync(join(dir, "root"), { recursive: true });
    mkdirSync(join(dir, "docs"), { recursive: true });
    mkdirSync(join(dir, "logs"), { recursive: true });
    symlinkSync(join(dir, "root"), join(dir, "logs/to-root"));
    const root = join(dir, "root");
    for (const [args, at] of [
      [["--root", root, "--audit", join(root, "audit.log")], "/audit.log"],
      [["--root", root, "--readonly", "--audit", join(root, "sub/../a.log")], "/a.log"],
      [
        [
          "--root",
          root,
          "--mount",
          `${join(dir, "docs")}:/docs:ro`,
          "--audit",
          join(dir, "docs/a.log"),
        ],
        "/docs/a.log",
      ],
      [["--root", root, "--audit", join(dir, "logs/to-root/b.log")], "/b.log"],
    ] as const) {
      const r = run([...args]);
      expect([r.status, r.stderr], args.join(" ")).toEqual([
        2,
        expect.stringContaining(`--audit: the file lies inside the served sandbox (at '${at}')`),
      ]);
      expect(r.stderr).not.toContain(dir);
    }
    // Outside the served folders it is taken.
    const ok = run(["--root", root, "--audit", join(dir, "logs/audit.log")]);
    expect(ok.status).toBe(0);
  });

  it("client roots holding the --audit file are not served; each call says why", async () => {
    const { bin, cwd } = installPackedCli(base);
    const dir = join(base, "audit2");
    mkdirSync(join(dir, "a"), { recursive: true });
    mkdirSync(join(dir, "b"), { recursive: true });
    writeFileSync(join(dir, "a/x.txt"), "x\n");
    let roots = [join(dir, "a"), join(dir, "b")];
    let err = "";
    const { client } = await connectStdio(cwd, bin, ["mcp", "--audit", join(dir, "b/audit.log")], {
      capabilities: { roots: { listChanged: true } },
      prepare: (c) =>
        c.setRequestHandler(ListRootsRequestSchema, async () => ({
          roots: roots.map((r) => ({ uri: pathToFileURL(r).href })),
        })),
      onStderr: (t) => {
        err += t;
      },
    });
    try {
      await waitUntil(() => err.includes("roots unusable"));
      const w = await callTool(client, "write_file", { path: "/b/audit.log", content: "forged" });
      expect(w.isError).toBe(true);
      expect(w.text).toContain("the client's roots hold the --audit file");
      // Roots without it are served.
      roots = [join(dir, "a")];
      await client.sendRootsListChanged();
      await waitUntil(() => err.includes("roots taken"));
      expect((await callTool(client, "read_text_file", { path: "/x.txt" })).text).toBe("x\n");
    } finally {
      await client.close();
    }
    // The tool calls' lines are in the log, and nothing else wrote it.
    const lines = readFileSync(join(dir, "b/audit.log"), "utf8").trim().split("\n");
    expect(lines.map((l) => JSON.parse(l).tool)).toEqual(["write_file", "read_text_file"]);
  });

  it("a path with line breaks and control characters stays on its one JSON line", async () => {
    const { bin, cwd } = installPackedCli(base);
    const dir = join(base, "audit3");
    mkdirSync(join(dir, "root"), { recursive: true });
    const log = join(dir, "audit.log");
    const { client } = await connectStdio(cwd, bin, [
      "mcp",
      "--root",
      join(dir, "root"),
      "--audit",
      log,
    ]);
    const evil = '/a\n{"time":"forged","tool":"x"}\r\u001b[2J\u2028.txt';
    try {
      await callTool(client, "write_file", { path: evil, content: "x" });
    } finally {
      await client.close();
    }
    const lines = readFileSync(log, "utf8").split("\n").filter(Boolean);
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toMatchObject({ tool: "write_file", path: evil });
  });
});
