/**
 * Runtime II benchmarks: a delegation round trip (spawn the callee's thread
 * with its derived sandbox, run a no-op, return) against a bare `new Worker`
 * start to first message, in the same run; and memory per idle agent thread
 * against a bare idle worker thread.
 */
import { mkdirSync, mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import { createHost } from "../src/index.js";
import { type BenchRow, compare } from "./lib.js";

const fixture = (name: string) =>
  fileURLToPath(new URL(`../../test/fixtures/host/${name}`, import.meta.url));
const HOPS = 10;

/** Starts a bare worker and resolves at its first message. */
function startBare(): Promise<void> {
  return new Promise((resolve, reject) => {
    const w = new Worker("require('node:worker_threads').parentPort.postMessage(1)", {
      eval: true,
    });
    w.once("message", () => {
      void w.terminate().then(() => resolve());
    });
    w.once("error", reject);
  });
}

async function bareChain(): Promise<void> {
  for (let i = 0; i <= HOPS; i++) await startBare();
}

async function rssPerThread(
  start: () => Promise<() => Promise<void>>,
  count: number,
): Promise<number> {
  globalThis.gc?.();
  const before = process.memoryUsage().rss;
  const stops: (() => Promise<void>)[] = [];
  for (let i = 0; i < count; i++) stops.push(await start());
  await new Promise((r) => setTimeout(r, 300));
  const after = process.memoryUsage().rss;
  await Promise.all(stops.map((s) => s()));
  return (after - before) / count / 2 ** 20;
}

export default async function benchHost(): Promise<BenchRow[]> {
  const base = realpathSync(mkdtempSync(join(tmpdir(), "mountbox-bench-host-")));
  mkdirSync(join(base, "root/src"), { recursive: true });
  try {
    const workers = {
      driver: { module: fixture("driver.js"), delegates: ["noop"] },
      noop: { module: fixture("noop.js"), sandbox: { restrict: "/src", readonly: true } },
    };
    const rows: BenchRow[] = [];
    for (const warmThreads of [0, 2]) {
      const host = await createHost({
        sandbox: { root: "root" },
        basePath: base,
        workers,
        warmThreads,
      });
      rows.push(
        await compare(
          `run + ${HOPS} delegations${warmThreads ? ` (${warmThreads} warm spares)` : " (fresh threads)"}`,
          () => host.run("driver", { n: HOPS }),
          `${HOPS + 1} bare new Worker starts to first message`,
          bareChain,
          { time: 3000, goal: "≥ 0.77× (≤ 1.3× the time)" },
        ),
      );
      await host.close();
    }
    // Agents think between calls: with a spare ready, one delegation's latency.
    {
      const host = await createHost({
        sandbox: { root: "root" },
        basePath: base,
        workers,
        warmThreads: 1,
      });
      rows.push(
        await compare(
          "one delegation's latency, spare ready (run noop)",
          () => host.run("noop", 1),
          "one bare new Worker start to first message",
          startBare,
          { time: 3000, beforeEach: () => new Promise((r) => setTimeout(r, 150)), goal: "≥ 10×" },
        ),
      );
      await host.close();
    }
    const idle = 16;
    const startBareIdle = async () => {
      const w = new Worker("setInterval(() => {}, 1 << 30)", { eval: true });
      await new Promise((r) => w.once("online", r));
      return async () => {
        await w.terminate();
      };
    };
    // Warm the allocator first, then measure bare, agents, bare again: RSS
    // deltas are noisy, the order effect should not land on one side.
    await rssPerThread(startBareIdle, idle);
    const bareBefore = await rssPerThread(startBareIdle, idle);
    const host = await createHost({ sandbox: { root: "root" }, basePath: base, workers });
    const agentMb = await rssPerThread(async () => {
      const c = new AbortController();
      const p = host.run("noop", { ms: 60_000 }, { signal: c.signal }).catch(() => {});
      await new Promise((r) => setTimeout(r, 150));
      return async () => {
        c.abort();
        await p;
      };
    }, idle);
    await host.close();
    const bareMb = (bareBefore + (await rssPerThread(startBareIdle, idle))) / 2;
    rows.push({
      name: `memory per idle agent thread (RSS, ${idle} threads)`,
      baseline: "idle bare worker thread",
      hz: agentMb,
      baselineHz: bareMb,
      // MiB, not ops/s: the ratio is agent ÷ bare, lower is better, so the
      // goal is a "≤" one (goal.ts reads it as a maximum).
      ratio: bareMb > 0 ? agentMb / bareMb : 0,
      goal: "≤ 1.3×",
      unit: "MiB",
    });
    return rows;
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
}
