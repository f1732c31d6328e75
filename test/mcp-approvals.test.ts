/**
 * Approvals in `mountbox mcp <program-dir>` (issue 23): the built CLI
 * spawned and driven by the SDK's real `Client` over stdio (and once over
 * Streamable HTTP), on a program whose `/inbox` asks approval for writes and
 * `/vault` for reads. `--approve ask` asks through MCP elicitation (once,
 * session, deny; decline and cancel deny), refuses a client without
 * elicitation with a message saying how to allow it; `all` and `none` never
 * ask. The question names the virtual path only, escaped; every decision is
 * in the `--audit` log; dynamic expansion asks the same way, bounded by the
 * ceiling. Runs the packed package's bin from an npm app (test/helpers/mcp.ts).
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  type CallToolResult,
  ElicitRequestSchema,
  type ElicitResult,
} from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { installPackedCli } from "./helpers/mcp.js";

/** The packed package's bin, installed in an npm app; servers run from elsewhere (CWD). */
let CLI: string;
let CWD: string;

let base: string;
/** The program: `/inbox` asks approval to write, `/vault` to read. */
let prog: string;
/** A program with dynamic expansion up to `/out`, its worker restricted to `/src`. */
let dyn: string;

/** How the test's user answers one question. */
type Answer =
  | "once"
  | "session"
  | "deny"
  | "decline"
  | "cancel"
  | { content: Record<string, string> };

interface Session {
  client: Client;
  /** The messages of the questions asked so far. */
  asked: string[];
  /** The answers still to give (a question beyond them is declined). */
  answers: Answer[];
}

/** A client that can be asked (answering `answers` in turn), or not (`null`). */
function makeClient(answers: Answer[] | null): Session {
  const session: Session = {
    client: new Client(
      { name: "approvals-test", version: "1" },
      answers === null ? {} : { capabilities: { elicitation: { form: {} } } },
    ),
    asked: [],
    answers: answers ?? [],
  };
  if (answers !== null)
    session.client.setRequestHandler(ElicitRequestSchema, async (req): Promise<ElicitResult> => {
      session.asked.push(req.params.message);
      const a = session.answers.shift() ?? "decline";
      if (a === "decline" || a === "cancel") return { action: a };
      return { action: "accept", content: typeof a === "string" ? { decision: a } : a.content };
    });
  return session;
}

async function connect(args: string[], answers: Answer[] | null): Promise<Session> {
  const session = makeClient(answers);
  await session.client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [CLI, "mcp", ...args],
      cwd: CWD,
      stderr: "pipe",
    }),
  );
  return session;
}

async function call(s: Session, name: string, args: Record<string, unknown>) {
  const r = (await s.client.callTool({ name, arguments: args })) as CallToolResult;
  const text = r.content.map((c) => (c.type === "text" ? c.text : `[${c.type}]`)).join("\n");
  return { isError: r.isError === true, text };
}

/** A control character other than a line feed, or a bidi override. */
const RAW_CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202e]/u;

const write = (s: Session, path: string, content = "x") => call(s, "write_file", { path, content });

beforeAll(() => {
  base = mkdtempSync(join(tmpdir(), "mountbox-mcp-approvals-"));
  ({ bin: CLI, cwd: CWD } = installPackedCli(base));
  prog = join(base, "prog");
  for (const d of ["inbox", "vault", "src", "inboxx"])
    mkdirSync(join(prog, d), { recursive: true });
  writeFileSync(join(prog, "vault/s.txt"), "secret\n");
  writeFileSync(join(prog, "src/x.ts"), "x\n");
  writeFileSync(join(prog, "w.js"), "export default 1;\n");
  // Links in the unflagged root leading into the flagged areas.
  symlinkSync("vault/s.txt", join(prog, "peek.txt"));
  symlinkSync("inbox/target.txt", join(prog, "drop.txt"));
  symlinkSync("vault", join(prog, "vlink"));
  symlinkSync("peek.txt", join(prog, "chain.txt"));
  writeFileSync(
    join(prog, "program.yaml"),
    [
      "sandbox:",
      '  root: "."',
      "  mounts:",
      '    - { source: "./inbox", target: "/inbox", write_approval: true }',
      '    - { source: "./vault", target: "/vault", read_approval: true }',
      "workers:",
      "  main: { module: ./w.js }",
      "",
    ].join("\n"),
  );
  dyn = join(base, "dyn");
  for (const d of ["src", "out", "other"]) mkdirSync(join(dyn, d), { recursive: true });
  writeFileSync(join(dyn, "src/a.ts"), "a\n");
  writeFileSync(join(dyn, "out/o.txt"), "o\n");
  writeFileSync(join(dyn, "out/p.txt"), "p\n");
  writeFileSync(join(dyn, "other/x.txt"), "x\n");
  writeFileSync(join(dyn, "w.js"), "export default 1;\n");
  writeFileSync(
    join(dyn, "program.yaml"),
    [
      'sandbox: { root: ".", dynamic: { enabled: true, ceiling: [/src, /out] } }',
      "workers:",
      "  main: { module: ./w.js, sandbox: { restrict: /src } }",
      "",
    ].join("\n"),
  );
}, 180_000);
afterAll(() => {
  rmSync(base, { recursive: true, force: true });
});

describe("--approve ask, a client that supports elicitation", () => {
  it("once writes (and asks again next time), deny and decline refuse and change nothing, session asks no more", async () => {
    writeFileSync(join(prog, "inbox/kept.txt"), "old\n");
    const s = await connect([prog], ["once", "once", "deny", "decline", "cancel", "session"]);
    try {
      expect(await write(s, "/inbox/once.txt", "1")).toEqual({
        isError: false,
        text: "Successfully wrote to /inbox/once.txt",
      });
      expect((await write(s, "/inbox/once.txt", "2")).isError).toBe(false);
      expect(readFileSync(join(prog, "inbox/once.txt"), "utf8")).toBe("2");
      expect(s.asked).toHaveLength(2);

      for (const _ of ["deny", "decline", "cancel"]) {
        const r = await write(s, "/inbox/kept.txt", "new\n");
        expect(r.isError).toBe(true);
        expect(r.text).toMatch(
          /^Error \[approval_denied\]: Access denied: writing '\/inbox\/kept.txt' was not approved/,
        );
      }
      expect(readFileSync(join(prog, "inbox/kept.txt"), "utf8")).toBe("old\n");
      expect(s.asked).toHaveLength(5);

      expect((await write(s, "/inbox/s1.txt")).isError).toBe(false);
      expect(s.asked).toHaveLength(6);
      // The session answer covers later writes in that folder and below, edits too.
      expect((await write(s, "/inbox/s2.txt")).isError).toBe(false);
      expect((await write(s, "/inbox/deep/s3.txt")).isError).toBe(false);
      const edit = await call(s, "edit_file", {
        path: "/inbox/s1.txt",
        edits: [{ oldText: "x", newText: "y" }],
      });
      expect(edit.isError).toBe(false);
      expect(readFileSync(join(prog, "inbox/s1.txt"), "utf8")).toBe("y");
      expect(s.asked).toHaveLength(6);
      // Not other operations: a move asks on its own.
      s.answers.push("deny");
      const move = await call(s, "move_file", {
        source: "/inbox/s2.txt",
        destination: "/inbox/s4.txt",
      });
      expect(move.isError).toBe(true);
      expect(s.asked).toHaveLength(7);
      expect(existsSync(join(prog, "inbox/s2.txt"))).toBe(true);
    } finally {
      await s.client.close();
    }
  });

  it("asks nothing where no approval is needed: other areas, a prefix sibling, listings of one level", async () => {
    const s = await connect([prog], []);
    try {
      expect((await write(s, "/inboxx/a.txt")).isError).toBe(false);
      expect((await write(s, "/src/new.ts")).isError).toBe(false);
      // A NUL or a climb above '/' is refused by the sandbox, never asked about.
      expect((await write(s, "/inbox/a\u0000b.txt")).text).toMatch(/^Error \[invalid_path\]/);
      expect((await write(s, "/../inbox/c.txt")).isError).toBe(true);
      expect((await call(s, "read_text_file", { path: "/src/x.ts" })).text).toBe("x\n");
      const list = await call(s, "list_directory", { path: "/" });
      expect(list.text).toContain("[DIR] vault");
      expect((await call(s, "list_allowed_paths", {})).isError).toBe(false);
      // A write needs no read approval, and /inbox needs none to read.
      writeFileSync(join(prog, "inbox/r.txt"), "r\n");
      expect((await call(s, "read_text_file", { path: "/inbox/r.txt" })).text).toBe("r\n");
      expect(s.asked).toEqual([]);
    } finally {
      await s.client.close();
    }
  });

  it("asks to read /vault: a file, a listing of it, a tree that holds it, a link into it, a resource", async () => {
    const s = await connect(
      [prog],
      ["deny", "once", "once", "deny", "deny", "deny", "deny", "once"],
    );
    try {
      const denied = await call(s, "read_text_file", { path: "/vault/s.txt" });
      expect(denied.isError).toBe(true);
      expect(denied.text).not.toContain("secret");
      expect((await call(s, "read_text_file", { path: "/vault/s.txt" })).text).toBe("secret\n");
      expect((await call(s, "list_directory", { path: "/vault" })).text).toBe("[FILE] s.txt");
      // Through a link in the open root: asked by where it leads, and refused.
      const peek = await call(s, "read_text_file", { path: "/peek.txt" });
      expect(peek.isError).toBe(true);
      expect(peek.text).not.toContain("secret");
      expect(s.asked.slice(0, 4).map((m) => /wants to (.*?), in an area/.exec(m)?.[1])).toEqual([
        "read '/vault/s.txt'",
        "read '/vault/s.txt'",
        "read '/vault'",
        "read '/peek.txt (→ /vault/s.txt)'",
      ]);
      // A folder link and a chain of links: asked by where they end.
      expect((await call(s, "list_directory", { path: "/vlink" })).isError).toBe(true);
      const chain = await call(s, "read_text_file", { path: "/chain.txt" });
      expect(chain.isError).toBe(true);
      expect(chain.text).not.toContain("secret");
      expect(s.asked.slice(-2).map((m) => /wants to (.*?), in an area/.exec(m)?.[1])).toEqual([
        "read '/vlink (→ /vault)'",
        "read '/chain.txt (→ /vault/s.txt)'",
      ]);
      // A tree of '/' reads /vault too: asked by name (and refused whole).
      const tree = await call(s, "directory_tree", { path: "/" });
      expect(tree.isError).toBe(true);
      expect(s.asked[6]).toContain("wants to list the folder '/vault'");
      // Resources: a listing leaves /vault out; reading one by its URI asks.
      const { resources } = await s.client.listResources();
      expect(resources.map((r) => r.uri)).toContain("mountbox:///src/x.ts");
      expect(resources.some((r) => r.uri.includes("vault"))).toBe(false);
      const res = await s.client.readResource({ uri: "mountbox:///vault/s.txt" });
      expect(res.contents[0]).toMatchObject({ text: "secret\n" });
      expect(s.asked).toHaveLength(8);
      await expect(s.client.readResource({ uri: "mountbox:///vault/s.txt" })).rejects.toThrow(
        /approval_denied/,
      );
      expect(s.asked).toHaveLength(9);
    } finally {
      await s.client.close();
    }
  });

  it("withdraws a question whose call the client cancels: a late yes writes nothing", async () => {
    const s = await connect([prog], []);
    const stop = new AbortController();
    // The first question cancels its call, then says yes (too late).
    s.client.setRequestHandler(ElicitRequestSchema, async (req): Promise<ElicitResult> => {
      s.asked.push(req.params.message);
      if (s.asked.length === 1) stop.abort();
      return { action: "accept", content: { decision: "once" } };
    });
    try {
      const cancelled = s.client.callTool(
        { name: "write_file", arguments: { path: "/inbox/cancelled.txt", content: "no" } },
        undefined,
        { signal: stop.signal },
      );
      await expect(cancelled).rejects.toThrow();
      // Questions are asked one at a time: once this one is answered, the
      // cancelled one was decided.
      expect((await write(s, "/inbox/after.txt")).isError).toBe(false);
      expect(s.asked).toHaveLength(2);
      expect(existsSync(join(prog, "inbox/cancelled.txt"))).toBe(false);
    } finally {
      await s.client.close();
    }
  });
});

describe("what the approver reads", () => {
  it("names the virtual path only, escaped: control characters and ANSI escapes shown, never sent", async () => {
    const s = await connect([prog], ["deny", "deny", "deny"]);
    try {
      const hostile = "/inbox/evil\u001b[31mred\u0007\u009b2J\n\u202e.txt";
      expect((await write(s, hostile)).isError).toBe(true);
      // Traversal is normalized before it is shown; a link shows where it leads.
      expect((await write(s, "/src/../inbox/t.txt")).isError).toBe(true);
      expect((await write(s, "/drop.txt")).isError).toBe(true);
      expect(s.asked[0]).toMatchInlineSnapshot(`
        "mountbox: the MCP client's call of write_file wants to write '/inbox/evil\\u001b[31mred\\u0007\\u009b2J\\n\\u202e.txt', in an area where writes need your approval.

        Allow once: this call only. Allow for this session: also later writes in that folder and below (same area), until the client disconnects. Deny: refuse it."
      `);
      expect(s.asked[1]).toContain("write '/inbox/t.txt'");
      expect(s.asked[2]).toContain("write '/drop.txt (→ /inbox/target.txt)'");
      for (const m of s.asked) {
        expect(m).not.toContain(base);
        // Nothing raw but the message's own line breaks.
        expect(m).not.toMatch(RAW_CONTROL);
      }
      expect(existsSync(join(prog, "inbox/t.txt"))).toBe(false);
      expect(existsSync(join(prog, "inbox/target.txt"))).toBe(false);
    } finally {
      await s.client.close();
    }
  });

  it("refuses an answer outside the three choices", async () => {
    const s = await connect([prog], [{ content: { decision: "always" } }, { content: {} }]);
    try {
      expect((await write(s, "/inbox/odd.txt")).isError).toBe(true);
      expect((await write(s, "/inbox/odd.txt")).isError).toBe(true);
      expect(s.asked).toHaveLength(2);
      expect(existsSync(join(prog, "inbox/odd.txt"))).toBe(false);
    } finally {
      await s.client.close();
    }
  });
});

describe("--approve without asking", () => {
  it("ask, a client without elicitation: refused, saying how the user can allow it", async () => {
    const s = await connect([prog], null);
    try {
      const r = await write(s, "/inbox/no.txt");
      expect(r.isError).toBe(true);
      expect(r.text).toMatchInlineSnapshot(
        `"Error [approval_denied]: Access denied: writing '/inbox/no.txt' needs approval, and this MCP client cannot ask its user (it does not support elicitation), so mountbox refused it. Tell the user: to allow such requests, restart mountbox mcp with --approve all, or remove write_approval from that area in the program's sandbox config. Meanwhile choose a path that needs no approval, or report what is needed."`,
      );
      expect(existsSync(join(prog, "inbox/no.txt"))).toBe(false);
      expect((await write(s, "/src/yes.ts")).isError).toBe(false);
    } finally {
      await s.client.close();
    }
  });

  it("all writes without asking; none refuses without asking a client that could be asked", async () => {
    const all = await connect([prog, "--approve", "all"], []);
    try {
      expect((await write(all, "/inbox/all.txt", "all")).isError).toBe(false);
      expect((await call(all, "read_text_file", { path: "/vault/s.txt" })).text).toBe("secret\n");
      expect(all.asked).toEqual([]);
    } finally {
      await all.client.close();
    }
    expect(readFileSync(join(prog, "inbox/all.txt"), "utf8")).toBe("all");
    const none = await connect([prog, "--approve", "none"], ["once"]);
    try {
      const r = await write(none, "/inbox/none.txt");
      expect(r.text).toMatchInlineSnapshot(
        `"Error [approval_denied]: Access denied: writing '/inbox/none.txt' needs approval, and mountbox mcp runs with --approve none, which refuses every such request. Tell the user: to allow it, restart mountbox mcp with --approve ask (a client that supports elicitation then asks them) or --approve all. Meanwhile choose a path that needs no approval, or report what is needed."`,
      );
      expect(none.asked).toEqual([]);
    } finally {
      await none.client.close();
    }
    expect(existsSync(join(prog, "inbox/none.txt"))).toBe(false);
  });

  it("a bad ceiling in the program is a configuration error (exit 2)", () => {
    const bad = join(base, "bad-ceiling");
    mkdirSync(bad);
    writeFileSync(join(bad, "w.js"), "export default 1;\n");
    writeFileSync(
      join(bad, "program.yaml"),
      'sandbox: { root: ".", dynamic: { enabled: true, ceiling: [/src/../..] } }\nworkers:\n  main: { module: ./w.js }\n',
    );
    const r = spawnSync(process.execPath, [CLI, "mcp", bad], {
      cwd: CWD,
      encoding: "utf8",
      input: "",
    });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain("'/src/../..' is not a path the host's sandbox can read");
    expect(r.stderr).not.toContain(base);
  });

  it("a bad --approve is a usage error (exit 2) before serving", () => {
    const r = spawnSync(process.execPath, [CLI, "mcp", prog, "--approve", "maybe\u001b[2J"], {
      cwd: CWD,
      encoding: "utf8",
      input: "",
    });
    expect(r.status).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toMatchInlineSnapshot(`
      "mountbox: --approve takes 'ask', 'all' or 'none', not 'maybe\\u001b[2J'
      Run 'mountbox mcp --help' for usage.
      "
    `);
  });
});

describe("--audit", () => {
  it("holds every question, decision and denial, with virtual paths only", async () => {
    const audit = join(base, "audit.jsonl");
    const s = await connect([prog, "--audit", audit], ["once", "deny", "session"]);
    try {
      await write(s, "/inbox/a1.txt");
      await write(s, "/inbox/a2.txt");
      await write(s, "/inbox/a3.txt");
      await write(s, "/inbox/a4.txt");
    } finally {
      await s.client.close();
    }
    const lines = readFileSync(audit, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const { time: _t, ...first } = lines[0]!;
    expect(first).toEqual({
      type: "approval_request",
      agentId: expect.stringMatching(/^mcp\d+$/),
      chain: ["main"],
      op: "write",
      tool: "write_file",
      path: "/inbox/a1.txt",
      outcome: "asked",
    });
    expect(
      lines.map((l) => `${l.type} ${l.path} ${l.outcome}${l.code ? ` ${l.code}` : ""}`),
    ).toMatchInlineSnapshot(`
        [
          "approval_request /inbox/a1.txt asked",
          "approval_decision /inbox/a1.txt once",
          "tool_call /inbox/a1.txt ok",
          "approval_request /inbox/a2.txt asked",
          "approval_decision /inbox/a2.txt deny",
          "denial /inbox/a2.txt denied approval_denied",
          "tool_call /inbox/a2.txt error approval_denied",
          "approval_request /inbox/a3.txt asked",
          "approval_decision /inbox/a3.txt session",
          "tool_call /inbox/a3.txt ok",
          "tool_call /inbox/a4.txt ok",
        ]
      `);
    expect(readFileSync(audit, "utf8")).not.toContain(base);
  });

  it("says why nobody was asked", async () => {
    const audit = join(base, "audit-none.jsonl");
    const s = await connect([prog, "--audit", audit], null);
    try {
      await write(s, "/inbox/b.txt");
    } finally {
      await s.client.close();
    }
    const decision = readFileSync(audit, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .find((l) => l.type === "approval_decision");
    expect(decision).toMatchObject({ outcome: "deny", code: "no_approver" });
  });
});

describe("dynamic expansion", () => {
  it("asks to widen up to the ceiling, read and write apart; a session grant lasts; beyond the ceiling nothing is asked", async () => {
    const s = await connect([dyn], ["once", "session", "deny"]);
    try {
      expect((await call(s, "read_text_file", { path: "/src/a.ts" })).text).toBe("a\n");
      expect((await call(s, "read_text_file", { path: "/out/o.txt" })).text).toBe("o\n");
      expect(s.asked[0]).toMatchInlineSnapshot(`
        "mountbox: the MCP client's call of read_text_file needs read access to the folder '/out', which is outside its sandbox (the program allows widening it up to its ceiling).

        Allow once: for this call only. Allow for this session: keep that access until the client disconnects. Deny: refuse it."
      `);
      // Once: the next read asks again; session: then no more.
      expect((await call(s, "read_text_file", { path: "/out/p.txt" })).text).toBe("p\n");
      expect((await call(s, "read_text_file", { path: "/out/o.txt" })).text).toBe("o\n");
      expect(s.asked).toHaveLength(2);
      expect((await call(s, "list_allowed_paths", {})).text).toContain("/out");
      // A read grant is not a write grant.
      const w = await write(s, "/out/w.txt");
      expect(w.isError).toBe(true);
      expect(s.asked[2]).toContain("needs write access to the folder '/out'");
      expect(existsSync(join(dyn, "out/w.txt"))).toBe(false);
      // Beyond the ceiling: refused as outside the sandbox, never asked.
      const other = await call(s, "read_text_file", { path: "/other/x.txt" });
      expect(other.text).toMatch(/^Error \[path_not_in_sandbox\]/);
      expect(s.asked).toHaveLength(3);
    } finally {
      await s.client.close();
    }
  });

  it("a client without elicitation is refused saying how to allow it", async () => {
    const s = await connect([dyn], null);
    try {
      const r = await call(s, "read_text_file", { path: "/out/o.txt" });
      expect(r.text).toMatchInlineSnapshot(
        `"Error [approval_denied]: Access denied: read access to '/out' is outside this agent's sandbox, and widening it needs approval, and this MCP client cannot ask its user (it does not support elicitation), so mountbox refused it. Tell the user: to allow such requests, restart mountbox mcp with --approve all, or give that folder to the served worker in the program's sandbox config. Meanwhile choose a path that needs no approval, or report what is needed."`,
      );
    } finally {
      await s.client.close();
    }
  });
});

describe("over Streamable HTTP", () => {
  let server: ChildProcess;
  let port: number;

  beforeAll(async () => {
    server = spawn(process.execPath, [CLI, "mcp", prog, "--http", "0"], {
      cwd: CWD,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let err = "";
    port = await new Promise<number>((res, rej) => {
      server.stderr?.on("data", (d: Buffer) => {
        err += d.toString();
        const m = /http:\/\/127\.0\.0\.1:(\d+)\/mcp/.exec(err);
        if (m) res(Number(m[1]));
      });
      server.once("exit", () => rej(new Error(`server exited: ${err}`)));
    });
  });
  afterAll(() => {
    server?.kill("SIGKILL");
  });

  async function connectHttp(answers: Answer[] | null): Promise<Session> {
    const s = makeClient(answers);
    await s.client.connect(
      new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`)),
    );
    return s;
  }

  it("asks each session on its own; a session answer lasts for that session only", async () => {
    const a = await connectHttp(["session"]);
    const b = await connectHttp(["deny"]);
    const c = await connectHttp(null);
    try {
      expect((await write(a, "/inbox/h1.txt")).isError).toBe(false);
      expect((await write(a, "/inbox/h2.txt")).isError).toBe(false);
      expect(a.asked).toHaveLength(1);
      expect((await write(b, "/inbox/h3.txt")).isError).toBe(true);
      expect(b.asked).toHaveLength(1);
      expect((await write(c, "/inbox/h4.txt")).text).toContain("does not support elicitation");
      expect(existsSync(join(prog, "inbox/h2.txt"))).toBe(true);
      expect(existsSync(join(prog, "inbox/h3.txt"))).toBe(false);
      expect(existsSync(join(prog, "inbox/h4.txt"))).toBe(false);
    } finally {
      await Promise.all([a.client.close(), b.client.close(), c.client.close()]);
    }
  });
});
