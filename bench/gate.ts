/**
 * CI's gross-regression gate. A row fails when its ratio is below half its
 * "≥" goal (or above twice its "≤" goal) — or, for a goal the last recorded
 * run on the same Node missed, below half (above twice) that run's ratio: a
 * goal not met yet is no regression, a figure that halved since is.
 */
import { isGrossRegression } from "./goal.js";
import { type BenchRun, compareRuns, type RunRow } from "./track.js";

/** A row that failed the gate, with the bound it failed. */
export interface GateFailure {
  row: RunRow;
  /** The recorded ratio the gate measured against, when it did. */
  recorded: number | null;
}

/** The newest recorded full run (not `--ci`) on `node`'s major, else the newest of any. */
export function pickRecordedRun(runs: BenchRun[], node: string): BenchRun | undefined {
  const major = (v: string) => v.replace(/^v/, "").split(".")[0];
  const full = runs.filter((r) => !r.ci).sort((a, b) => a.date.localeCompare(b.date));
  const same = full.filter((r) => major(r.node) === major(node));
  return (same.length > 0 ? same : full).at(-1);
}

/** The rows of `run` that fail the gate, given the recorded run to hold them to. */
export function findGrossRegressions(run: BenchRun, recorded?: BenchRun): GateFailure[] {
  const before = new Map<RunRow, number>();
  if (recorded) {
    const { rows } = compareRuns(recorded, run);
    // compareRuns keeps run's rows in order; match them back by key fields.
    const left = [...run.rows];
    for (const c of rows) {
      const i = left.findIndex(
        (r) => r.module === c.module && r.name === c.name && r.baseline === c.baseline,
      );
      if (i >= 0) before.set(left.splice(i, 1)[0]!, c.a);
    }
  }
  return run.rows
    .filter((row) => isGrossRegression(row, before.get(row)))
    .map((row) => ({ row, recorded: before.get(row) ?? null }));
}
