// biome-ignore-all lint/suspicious/noExplicitAny: hostile-input tests send and inspect loosely typed messages on purpose
// biome-ignore-all lint/suspicious/noProto: hostile-input tests send and inspect loosely typed messages on purpose
// biome-ignore-all lint/suspicious/noThenProperty: hostile-input tests send and inspect loosely typed messages on purpose
/**
 * The host side of the port, attacked in-process: every hostile message gets
 * an error, runs nothing in the host (a marker file never appears) and the
 * port still serves afterwards. A control shows the same attack against a
 * plain `Comlink.expose` does run code in the host, so the marker can fail.
 */
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MessageChannel, type MessagePort } from "node:worker_threads";
import * as Comlink from "comlink";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createSandbox, type Sandbox } from "../src/index.js";
import { MAX_THREAD_GREP_BUDGET_MS } from "../src/port/grep-op.js";
import { serveSandbox } from "../src/port/port-server.js";

/** The options and call of every search the port server starts. */
const searches = vi.hoisted(() => [] as { opts: unknown; call: unknown }[]);
vi.mock("../src/pool/index.js", async (importOriginal) => {
  const actual = await importOriginal<typeof import("../src/pool/index.js")>();
  return {
    ...actual,
    searchSandbox: (...a: Parameters<typeof actual.searchSandbox>) => {
      searches.push({ opts: a[1], call: a[2] });
      return actual.searchSandbox(...a);
    },
  };
});

let dir: string;
let marker: string;
let sandbox: Sandbox;
let code: string;

beforeEach(async () => {
  dir = await realpath(await mkdtemp(join(tmpdir(), "mountbox-port-")));
  await mkdir(join(dir, "root"));
  await writeFile(join(dir, "root", "a.txt"), "A");
  marker = join(dir, "PWNED");
  sandbox = createSandbox({ root: join(dir, "root") });
  code = `process.getBuiltinModule("fs").writeFileSync(${JSON.stringify(marker)}, "x"); return 1`;
});
afterEach(() => rm(dir, { recursive: true, force: true }));

function ask(port: MessagePort, message: unknown, transfer: MessagePort[] = []): Promise<any> {
  return new Promise((resolve) => {
    port.once("message", resolve);
    port.postMessage(message, transfer);
  });
}

async function settle(p: unknown): Promise<{ ok: boolean; message?: string }> {
  try {
    await p;
    return { ok: true };
  } catch (err) {
    return { ok: false, message: (err as Error).message };
  }
}

describe("the grep operation", () => {
  it("emits an operation event with grep's path, like the other operations", async () => {
    const { port1, port2 } = new MessageChannel();
    const events: [string, string | undefined, string | undefined][] = [];
    const server = serveSandbox(port1, sandbox, {
      onOperation: (op, path, error) => events.push([op, path, error?.code]),
    });
    try {
      const found = await ask(port2, { id: 1, op: "grep", args: [{ pattern: "A", path: "/" }] });
      expect(found.value.matches).toEqual([{ path: "/a.txt", line: 1, text: "A" }]);
      await ask(port2, { id: 2, op: "grep", args: [{ pattern: "A" }] });
      await ask(port2, { id: 3, op: "grep", args: [{ pattern: "A", path: "/missing" }] });
      expect(events).toEqual([
        ["grep", "/", undefined],
        ["grep", "/", undefined],
        ["grep", "/missing", "not_found"],
      ]);
    } finally {
      server.close();
      port2.close();
    }
  });
});

describe("a thread's grep budget (review 3, t5)", () => {
  it("caps timeBudgetMs at 10 s and searches with the agent's own signal (its pool turn)", async () => {
    const { port1, port2 } = new MessageChannel();
    const server = serveSandbox(port1, sandbox);
    searches.length = 0;
    try {
      await ask(port2, { id: 1, op: "grep", args: [{ pattern: "A", timeBudgetMs: 120_000 }] });
      await ask(port2, { id: 2, op: "grep", args: [{ pattern: "A", timeBudgetMs: 500 }] });
      expect(MAX_THREAD_GREP_BUDGET_MS).toBe(10_000);
      expect(searches.map((c) => (c.opts as { timeBudgetMs: number }).timeBudgetMs)).toEqual([
        10_000, 500,
      ]);
      // Both calls of this agent carry the same signal: the pool's owner key.
      const [a, b] = searches.map((c) => (c.call as { signal: AbortSignal }).signal);
      expect(a).toBeInstanceOf(AbortSignal);
      expect(a).toBe(b);
    } finally {
      server.close();
      port2.close();
    }
  });
});

describe("control: a plain Comlink.expose", () => {
  it("lets `new proxy.readFile.constructor(code)` run code in the host", async () => {
    const { port1, port2 } = new MessageChannel();
    Comlink.expose(sandbox, port1);
    const proxy = Comlink.wrap<any>(port2);
    const fn = await new proxy.readFile.constructor(code);
    await fn();
    expect(existsSync(marker)).toBe(true);
    port1.close();
    port2.close();
  });
});

describe("serveSandbox against hostile messages", () => {
  let server: ReturnType<typeof serveSandbox>;
  let worker: MessagePort;
  beforeEach(() => {
    const { port1, port2 } = new MessageChannel();
    server = serveSandbox(port1, sandbox);
    worker = port2;
  });
  afterEach(async () => {
    // The host still serves after every attack, and nothing ran.
    expect(await ask(worker, { id: 999, op: "readFile", args: ["/a.txt"] })).toEqual({
      id: 999,
      ok: true,
      value: "A",
    });
    expect(existsSync(marker)).toBe(false);
    server.close();
    worker.close();
  });

  it("refuses every Comlink GET/SET/APPLY/CONSTRUCT with an error Comlink understands", async () => {
    const proxy = Comlink.wrap<any>(worker);
    const results = [
      await settle(new proxy.readFile.constructor(code)),
      await settle(proxy.readFile.constructor(code)),
      await settle(proxy.constructor.constructor(code)),
      await settle(proxy.__proto__.constructor.constructor(code)),
      await settle(proxy.readFile("/a.txt")),
      await settle(proxy.readFile.then((v: unknown) => v)),
      await settle(proxy.__proto__),
    ];
    for (const r of results) expect(r.ok).toBe(false);
    expect(results[0]?.message).toMatchInlineSnapshot(
      `"Comlink messages are not served; use ctx.sandbox."`,
    );
    const set = await ask(worker, { id: "s", type: "SET", path: ["readFile"], value: 1 });
    expect(set.value.isError).toBe(true);
    expect(typeof sandbox.readFile).toBe("function");
  });

  it.each([
    ["constructor"],
    ["__proto__"],
    ["then"],
    ["toString"],
    ["hasOwnProperty"],
    ["valueOf"],
    ["resolve"],
    ["derive"],
    ["readFile.constructor"],
    [""],
  ])("refuses op %j as unknown", async (op) => {
    const reply = await ask(worker, { id: 1, op, args: [code] });
    expect(reply.ok).toBe(false);
    expect(reply.id).toBe(1);
    expect(reply.error.code).toBe("invalid_request");
    expect(reply.error.message).toContain("Unknown operation");
  });

  it("pins the message for an unknown operation", async () => {
    const reply = await ask(worker, { id: 7, op: "constructor", args: [] });
    expect(reply).toMatchInlineSnapshot(`
      {
        "error": {
          "code": "invalid_request",
          "message": "Unknown operation "constructor".",
          "name": "InvalidRequestError",
        },
        "id": 7,
        "ok": false,
      }
    `);
  });

  it.each([
    ["a string", "readFile"],
    ["null", null],
    ["an array", [1, "readFile", ["/a.txt"]]],
    ["no args", { id: 1, op: "readFile" }],
    ["extra key", { id: 1, op: "readFile", args: ["/a.txt"], then: 1 }],
    ["negative id", { id: -1, op: "readFile", args: ["/a.txt"] }],
    ["fractional id", { id: 1.5, op: "readFile", args: ["/a.txt"] }],
    ["object id", { id: { valueOf: 1 }, op: "readFile", args: ["/a.txt"] }],
    ["op not a string", { id: 1, op: ["readFile"], args: ["/a.txt"] }],
    ["args not an array", { id: 1, op: "readFile", args: { 0: "/a.txt", length: 1 } }],
  ])("refuses a malformed request (%s)", async (_label, msg) => {
    const reply = await ask(worker, msg);
    expect(reply.ok).toBe(false);
    expect(reply.error.code).toBe("invalid_request");
  });

  it.each([
    ["readFile", [42]],
    ["readFile", []],
    ["readFile", ["/a.txt", "extra"]],
    ["readFile", [{ toString: "/a.txt" }]],
    ["writeFile", ["/b.txt", { length: 3 }]],
    ["writeFile", ["/b.txt", 12]],
    ["editFile", ["/a.txt", [{ oldText: "A", newText: "B", extra: 1 }]]],
    ["editFile", ["/a.txt", "A"]],
    ["remove", ["/a.txt", { recursive: "yes" }]],
    ["remove", ["/a.txt", { recursive: true, force: true }]],
    ["move", ["/a.txt", "/c.txt", { overwrite: 1 }]],
    ["move", ["/a.txt", "/c.txt", JSON.parse('{"__proto__": {"overwrite": true}}')]],
    ["describe", ["x"]],
    ["readFile", ["x".repeat(20_000)]],
  ])("refuses bad arguments to %s %j and changes nothing", async (op, args) => {
    const reply = await ask(worker, { id: 3, op, args });
    expect(reply.ok).toBe(false);
    expect(reply.error.code).toBe("invalid_request");
    expect(existsSync(join(dir, "root", "b.txt"))).toBe(false);
    expect(existsSync(join(dir, "root", "c.txt"))).toBe(false);
    expect(existsSync(join(dir, "root", "a.txt"))).toBe(true);
  });

  it.each([
    ["no options", []],
    ["two arguments", [{ pattern: "A" }, {}]],
    ["a string", ["A"]],
    ["no pattern", [{ path: "/" }]],
    ["a pattern that is not a string", [{ pattern: /A/ }]],
    ["a pattern over 16 KiB", [{ pattern: "A".repeat(16 * 1024 + 1) }]],
    ["a path over 16 KiB", [{ pattern: "A", path: `/${"x".repeat(20_000)}` }]],
    ["a glob that is not a string", [{ pattern: "A", glob: ["**/*"] }]],
    ["long flags", [{ pattern: "A", flags: "i".repeat(17) }]],
    ["a fractional budget", [{ pattern: "A", maxMatches: 1.5 }]],
    ["a negative budget", [{ pattern: "A", timeBudgetMs: -1 }]],
    ["a huge budget", [{ pattern: "A", maxBytes: 2 ** 41 }]],
    ["a budget given as a string", [{ pattern: "A", maxMatches: "10" }]],
    ["an unknown option", [{ pattern: "A", exec: code }]],
    ["an inherited key", [JSON.parse('{"pattern": "A", "__proto__": {"path": "/"}}')]],
  ])("refuses bad grep arguments (%s) with InvalidRequestError", async (_label, args) => {
    const reply = await ask(worker, { id: 4, op: "grep", args });
    expect(reply.ok).toBe(false);
    expect(reply.error.name).toBe("InvalidRequestError");
    expect(reply.error.message).toMatch(/^Invalid arguments for grep: /);
  });

  it("pins grep's argument refusal, and serves a good grep", async () => {
    const reply = await ask(worker, { id: 5, op: "grep", args: [{ pattern: "A", limit: 3 }] });
    expect(reply.error.message).toMatchInlineSnapshot(
      `"Invalid arguments for grep: unknown option "limit"."`,
    );
    // An invalid regular expression passes the port's checks and is refused by the search.
    const bad = await ask(worker, { id: 6, op: "grep", args: [{ pattern: "(" }] });
    expect(bad.error.name).toBe("InvalidRequestError");
    expect(bad.error.message).toMatch(/^The pattern is not a valid regular expression: /);
    const good = await ask(worker, { id: 7, op: "grep", args: [{ pattern: "^A$", path: "/" }] });
    expect(good).toMatchObject({
      id: 7,
      ok: true,
      value: { matches: [{ path: "/a.txt", line: 1, text: "A" }], truncated: false },
    });
  });

  it("refuses a transferred port and closes it", async () => {
    const { port1, port2 } = new MessageChannel();
    const reply = await ask(worker, { id: 4, op: "readFile", args: [port1] }, [port1]);
    expect(reply.ok).toBe(false);
    expect(reply.error.code).toBe("invalid_request");
    // The smuggled port was closed by the host: its peer sees the close.
    await new Promise((resolve) => port2.once("close", resolve));
  });

  /** Serves a sandbox whose readFile waits until `open()` (so requests stay in flight). */
  function serveGated(maxInFlight?: number): { open(): void } {
    server.close();
    let open!: () => void;
    const gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    const gated = Object.create(sandbox, {
      readFile: { value: async (p: string) => gate.then(() => sandbox.readFile(p)) },
    });
    const { port1, port2 } = new MessageChannel();
    server = serveSandbox(port1, gated, maxInFlight === undefined ? {} : { maxInFlight });
    worker = port2;
    return { open };
  }

  it("refuses a forged id that is already in flight", async () => {
    const gate = serveGated();
    const replies: any[] = [];
    const got = new Promise<void>((resolve) =>
      worker.on("message", (m) => {
        replies.push(m);
        if (replies.length === 1) gate.open(); // the refusal came first
        if (replies.length === 2) resolve();
      }),
    );
    worker.postMessage({ id: 5, op: "readFile", args: ["/a.txt"] });
    worker.postMessage({ id: 5, op: "writeFile", args: ["/a.txt", "forged"] });
    await got;
    worker.removeAllListeners("message");
    expect(replies.filter((r) => r.ok === false)[0]?.error.message).toMatchInlineSnapshot(
      `"Request id 5 is already in flight."`,
    );
    expect(await sandbox.readFile("/a.txt")).toBe("A");
  });

  it("refuses requests over the in-flight limit", async () => {
    const gate = serveGated(2);
    const port2 = worker;
    const replies: any[] = [];
    const got = new Promise<void>((resolve) =>
      port2.on("message", (m) => {
        replies.push(m);
        if (replies.length === 2) gate.open();
        if (replies.length === 4) resolve();
      }),
    );
    for (let id = 0; id < 4; id++) port2.postMessage({ id, op: "readFile", args: ["/a.txt"] });
    await got;
    port2.removeAllListeners("message");
    expect(replies.filter((r) => r.ok).length).toBe(2);
    expect(replies.filter((r) => !r.ok)[0].error.message).toContain("Too many requests in flight");
  });

  it("maps non-mountbox errors to a generic IoError without host paths", async () => {
    server.close();
    const { port1, port2 } = new MessageChannel();
    const internal: unknown[] = [];
    const leaky = Object.create(sandbox, {
      readFile: {
        value: async () => {
          throw new Error(`ENOENT: no such file, open '${dir}/root/secret'`);
        },
      },
    });
    server = serveSandbox(port1, leaky, { onInternalError: (e) => internal.push(e) });
    worker = port2;
    const reply = await ask(port2, { id: 1, op: "readFile", args: ["/secret"] });
    expect(reply.error).toMatchInlineSnapshot(`
      {
        "code": "io_error",
        "message": "I/O error during readFile on '/secret': unexpected error.",
        "name": "IoError",
        "path": "/secret",
      }
    `);
    expect(JSON.stringify(reply)).not.toContain(dir);
    expect(internal).toHaveLength(1);
    server.close();
    const fresh = new MessageChannel();
    server = serveSandbox(fresh.port1, sandbox);
    worker = fresh.port2;
  });

  it("copies readBytes results exactly (no pooled buffer leaks across)", async () => {
    const reply = await ask(worker, { id: 2, op: "readBytes", args: ["/a.txt"] });
    expect(reply.ok).toBe(true);
    expect(reply.value.buffer.byteLength).toBe(1);
  });

  it("reports an oversized message as a violation and stops serving", async () => {
    server.close();
    const { port1, port2 } = new MessageChannel();
    const violations: unknown[] = [];
    server = serveSandbox(port1, sandbox, {
      maxMessageBytes: 1024,
      onViolation: (v) => violations.push(v),
    });
    port2.postMessage({ id: 1, op: "writeFile", args: ["/big.txt", new Uint8Array(4096)] });
    port2.postMessage({ id: 2, op: "nope", junk: new Uint8Array(4096) });
    await new Promise((resolve) => port2.once("close", resolve));
    expect(violations).toEqual([{ kind: "oversize", bytes: 4096 + 16, limit: 1024 }]);
    expect(existsSync(join(dir, "root", "big.txt"))).toBe(false);
    const fresh = new MessageChannel();
    server = serveSandbox(fresh.port1, sandbox);
    worker = fresh.port2;
  });
});
