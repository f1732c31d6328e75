/**
 * Runtime II benchmarks: a delegation round trip (spawn the callee's thread
 * with its derived sandbox, run a no-op, return) against a bare `new Worker`
 * start to first message, in the same run; and memory per idle agent thread
 * against a bare idle worker thread.
 */
import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { Worker } from "node:worker_threads";
import { createHost } from "../src/index.js";
import { type BenchRow, compare } from "./lib.js";

const fixture = (name: string) =>
  fileURLToPath(new URL(`../../test/fixtures/host/${name}`, import.meta.url));
const HOPS = 10;
const run = promisify(execFile);

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

/** Per-thread RSS of `count` idle threads of `kind`, measured in a fresh child process. */
async function measureMemory(kind: "bare" | "agent", count: number): Promise<number> {
  const script = fileURLToPath(new URL("./host-memory.js", import.meta.url));
  const { stdout } = await run(process.execPath, ["--expose-gc", script, kind, String(count)]);
  const mb = Number(stdout.trim().split("\n").at(-1));
  if (!Number.isFinite(mb)) throw new Error(`host-memory.js ${kind}: no figure in ${stdout}`);
  return mb;
}

function mean(xs: number[]): number {
  return xs.reduce((s, x) => s + x, 0) / xs.length;
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
    // Each side in fresh processes of its own (see host-memory.ts), alternated.
    const idle = 16;
    const bareRuns: number[] = [];
    const agentRuns: number[] = [];
    for (let i = 0; i < 2; i++) {
      bareRuns.push(await measureMemory("bare", idle));
      agentRuns.push(await measureMemory("agent", idle));
    }
    const bareMb = mean(bareRuns);
    const agentMb = mean(agentRuns);
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
