/**
 * `mountbox mcp --http PORT` (Streamable HTTP on 127.0.0.1) driven by the
 * SDK's real `Client` over `StreamableHTTPClientTransport`, DNS rebinding
 * refused, several clients at once, Ctrl-C; bounds, MCP roots, resources,
 * `--audit`, and `mountbox mcp <program-dir> --worker NAME` serving that
 * worker's sandbox. Runs the bin of the packed package, installed by npm
 * into a temp app, from a folder elsewhere.
 */
import { type ChildProcess, spawnSync } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { request } from "node:http";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { ListRootsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  callTool,
  connectHttp as connectHttpPort,
  connectStdio,
  installPackedCli,
  type PackedCli,
  startHttp,
  waitUntil,
} from "./helpers/mcp.js";
import { makeTempDir, removeDir } from "./helpers/tree.js";

let base: string;
let root: string;
let cli: PackedCli;
let server: ChildProcess;
let port: number;

async function call(client: Client, name: string, args: Record<string, unknown>) {
  const { isError, text } = await callTool(client, name, args);
  return { isError, text };
}

function connectHttp(): Promise<Client> {
  return connectHttpPort(port);
}

/** A client of the installed bin run with `args` over stdio. */
function mcpStdio(args: string[], opts: Parameters<typeof connectStdio>[3] = {}) {
  return connectStdio(cli.cwd, cli.bin, ["mcp", ...args], opts);
}

/** A raw POST of an initialize request with the given headers; resolves with the status. */
function rawInitialize(headers: Record<string, string>, path = "/mcp"): Promise<number> {
  const body = JSON.stringify({
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: {
      protocolVersion: "2025-06-18",
      capabilities: {},
      clientInfo: { name: "x", version: "1" },
    },
  });
  return new Promise((res, rej) => {
    const req = request(
      {
        host: "127.0.0.1",
        port,
        path,
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          ...headers,
        },
      },
      (r) => {
        r.resume();
        res(r.statusCode ?? 0);
      },
    );
    req.on("error", rej);
    req.end(body);
  });
}

beforeAll(async () => {
  base = makeTempDir("mountbox-mcp-http-");
  root = join(base, "root");
  mkdirSync(join(root, "src"), { recursive: true });
  writeFileSync(join(root, "src/a.ts"), "export const a = 1;\n");
  cli = installPackedCli(base);
  const http = await startHttp(cli, ["mcp", "--root", root]);
  ({ server, port } = http);
  expect(http.stderr()).not.toContain(base);
});
afterAll(() => {
  server?.kill("SIGKILL");
  if (base) removeDir(base);
});

describe("mountbox mcp --http", () => {
  it("serves the tools over Streamable HTTP, to several clients at once", async () => {
    const clients = await Promise.all(Array.from({ length: 4 }, () => connectHttp()));
    const { tools } = await clients[0]!.listTools();
    expect(tools.map((t) => t.name)).toContain("read_text_file");
    const reads = await Promise.all(
      clients.map((c) => call(c, "read_text_file", { path: "/src/a.ts" })),
    );
    expect(reads.map((r) => r.text)).toEqual(Array(4).fill("export const a = 1;\n"));
    await call(clients[1]!, "write_file", { path: "/src/b.ts", content: "b\n" });
    expect(readFileSync(join(root, "src/b.ts"), "utf8")).toBe("b\n");
    const out = await call(clients[2]!, "read_text_file", { path: "/../etc/passwd" });
    expect(out.isError).toBe(true);
    expect(out.text).not.toContain(base);
    await Promise.all(clients.map((c) => c.close()));
  });

  it("refuses another Host or Origin (DNS rebinding), other paths, and requests without a session", async () => {
    expect(await rawInitialize({})).toBe(200);
    expect(await rawInitialize({ host: `evil.example:${port}` })).toBe(403);
    expect(await rawInitialize({ host: `localhost:${port + 1}` })).toBe(403);
    expect(await rawInitialize({ origin: "http://evil.example" })).toBe(403);
    expect(await rawInitialize({ origin: `http://localhost:${port}` })).toBe(200);
    expect(await rawInitialize({}, "/other")).toBe(404);
    expect(await rawInitialize({ "mcp-session-id": "nope" })).toBe(404);
  });

  it("Ctrl-C ends it with 0", async () => {
    const done = new Promise<number | null>((res) => server.once("exit", (c) => res(c)));
    server.kill("SIGINT");
    expect(await done).toBe(0);
  });
});

describe("bounds a review found: answers fit one message, patterns and paths are capped", () => {
  it("cuts a big read with a note, refuses too many patterns, paths and big media; a huge request ends the server cleanly", async () => {
    const big = join(base, "big");
    mkdirSync(big);
    writeFileSync(join(big, "six.txt"), "x".repeat(6 * 1024 * 1024));
    writeFileSync(join(big, "four.png"), Buffer.alloc(4 * 1024 * 1024));
    const { client, transport } = await mcpStdio(["--root", big]);
    const r = await call(client, "read_text_file", { path: "/six.txt" });
    expect(r.isError).toBe(false);
    expect(r.text.length).toBeLessThan(4.5 * 1024 * 1024);
    expect(r.text).toMatch(
      /\[cut: 6,291,456 characters are more than one answer holds; read a part/,
    );
    // Still connected.
    expect((await call(client, "list_directory", { path: "/" })).text).toBe(
      "[FILE] four.png\n[FILE] six.txt",
    );
    const media = await call(client, "read_media_file", { path: "/four.png" });
    expect([media.isError, media.text]).toEqual([true, expect.stringContaining("file_too_large")]);
    const many = await call(client, "search_files", {
      path: "/",
      pattern: "**",
      excludePatterns: Array.from({ length: 65 }, (_, i) => `p${i}`),
    });
    expect(many).toEqual({
      isError: true,
      text: "Error [invalid_request]: excludePatterns has 65 patterns; give at most 64 (a folder's name leaves out everything below it)",
    });
    const paths = await call(client, "read_multiple_files", {
      paths: Array.from({ length: 51 }, () => "/six.txt"),
    });
    expect(paths.text).toBe(
      "Error [invalid_request]: 51 paths; read at most 50 at once (call again for the rest)",
    );
    // Over the SDK's 10 MiB message limit: the connection ends, the server exits 0.
    const exited = new Promise<number | null>((res) => {
      const pid = transport.pid;
      const poll = setInterval(() => {
        try {
          process.kill(pid as number, 0);
        } catch {
          clearInterval(poll);
          res(0);
        }
      }, 50);
    });
    await client
      .callTool({
        name: "write_file",
        arguments: { path: "/w.txt", content: "y".repeat(11 * 1024 * 1024) },
      })
      .catch(() => undefined);
    expect(await exited).toBe(0);
  });
});

describe("MCP roots: no --root, the client's folders", () => {
  it("serves the client's roots (first as /, others by name), follows changes, narrows with --readonly", async () => {
    const a = join(base, "root-a");
    const b = join(base, "docs");
    mkdirSync(a);
    mkdirSync(b);
    writeFileSync(join(a, "x.txt"), "in a\n");
    writeFileSync(join(b, "y.md"), "in docs\n");
    let roots = [pathToFileURL(a).href, pathToFileURL(b).href];
    let err = "";
    const { client } = await mcpStdio([], {
      capabilities: { roots: { listChanged: true } },
      prepare: (c) =>
        c.setRequestHandler(ListRootsRequestSchema, async () => ({
          roots: roots.map((uri) => ({ uri })),
        })),
      onStderr: (t) => {
        err += t;
      },
    });
    await waitUntil(() => err.includes("roots taken"));
    expect((await call(client, "read_text_file", { path: "/x.txt" })).text).toBe("in a\n");
    expect((await call(client, "read_text_file", { path: "/docs/y.md" })).text).toBe("in docs\n");
    // (/docs lies under /: one readable area.)
    expect((await call(client, "list_allowed_directories", {})).text).toBe(
      "Allowed directories:\n/",
    );
    // The client narrows its roots: only docs, now as '/'.
    roots = [pathToFileURL(b).href];
    err = "";
    await client.sendRootsListChanged();
    await waitUntil(() => err.includes("roots taken"));
    expect((await call(client, "read_text_file", { path: "/y.md" })).text).toBe("in docs\n");
    const gone = await call(client, "read_text_file", { path: "/x.txt" });
    expect(gone.isError).toBe(true);
    expect(gone.text).not.toContain(base);
    expect(err).not.toContain(base);
    await client.close();
    // --readonly holds whatever the client offers.
    let roErr = "";
    const { client: ro } = await mcpStdio(["--readonly"], {
      capabilities: { roots: {} },
      prepare: (c) =>
        c.setRequestHandler(ListRootsRequestSchema, async () => ({
          roots: [{ uri: pathToFileURL(a).href }],
        })),
      onStderr: (t) => {
        roErr += t;
      },
    });
    await waitUntil(() => roErr.includes("roots taken"));
    const w = await call(ro, "write_file", { path: "/new.txt", content: "n" });
    expect([w.isError, w.text]).toEqual([true, expect.stringContaining("path_not_writable")]);
    await ro.close();
  });

  it("without roots from the client, every call says how to serve a folder", async () => {
    const { client } = await mcpStdio([]);
    const r = await call(client, "list_directory", { path: "/" });
    expect(r).toEqual({
      isError: true,
      text: "Error [invalid_config]: Invalid configuration:\n✖ No folder is served: the client does not offer roots; start mountbox mcp with --root DIR.",
    });
    await client.close();
  });
});

describe("resources: mountbox:///…", () => {
  it("lists readable files as mountbox:/// URIs and reads them; refusals name no host path", async () => {
    writeFileSync(join(root, "src/na me.md"), "# spaced\n");
    writeFileSync(join(base, "outside.txt"), "SECRET\n");
    symlinkSync(join(base, "outside.txt"), join(root, "out-link.txt"));
    const { client } = await mcpStdio(["--root", root]);
    const { resources } = await client.listResources();
    expect(resources.map((r) => r.uri)).toEqual(
      expect.arrayContaining(["mountbox:///src/a.ts", "mountbox:///src/na%20me.md"]),
    );
    const read = await client.readResource({ uri: "mountbox:///src/na%20me.md" });
    expect(read.contents[0]).toMatchObject({ text: "# spaced\n", mimeType: "text/markdown" });
    for (const uri of [
      "mountbox:///out-link.txt",
      "mountbox:///../../outside.txt",
      "mountbox:///%00",
    ]) {
      const err = await client.readResource({ uri }).catch((e: Error) => e);
      expect(err, uri).toBeInstanceOf(Error);
      expect(String((err as Error).message), uri).not.toContain(base);
      expect(String((err as Error).message), uri).not.toContain("SECRET");
    }
    await client.close();
  });
});

describe("mountbox mcp --audit FILE", () => {
  it("appends a JSON line per tool call: tool, virtual path, outcome, code", async () => {
    const audit = join(base, "mcp-audit.jsonl");
    const { client } = await mcpStdio(["--root", root, "--readonly", "--audit", audit]);
    await call(client, "read_text_file", { path: "/src/a.ts" });
    await call(client, "write_file", { path: "/src/c.ts", content: "c" });
    await client.close();
    const lines = readFileSync(audit, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines.map(({ time, ...rest }) => [typeof time, rest])).toEqual([
      ["string", { type: "tool_call", tool: "read_text_file", path: "/src/a.ts", outcome: "ok" }],
      [
        "string",
        {
          type: "tool_call",
          tool: "write_file",
          path: "/src/c.ts",
          outcome: "error",
          code: "path_not_writable",
        },
      ],
    ]);
    expect(readFileSync(audit, "utf8")).not.toContain(base);
  });
});

describe("mountbox mcp <program-dir> --worker NAME", () => {
  it("serves the sandbox that worker has at the top of the program", async () => {
    const prog = join(base, "prog");
    mkdirSync(join(prog, "src"), { recursive: true });
    mkdirSync(join(prog, "reports"));
    writeFileSync(join(prog, "src/x.ts"), "x\n");
    writeFileSync(join(prog, "w.js"), "export default 1;\n");
    writeFileSync(
      join(prog, "program.yaml"),
      [
        'sandbox: { root: "." }',
        "workers:",
        "  main: { module: ./w.js }",
        "  analyser: { module: ./w.js, sandbox: { restrict: /src, readonly: true } }",
        "",
      ].join("\n"),
    );
    const { client } = await mcpStdio([prog, "--worker", "analyser"]);
    expect((await call(client, "read_text_file", { path: "/src/x.ts" })).text).toBe("x\n");
    const w = await call(client, "write_file", { path: "/src/y.ts", content: "y" });
    expect(w.isError).toBe(true);
    const r = await call(client, "read_text_file", { path: "/program.yaml" });
    expect(r.isError).toBe(true);
    expect(r.text).toContain("/src");
    await client.close();
  });

  it("serves a program with LLM workers (no model needed to serve it): what mountbox init writes", async () => {
    const prog = join(base, "prog-init");
    const init = spawnSync(process.execPath, [cli.bin, "init", prog], {
      cwd: cli.cwd,
      encoding: "utf8",
    });
    expect(init.status, init.stderr).toBe(0);
    const workers = readdirSync(join(prog, "workers"));
    expect(workers.some((f) => f.endsWith(".worker"))).toBe(true);
    for (const args of [
      [prog],
      [prog, "--worker", workers.find((f) => f.endsWith(".worker"))!.replace(/\.worker$/, "")],
    ]) {
      const { client } = await mcpStdio(args);
      const r = await call(client, "list_allowed_paths", {});
      expect(r.isError, r.text).toBe(false);
      expect(r.text).not.toContain(base);
      await client.close();
    }
  });

  it("keeps the program's code as a run keeps it: no worker module or package it imports is writable", async () => {
    const prog = join(base, "prog-code");
    mkdirSync(join(prog, "lib"), { recursive: true });
    mkdirSync(join(prog, "node_modules", "pkg"), { recursive: true });
    writeFileSync(join(prog, "main.js"), 'import "pkg";\nexport default 1;\n');
    writeFileSync(join(prog, "lib", "other.js"), "export default 2;\n");
    writeFileSync(join(prog, "node_modules", "pkg", "package.json"), '{"name":"pkg"}');
    writeFileSync(join(prog, "node_modules", "pkg", "index.js"), "export {};\n");
    writeFileSync(
      join(prog, "program.yaml"),
      [
        'sandbox: { root: "." }',
        "workers:",
        "  main: { module: ./main.js, dependencies: [pkg] }",
        "  other: { module: ./lib/other.js }",
        "",
      ].join("\n"),
    );
    const { client } = await mcpStdio([prog]);
    for (const path of ["/main.js", "/lib/other.js", "/node_modules/pkg/index.js"]) {
      const w = await call(client, "write_file", { path, content: "process.exit(7)" });
      expect(w.isError, path).toBe(true);
      expect(w.text, path).toContain("protected");
      expect(w.text, path).not.toContain(base);
    }
    expect(readFileSync(join(prog, "lib", "other.js"), "utf8")).toBe("export default 2;\n");
    // The rest of the root stays writable.
    expect((await call(client, "write_file", { path: "/notes.md", content: "n" })).isError).toBe(
      false,
    );
    await client.close();
  });
});
