/**
 * Issue 12 pool benchmark: the p99 latency of 1 KiB `ctx.sandbox.readFile`
 * calls from 8 agents (real agent threads) while a 9th agent's grep walks a
 * 20 000-file tree — the grep run in the heavy-work pool, and the same grep
 * run inline on the host's event loop (`grepInProcess`) — beside the same
 * readers' p99 with no grep at all, in one run. Goal: the pool keeps p99
 * within 2× of idle.
 */
import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createSandbox, type Sandbox } from "../src/index.js";
import { type GrepOptions, grepInProcess, grepSandbox, HeavyPool } from "../src/pool/index.js";
import { runAgentThread } from "../src/threads/agent-thread.js";
import { type BenchRow, benchTime, CI_MODE } from "./lib.js";
import { makeBenchTree } from "./tree.js";

const READERS = 8;
const DIRS = 200;
const FILES_PER_DIR = 100;
/** Reading window of one measurement, in ms. */
const WINDOW_MS = benchTime(1_500);
/** Measurements per setting; the median p99 is reported. */
const ROUNDS = CI_MODE ? 1 : 5;
// Relative to dist/bench/ once built.
const fixture = fileURLToPath(new URL("../../test/fixtures/pool/bench-reader.js", import.meta.url));
/** A pattern that is rare, so every grep reads the whole tree. */
const SEARCH: GrepOptions = {
  pattern: "needle-[0-9]+",
  path: "/tree",
  maxMatches: 10_000,
  timeBudgetMs: 60_000,
};

type Setting = "idle" | "pool" | "inline";

/** The `q` quantile of `xs` (nearest rank). */
function quantile(xs: number[], q: number): number {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] ?? Number.NaN;
}

/**
 * 20 000 files of ~1 KiB of text, a few with a match, in a fresh folder. On
 * tmpfs (`/dev/shm`) where there is one: creating 20 000 files on a small
 * machine's disk can take longer than the whole measurement, and after the
 * warm-up every read is served from memory either way.
 */
function makeGrepTree(): { dir: string; cleanup(): void } {
  const parent = existsSync("/dev/shm") ? "/dev/shm" : tmpdir();
  const dir = realpathSync(mkdtempSync(join(parent, "mountbox-bench-grep-")));
  const line = "the quick brown fox jumps over the lazy dog 0123456789\n";
  const body = line.repeat(18);
  for (let d = 0; d < DIRS; d++) {
    const sub = join(dir, `d${d}`);
    mkdirSync(sub);
    for (let f = 0; f < FILES_PER_DIR; f++) {
      const extra = f === 0 ? `needle-${d}\n` : "";
      writeFileSync(join(sub, `f${f}.txt`), body + extra);
    }
  }
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** One measurement: readers' latencies (ms) while `setting`'s grep loops. */
async function measure(
  sandbox: Sandbox,
  pool: HeavyPool,
  setting: Setting,
): Promise<{ p99: number; grepsPerSecond: number }> {
  const flags = new Int32Array(new SharedArrayBuffer(12));
  const readers = Array.from({ length: READERS }, () =>
    runAgentThread({
      module: fixture,
      input: { path: "/small.txt", flags: flags.buffer },
      sandbox,
      timeoutMs: 120_000,
    }),
  );
  while (Atomics.load(flags, 0) < READERS) await new Promise((r) => setTimeout(r, 5));
  let stop = false;
  let greps = 0;
  let grepMs = 0;
  const grep = async () => {
    const t0 = performance.now();
    while (!stop) {
      const r =
        setting === "pool"
          ? await grepSandbox(sandbox, SEARCH, { pool })
          : await grepInProcess(sandbox, SEARCH);
      if (r.matches.length !== DIRS) throw new Error(`grep found ${r.matches.length} matches`);
      greps++;
    }
    grepMs = performance.now() - t0;
  };
  const grepping = setting === "idle" ? Promise.resolve() : grep();
  // Let the grep get going before the readers start.
  await new Promise((r) => setTimeout(r, setting === "idle" ? 0 : 100));
  Atomics.store(flags, 1, 1);
  Atomics.notify(flags, 1);
  await new Promise((r) => setTimeout(r, WINDOW_MS));
  Atomics.store(flags, 2, 1);
  const times = (await Promise.all(readers)).flatMap((r) => r.value as number[]);
  stop = true;
  await grepping;
  return { p99: quantile(times, 0.99), grepsPerSecond: grepMs > 0 ? (greps * 1000) / grepMs : 0 };
}

export default async function benchPool(): Promise<BenchRow[]> {
  const { base, cleanup } = makeBenchTree();
  const tree = makeGrepTree();
  const pool = new HeavyPool();
  try {
    const sandbox = createSandbox(
      { root: "root", mounts: [{ source: tree.dir, target: "/tree", readonly: true }] },
      { basePath: base },
    );
    // Warm-up: module caches, JIT, the pool's thread, the page cache.
    await grepInProcess(sandbox, SEARCH);
    await grepSandbox(sandbox, SEARCH, { pool });
    await measure(sandbox, pool, "idle");
    const p99s: Record<Setting, number[]> = { idle: [], pool: [], inline: [] };
    const grepRate: Record<Setting, number[]> = { idle: [], pool: [], inline: [] };
    for (let i = 0; i < ROUNDS; i++) {
      // Interleaved, so drift in the machine's load touches all three alike.
      for (const setting of ["idle", "pool", "inline"] as const) {
        const m = await measure(sandbox, pool, setting);
        p99s[setting].push(m.p99);
        grepRate[setting].push(m.grepsPerSecond);
      }
    }
    const idle = quantile(p99s.idle, 0.5);
    const withPool = quantile(p99s.pool, 0.5);
    const inline = quantile(p99s.inline, 0.5);
    const what = `${READERS} agents' 1 KiB readFile p99 while a 9th greps ${DIRS * FILES_PER_DIR} files`;
    return [
      {
        name: `${what}, grep in the pool`,
        baseline: "the same reads, no grep",
        hz: withPool,
        baselineHz: idle,
        ratio: withPool / idle,
        unit: "ms",
        goal: "≤ 2×",
      },
      {
        name: `${what}, grep inline on the host's event loop`,
        baseline: "the same reads, no grep",
        hz: inline,
        baselineHz: idle,
        ratio: inline / idle,
        unit: "ms",
      },
      {
        name: `greps of ${DIRS * FILES_PER_DIR} files per second in the pool, 8 agents reading`,
        baseline: "inline on the host's event loop",
        hz: quantile(grepRate.pool, 0.5),
        baselineHz: quantile(grepRate.inline, 0.5),
        ratio: quantile(grepRate.pool, 0.5) / quantile(grepRate.inline, 0.5),
      },
    ];
  } finally {
    await pool.close();
    tree.cleanup();
    cleanup();
  }
}
