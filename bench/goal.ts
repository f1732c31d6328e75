/**
 * A row's goal, read from its text (`"≥ 0.8×"`, `"≤ 2×"`), and the
 * gross-regression rule CI gates on. No benchmark code here: `--compare`
 * and `--chart` use it without loading tinybench or the library.
 */

/**
 * The numeric goal of a row (`"≥ 0.8×"` → at least 0.8; `"≤ 2×"` → at
 * most 2), or undefined when it has none.
 */
export function parseGoal(
  goal: string | null | undefined,
): { min?: number; max?: number } | undefined {
  const m = /^\s*([≥≤])\s*([0-9.]+)×/.exec(goal ?? "");
  if (!m) return undefined;
  const v = Number(m[2]);
  return m[1] === "≥" ? { min: v } : { max: v };
}

/**
 * True when a row's ratio is a gross regression: below half its "≥" goal,
 * or above twice its "≤" goal. With `recorded` (the same row's ratio in a
 * recorded run), a goal that run missed is replaced by the recorded ratio:
 * the gate then catches a figure that halved, not one still short of its goal.
 */
export function isGrossRegression(
  row: { ratio: number; goal?: string | null },
  recorded?: number,
): boolean {
  const g = parseGoal(row.goal);
  if (!g) return false;
  if (g.min !== undefined) return row.ratio < Math.min(g.min, recorded ?? g.min) / 2;
  return g.max !== undefined && row.ratio > Math.max(g.max, recorded ?? g.max) * 2;
}
