/**
 * Issue 18, findings 4–6, from real agent threads: a `ctx.log` flood (and a
 * raw flood of the parent port) neither stalls the host nor grows its memory;
 * a grep pattern that takes seconds to compile costs only its agent, and two
 * agents' slow greps do not starve a third; a read of a huge file is refused
 * before it loads, with a message that names the limit and the way on.
 */
import { closeSync, ftruncateSync, mkdirSync, openSync, writeFileSync } from "node:fs";
import { mkdtemp, realpath, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { AgentThreadError, runAgentThread } from "../dist/src/threads/agent-thread.js";
import type { AgentLogEntry } from "../dist/src/threads/thread-options.js";
import { assertBuilt, createSandboxForThreads, fixture } from "./conformance/thread.js";
import { LAG_BOUND_MS, withGap } from "./helpers/event-loop.js";

beforeAll(assertBuilt);

let dir: string;
beforeEach(async () => {
  dir = await realpath(await mkdtemp(join(tmpdir(), "mountbox-floods-")));
  mkdirSync(join(dir, "root"));
  writeFileSync(join(dir, "root", "small.txt"), "k".repeat(1024));
});
afterEach(() => rm(dir, { recursive: true, force: true }));

const sandbox = () => createSandboxForThreads({ root: join(dir, "root") });
type Settled = { ok: boolean; value?: unknown; code?: string; message?: string };

const run = (input: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
  runAgentThread({
    module: fixture("flood-worker.js"),
    input,
    sandbox: sandbox() as never,
    timeoutMs: 30_000,
    ...extra,
  });

/** Waits until `n` flooders counted themselves in `flags[1]`. */
async function started(flags: Int32Array, n: number): Promise<void> {
  while (Atomics.load(flags, 1) < n) await new Promise((r) => setTimeout(r, 5));
}

const MB = 1024 * 1024;

describe("a ctx.log flood (finding 4)", () => {
  it("is dropped and counted: the host stays responsive and its memory bounded", async () => {
    const shared = new SharedArrayBuffer(8);
    const flags = new Int32Array(shared);
    const entries: AgentLogEntry[] = [];
    const rss0 = process.memoryUsage().rss;
    let rssMax = rss0;
    const watch = setInterval(() => {
      rssMax = Math.max(rssMax, process.memoryUsage().rss);
    }, 20);
    const flood = run(
      { mode: "log", stop: shared, ms: 3_000 },
      { onLog: (e: AgentLogEntry) => entries.push(e) },
    );
    try {
      await started(flags, 1);
      // Let the flood build up before the victim asks.
      await new Promise((r) => setTimeout(r, 1_000));
      const { value, gapMs } = await withGap(() => run({ mode: "read", path: "/small.txt" }));
      expect((value as { value: Settled }).value).toEqual({ ok: true, value: "k".repeat(1024) });
      expect(gapMs).toBeLessThan(LAG_BOUND_MS);
    } finally {
      Atomics.store(flags, 0, 1);
    }
    const result = await flood;
    clearInterval(watch);
    const calls = result.value as number;
    expect(calls).toBeGreaterThan(200_000);
    // Every call is accounted for: kept as a line, or counted as dropped.
    const kept = entries.filter((e) => e.dropped === undefined).length;
    const dropped = entries.reduce((n, e) => n + (e.dropped ?? 0), 0);
    expect(kept + dropped).toBe(calls);
    expect(kept).toBeLessThan(20_000);
    expect(entries.some((e) => (e.dropped ?? 0) > 0 && /dropped/.test(e.message))).toBe(true);
    expect(result.logs.length).toBeLessThanOrEqual(kept + entries.length - kept);
    expect(rssMax - rss0).toBeLessThan(300 * MB);
  });

  it("a raw flood of the parent port stops the flooder, not the host", async () => {
    const shared = new SharedArrayBuffer(8);
    const flags = new Int32Array(shared);
    const flood = run({ mode: "raw-log", stop: shared, ms: 5_000 }).then(
      () => null,
      (e: unknown) => e,
    );
    try {
      await started(flags, 1);
      const { value, gapMs } = await withGap(() => run({ mode: "read", path: "/small.txt" }));
      expect((value as { value: Settled }).value).toEqual({ ok: true, value: "k".repeat(1024) });
      // The host pays for what arrives before it sees a flood (a few thousand
      // messages, whatever they say): a bounded cost, not the whole flood.
      expect(gapMs).toBeLessThan(4 * LAG_BOUND_MS);
    } finally {
      Atomics.store(flags, 0, 1);
    }
    const err = await flood;
    expect(err).toBeInstanceOf(AgentThreadError);
    expect((err as AgentThreadError).reason).toBe("oversize");
    expect((err as Error).message).toMatch(/on its parent port within a second/);
  });
});

describe("grep patterns compile off the host's loop (finding 5)", () => {
  it("an emoji-class pattern with flags varied per call does not stall the host", async () => {
    const pattern = `[${"\\p{RGI_Emoji}".repeat(1000)}x]`;
    for (const flags of ["iv", "imv"]) {
      const { value, gapMs } = await withGap(() =>
        run({ mode: "grep", options: { pattern, flags, timeBudgetMs: 500 } }),
      );
      const r = (value as { value: Settled }).value;
      // A result (Node 24 compiles it in ~1 s) or the time budget's error.
      if (!r.ok) expect(r.message).toMatch(/did not finish within|not a valid/);
      expect(gapMs).toBeLessThan(LAG_BOUND_MS);
    }
  });

  it("an invalid pattern gives the same clear error as before", async () => {
    const r = await run({ mode: "grep", options: { pattern: "(", flags: "v" } });
    expect(r.value).toMatchObject({ ok: false, code: "invalid_request" });
    expect((r.value as Settled).message).toMatch(/not a valid regular expression/);
  });

  it("two agents' slow greps do not starve a third agent's trivial grep", async () => {
    writeFileSync(join(dir, "root", "redos.txt"), `${"a".repeat(40)}b\n`);
    const shared = new SharedArrayBuffer(8);
    const flags = new Int32Array(shared);
    const stop = new AbortController();
    const slow = { pattern: "^(a+)+$", path: "/redos.txt", timeBudgetMs: 10_000 };
    const order: string[] = [];
    const hostile = [0, 1].map((i) =>
      run({ mode: "grep", stop: shared, options: slow }, { signal: stop.signal }).then(
        (r) => order.push(`hostile${i}:${(r.value as Settled).ok}`),
        () => order.push(`hostile${i}:stopped`),
      ),
    );
    await started(flags, 2);
    // Both slow searches hold the pool's two threads by now.
    await new Promise((r) => setTimeout(r, 300));
    const victim = await run({
      mode: "grep",
      options: { pattern: "k", path: "/small.txt" },
    });
    order.push("victim");
    stop.abort();
    await Promise.all(hostile);
    expect(victim.value).toMatchObject({ ok: true });
    // The victim finished while at least one slow search was still running.
    expect(order.indexOf("victim")).toBeLessThan(2);
  });
});

describe("reads of huge files (finding 6)", () => {
  it("four concurrent reads of a 1 GiB file are refused before they load", async () => {
    const fd = openSync(join(dir, "root", "huge.bin"), "w");
    ftruncateSync(fd, 1024 * MB); // sparse: no disk used
    closeSync(fd);
    const rss0 = process.memoryUsage().rss;
    let rssMax = rss0;
    const watch = setInterval(() => {
      rssMax = Math.max(rssMax, process.memoryUsage().rss);
    }, 10);
    const r = await run({ mode: "reads", path: "/huge.bin", n: 4 });
    clearInterval(watch);
    const results = r.value as Settled[];
    expect(results).toHaveLength(4);
    for (const x of results) {
      expect(x).toMatchObject({ ok: false, code: "file_too_large" });
      // Names the limit (64 MiB by default) and the way to read a part.
      expect(x.message).toMatch(/67108864 bytes/);
      expect(x.message).toMatch(/grep/);
      expect(x.message).not.toContain(dir);
    }
    expect(rssMax - rss0).toBeLessThan(256 * MB);
  });

  it("reads under a larger max_file_bytes wait for the byte budget before they load", async () => {
    const fd = openSync(join(dir, "root", "big.bin"), "w");
    ftruncateSync(fd, 100 * MB);
    closeSync(fd);
    const big = createSandboxForThreads({ root: join(dir, "root"), maxFileBytes: 128 * MB });
    // Counts the reads holding their bytes at once: from the moment the byte
    // budget lets one load until its bytes are returned. (Memory itself is
    // no measure here: what the GC has not yet freed of earlier reads took
    // a loaded machine past any bound.)
    let loading = 0;
    let most = 0;
    const readBytes = big.readBytes.bind(big);
    big.readBytes = async (path, opts) => {
      let counted = false;
      try {
        return await readBytes(path, {
          ...opts,
          beforeLoad: async (size) => {
            await opts?.beforeLoad?.(size);
            counted = true;
            most = Math.max(most, ++loading);
          },
        });
      } finally {
        if (counted) loading--;
      }
    };
    const r = await run(
      { mode: "reads", op: "readBytes", path: "/big.bin", n: 4 },
      { sandbox: big },
    );
    expect(r.value).toEqual(Array.from({ length: 4 }, () => ({ ok: true, length: 100 * MB })));
    // One 100 MiB read loads at a time (the budget is 128 MiB), not four at
    // once (1.5 GB of memory before).
    expect(most).toBe(1);
  });
});
