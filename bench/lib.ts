/**
 * Shared benchmark helpers. Every figure is measured beside a baseline in the
 * same run and reported as a ratio (DESIGN §9).
 */
import { Bench } from "tinybench";

/**
 * `npm run bench -- --ci`: short runs, enough to catch a gross regression
 * (a ratio below half its goal), not to record figures.
 */
export const CI_MODE = process.argv.includes("--ci");

/** A measuring time, cut short in CI mode. */
export function benchTime(ms: number): number {
  return CI_MODE ? Math.min(ms, 200) : ms;
}

export { isGrossRegression, parseGoal } from "./goal.js";

/** One compared pair: a subject and its baseline, measured in the same run. */
export interface BenchRow {
  /** What was measured, e.g. "resolve (4 levels deep)". */
  name: string;
  /** What it is compared with, e.g. "fs.realpathSync.native". */
  baseline: string;
  /** Operations per second of the subject. */
  hz: number;
  /** Operations per second of the baseline. */
  baselineHz: number;
  /** hz / baselineHz: above 1 means faster than the baseline. */
  ratio: number;
  /** The goal, stated as text, e.g. "≥ 0.8×". */
  goal?: string;
  /**
   * Set for rows that are not speeds: `hz`/`baselineHz` then hold the
   * figure in this unit and `ratio` is measured ÷ baseline (lower is better).
   */
  unit?: string;
}

/**
 * tinybench decides once whether a task is async by how it is declared; a
 * plain arrow returning a promise would be timed without awaiting it. Wrap
 * any function that returns a promise in a real `async` one.
 */
function awaitable(fn: () => unknown): () => unknown {
  // Declared async: tinybench sees it. Never probe those (a probe call can
  // leave a stray reply behind for tasks that talk to a thread).
  if (fn.constructor.name === "AsyncFunction") return fn;
  const probe = fn();
  if (
    probe === null ||
    typeof probe !== "object" ||
    typeof (probe as { then?: unknown }).then !== "function"
  )
    return fn;
  (probe as Promise<unknown>).catch(() => {});
  return async () => {
    await fn();
  };
}

/**
 * Measures `subject` and `baseline` interleaved in one tinybench run and
 * returns the row. Async functions are awaited.
 */
export async function compare(
  name: string,
  subject: () => unknown,
  baselineName: string,
  baseline: () => unknown,
  opts: { time?: number; goal?: string; beforeEach?: () => Promise<void> } = {},
): Promise<BenchRow> {
  const bench = new Bench({
    time: benchTime(opts.time ?? 500),
    warmupTime: CI_MODE ? 20 : 100,
    // tinybench runs 64 iterations (and 16 to warm up) even past `time`: for
    // a figure of 0.3 s per call that is minutes, which CI's short run skips.
    ...(CI_MODE ? { iterations: 10, warmupIterations: 2 } : {}),
  });
  // Time spent in beforeEach (e.g. letting a spare thread get ready) is not measured.
  const fnOpts = opts.beforeEach ? { beforeEach: opts.beforeEach } : {};
  bench.add(name, awaitable(subject), fnOpts).add(baselineName, awaitable(baseline), fnOpts);
  await bench.run();
  const [a, b] = bench.tasks;
  // A task that threw has no figures: say why, instead of reading nothing.
  for (const t of [a, b]) {
    const error = (t?.result as { error?: unknown } | undefined)?.error;
    if (error !== undefined) throw error;
  }
  const hz = a?.result?.throughput.mean ?? 0;
  const bhz = b?.result?.throughput.mean ?? 0;
  const row: BenchRow = {
    name,
    baseline: baselineName,
    hz,
    baselineHz: bhz,
    ratio: bhz > 0 ? hz / bhz : 0,
  };
  if (opts.goal !== undefined) row.goal = opts.goal;
  return row;
}
