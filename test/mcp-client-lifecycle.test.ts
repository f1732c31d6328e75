/**
 * The life of an MCP server the host holds (DESIGN §10): a server that
 * dies is restarted at the next call of one of its tools (one attempt per
 * call, with a backoff between attempts), a call during which it dies gets
 * an error the model can read, and nothing it started outlives
 * `host.close()` or a failed `createHost` — processes it started itself
 * included. Real stdio servers (the SDK's `McpServer`), real processes.
 */
import { writeFileSync } from "node:fs";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { ConfigError, createHost as createBuiltHost } from "../dist/src/index.js";
import type { Host, HostOptions } from "../src/index.js";
import { McpServerConnection } from "../src/mcp-client/mcp-connection.js";
import { assertBuilt } from "./conformance/thread.js";
import {
  isGone,
  nextWarning,
  plan,
  planModel,
  readStarts,
  writeStdioServer,
} from "./helpers/mcp-fixtures.js";
import { makeTempDir, removeDir } from "./helpers/tree.js";

const createHost = createBuiltHost as unknown as (o: HostOptions) => Promise<Host>;

let dir: string;
let serverFile: string;

beforeAll(() => {
  assertBuilt();
  dir = makeTempDir("mountbox-mcp-life-");
  serverFile = writeStdioServer(dir);
});
afterAll(() => removeDir(dir));

/** A stdio server logging its starts to `log`. */
const demo = (log: string, extra: Record<string, string> = {}) => ({
  command: process.execPath,
  args: [serverFile],
  env: { START_LOG: log, ...extra },
});

function hostWith(servers: HostOptions["mcpServers"], extra: Partial<HostOptions> = {}) {
  return createHost({
    workers: { w: { instructions: "Follow the plan.", model: "m", mcp: Object.keys(servers!) } },
    models: { m: planModel() },
    mcpServers: servers,
    ...extra,
  });
}

describe("a server that stops", () => {
  it("is restarted at the next call after it died; the call works", async () => {
    const log = join(dir, "restart.log");
    const host = await hostWith({ demo: demo(log) });
    try {
      const first = Number(await host.run("w", plan([["demo__pid", {}]])));
      expect(readStarts(log)).toEqual([first]);
      const stopped = nextWarning("MOUNTBOX_MCP_SERVER_STOPPED");
      process.kill(first, "SIGKILL");
      expect(await stopped).toBe(
        "The MCP server 'demo' stopped; the next call of one of its tools restarts it.",
      );
      const out = (await host.run(
        "w",
        plan([
          ["demo__pid", {}],
          ["demo__echo", { text: "again" }],
        ]),
      )) as string;
      const [second, echoed] = out.split(" | ");
      expect(Number(second)).not.toBe(first);
      expect(echoed).toBe("echo: again");
      expect(readStarts(log)).toEqual([first, Number(second)]);
      expect(isGone(first)).toBe(true);
    } finally {
      await host.close();
    }
  });

  it("a call during which it dies gets an error the model reads; the next call restarts it", async () => {
    const log = join(dir, "die.log");
    const host = await hostWith({ demo: demo(log) });
    try {
      const out = (await host.run(
        "w",
        plan([
          ["demo__die", {}],
          ["demo__pid", {}],
        ]),
      )) as string;
      const [error, pid] = out.split(" | ");
      expect(error).toMatch(
        /^The MCP server 'demo' stopped during the call of 'die' \(.*\); whether the call took effect is not known\. It is restarted at the next call of one of its tools\.$/,
      );
      const starts = readStarts(log);
      expect(starts).toHaveLength(2);
      expect(Number(pid)).toBe(starts[1]);
      expect(isGone(starts[0]!)).toBe(true);
    } finally {
      await host.close();
    }
    expect(readStarts(log).every(isGone)).toBe(true);
  });

  it("restarts once per call, never sooner than the backoff (1 s, doubling) after the last attempt", async () => {
    const log = join(dir, "backoff.log");
    const crash = join(dir, "crash-now");
    let now = 1_000_000;
    const conn = new McpServerConnection("demo", demo(log, { CRASH_FILE: crash }), dir, {
      now: () => now,
    });
    const signal = new AbortController().signal;
    const call = () =>
      conn.call("pid", {}, signal).then(
        (r) => (r.content as { text: string }[])[0]!.text,
        (e: Error) => e.message,
      );
    await conn.start();
    try {
      const stopped = nextWarning("MOUNTBOX_MCP_SERVER_STOPPED");
      writeFileSync(crash, "");
      process.kill(conn.pid!, "SIGKILL");
      await stopped;
      // Attempt 1 (at once): the server exits as it starts.
      expect(await call()).toMatch(
        /^The MCP server 'demo' stopped and could not be restarted \(.*\)\. Try again later, or go on without it\.$/,
      );
      expect(readStarts(log)).toHaveLength(2);
      // Within 1 s of it: no attempt.
      now += 999;
      expect(await call()).toBe(
        "The MCP server 'demo' stopped (1 restart in a row) and is not restarted again for 1 s. Try again later, or go on without it.",
      );
      expect(readStarts(log)).toHaveLength(2);
      now += 1;
      expect(await call()).toMatch(/could not be restarted/);
      expect(readStarts(log)).toHaveLength(3);
      now += 1999;
      expect(await call()).toMatch(/2 restarts in a row\) and is not restarted again for 1 s/);
      expect(readStarts(log)).toHaveLength(3);
      // Fixed, and the backoff over: the next call restarts it and runs.
      await rm(crash);
      now += 1;
      const pid = await call();
      expect(readStarts(log)).toHaveLength(4);
      expect(Number(pid)).toBe(readStarts(log)[3]);
    } finally {
      await conn.close();
    }
    expect(readStarts(log).every(isGone)).toBe(true);
  });
});

describe("nothing is left behind", () => {
  it("host.close() stops what the server started too (its process group), even one holding its stdout", async () => {
    const log = join(dir, "group.log");
    const host = await hostWith({ demo: demo(log) });
    let sleeper: number;
    try {
      sleeper = Number(await host.run("w", plan([["demo__spawn_sleep", {}]])));
      expect(isGone(sleeper)).toBe(false);
    } finally {
      await host.close();
    }
    expect(isGone(sleeper)).toBe(true);
    expect(readStarts(log).every(isGone)).toBe(true);
  });

  it("a server that dies is noticed although a process it started holds its stdout; that one is stopped", async () => {
    const log = join(dir, "orphan.log");
    const host = await hostWith({ demo: demo(log) });
    try {
      const sleeper = Number(await host.run("w", plan([["demo__spawn_sleep", {}]])));
      const stopped = nextWarning("MOUNTBOX_MCP_SERVER_STOPPED");
      process.kill(readStarts(log)[0]!, "SIGKILL");
      await stopped;
      await vi.waitFor(() => expect(isGone(sleeper)).toBe(true), { timeout: 15_000 });
      // And the next call restarts it.
      expect(Number(await host.run("w", plan([["demo__pid", {}]])))).toBe(readStarts(log)[1]);
    } finally {
      await host.close();
    }
  });

  it("a createHost that fails after a server started stops it (a later config error)", async () => {
    const log = join(dir, "audit-fail.log");
    const err = await hostWith(
      { demo: demo(log) },
      // Checked only when opened, after the servers started.
      { auditLog: join(dir, "no-such-folder", "audit.jsonl") },
    ).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).issues.map((i) => i.path.join("."))).toEqual(["auditLog"]);
    const starts = readStarts(log);
    expect(starts).toHaveLength(1);
    expect(isGone(starts[0]!)).toBe(true);
  });

  it("a createHost whose second server fails stops the first", async () => {
    const log = join(dir, "second-fail.log");
    const err = await hostWith({
      good: demo(log),
      broken: { command: process.execPath, args: [join(dir, "missing.mjs")] },
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).issues.map((i) => i.path.join("."))).toEqual(["mcpServers.broken"]);
    const starts = readStarts(log);
    expect(starts).toHaveLength(1);
    expect(isGone(starts[0]!)).toBe(true);
  });
});
