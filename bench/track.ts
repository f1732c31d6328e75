/**
 * Recorded bench runs: the JSON shape `npm run bench -- --json` writes, its
 * validation, and `--compare A.json B.json`. Pure apart from reading a file:
 * no benchmark, tinybench or library code is loaded, so comparing two runs
 * only reads JSON.
 */
import { readFileSync } from "node:fs";
import { parseGoal } from "./goal.js";

/** What a run file says it is: anything else is refused by {@link parseBenchRun}. */
export const RUN_KIND = "mountbox-bench-run";

/** The run-file version this runner writes and reads. */
export const RUN_VERSION = 1;

/** A change of a ratio larger than this (10%) against or toward its goal is marked. */
export const MARK_THRESHOLD = 0.1;

/** One figure of a recorded run: a subject beside its same-run baseline. */
export interface RunRow {
  /** The bench module, e.g. "core" (bench/core.bench.ts). */
  module: string;
  /** What was measured. */
  name: string;
  /** What it was compared with, in the same run. */
  baseline: string;
  /** Operations per second of the subject (or the figure in `unit`). */
  hz: number;
  /** Operations per second of the baseline (or the figure in `unit`). */
  baselineHz: number;
  /** hz ÷ baselineHz. */
  ratio: number;
  /** The goal as text (`"≥ 0.8×"`), or null when the row has none. */
  goal: string | null;
  /** Set for rows that are not speeds (then lower is better), else null. */
  unit: string | null;
}

/** The commit a run measured: HEAD, and whether tracked files differed from it. */
export interface RunCommit {
  /** `git rev-parse HEAD`. */
  sha: string;
  /** True when tracked files had uncommitted changes as the run started. */
  dirty: boolean;
}

/** The machine a run measured on. */
export interface RunMachine {
  /** CPU model (first core's). */
  cpu: string;
  /** Logical CPU count. */
  cpus: number;
  /** Total memory in GiB, rounded. */
  memoryGiB: number;
  /** `process.platform`. */
  platform: string;
  /** `process.arch`. */
  arch: string;
  /** 1, 5 and 15-minute load averages as the run started: says how quiet it was. */
  loadavg: number[];
}

/** A recorded run: every figure, with commit, Node version, machine and date. */
export interface BenchRun {
  kind: typeof RUN_KIND;
  version: typeof RUN_VERSION;
  /** ISO date and time the run started. */
  date: string;
  /** null when the runner was not in a git checkout. */
  commit: RunCommit | null;
  /** `process.version`, e.g. "v20.20.2". */
  node: string;
  machine: RunMachine;
  /** True for `--ci` runs: short, only good for catching gross regressions. */
  ci: boolean;
  /** The modules whose rows the run holds (all of them unless the run was filtered). */
  modules: string[];
  /** Modules that failed in this run: their rows are missing. */
  failed: string[];
  rows: RunRow[];
}

/** A refused input of `--compare` or `--chart`: the message says what is expected. */
export class BenchInputError extends Error {
  /** Stable code for scripts. */
  readonly code = "bench_input_invalid";
  override name = "BenchInputError";
}

const EXPECTED = "give files written by `npm run bench -- --json` (bench/runs/*.json)";

/** A row as the runner collects it: lib.ts's BenchRow plus its module. */
export interface CollectedRow {
  module: string;
  name: string;
  baseline: string;
  hz: number;
  baselineHz: number;
  ratio: number;
  goal?: string;
  unit?: string;
}

/** Builds the run record, with every row in one fixed shape (absent goal/unit → null). */
export function makeBenchRun(
  meta: Omit<BenchRun, "kind" | "version" | "rows">,
  rows: CollectedRow[],
): BenchRun {
  return {
    kind: RUN_KIND,
    version: RUN_VERSION,
    date: meta.date,
    commit: meta.commit,
    node: meta.node,
    machine: meta.machine,
    ci: meta.ci,
    modules: meta.modules,
    failed: meta.failed,
    rows: rows.map(normalizeRow),
  };
}

/** A collected row in the recorded shape: fixed key order, absent goal/unit → null. */
export function normalizeRow(r: CollectedRow): RunRow {
  return {
    module: r.module,
    name: r.name,
    baseline: r.baseline,
    hz: r.hz,
    baselineHz: r.baselineHz,
    ratio: r.ratio,
    goal: r.goal ?? null,
    unit: r.unit ?? null,
  };
}

/** The file name a run is recorded under: `<date>-<short sha>[-dirty]-node<major>[-ci].json`. */
export function nameRunFile(run: BenchRun): string {
  const major = /^v?(\d+)/.exec(run.node)?.[1] ?? "x";
  const sha = run.commit ? run.commit.sha.slice(0, 7) : "nogit";
  const dirty = run.commit?.dirty ? "-dirty" : "";
  return `${run.date.slice(0, 10)}-${sha}${dirty}-node${major}${run.ci ? "-ci" : ""}.json`;
}

/** The short label of a run's commit: 7 hex digits, "+" when the tree was dirty. */
export function labelCommit(run: BenchRun): string {
  if (!run.commit) return "no git";
  return `${run.commit.sha.slice(0, 7)}${run.commit.dirty ? "+" : ""}`;
}

/** One line describing the machine, e.g. "2 × AMD EPYC 7B13, 24 GiB, linux-x64". */
export function formatMachine(m: RunMachine): string {
  return `${m.cpus} × ${m.cpu}, ${m.memoryGiB} GiB, ${m.platform}-${m.arch}`;
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** Says which field of a row is wrong, or undefined when it is a row. */
function findRowProblem(row: unknown): string | undefined {
  if (!isObject(row)) return "it is not an object";
  for (const key of ["module", "name", "baseline"])
    if (typeof row[key] !== "string") return `"${key}" is not a string`;
  for (const key of ["hz", "baselineHz", "ratio"])
    if (typeof row[key] !== "number" || !Number.isFinite(row[key]))
      return `"${key}" is not a finite number`;
  for (const key of ["goal", "unit"])
    if (row[key] !== null && row[key] !== undefined && typeof row[key] !== "string")
      return `"${key}" is neither text nor null`;
  return undefined;
}

/**
 * Parses and checks a run file's text; `label` names it in messages (the
 * path as the user gave it). Throws {@link BenchInputError} saying what is
 * wrong and what is expected.
 */
export function parseBenchRun(text: string, label: string): BenchRun {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    throw new BenchInputError(`${label}: not JSON — ${EXPECTED}`);
  }
  if (!isObject(data) || data.kind !== RUN_KIND)
    throw new BenchInputError(`${label}: not a bench run (no "kind": "${RUN_KIND}") — ${EXPECTED}`);
  if (data.version !== RUN_VERSION)
    throw new BenchInputError(
      `${label}: bench run version ${JSON.stringify(data.version)}; this runner reads version ${RUN_VERSION} — record the run again with this checkout`,
    );
  if (typeof data.date !== "string" || typeof data.node !== "string" || !isObject(data.machine))
    throw new BenchInputError(
      `${label}: not a bench run ("date", "node" or "machine" missing) — ${EXPECTED}`,
    );
  if (!Array.isArray(data.rows))
    throw new BenchInputError(`${label}: not a bench run ("rows" is not a list) — ${EXPECTED}`);
  data.rows.forEach((row, i) => {
    const problem = findRowProblem(row);
    if (problem) throw new BenchInputError(`${label}: row ${i + 1} is not a bench row: ${problem}`);
  });
  const rows = (data.rows as Record<string, unknown>[]).map((r) => ({
    ...(r as unknown as RunRow),
    goal: (r.goal as string | undefined) ?? null,
    unit: (r.unit as string | undefined) ?? null,
  }));
  const failed = Array.isArray(data.failed) ? data.failed.filter((m) => typeof m === "string") : [];
  return { ...(data as unknown as BenchRun), ci: data.ci === true, failed, rows };
}

/** Reads and checks a run file; a missing or unreadable file is a {@link BenchInputError}. */
export function readBenchRun(path: string): BenchRun {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why =
      code === "ENOENT"
        ? "no such file"
        : code === "EISDIR"
          ? "a folder, not a file"
          : `unreadable (${code})`;
    throw new BenchInputError(`${path}: ${why} — ${EXPECTED}`);
  }
  return parseBenchRun(text, path);
}

/** One row present in both runs. */
export interface ComparedRow {
  module: string;
  name: string;
  baseline: string;
  /** The ratio in A and in B. */
  a: number;
  b: number;
  /** B ÷ A − 1 (0.1 = 10% higher), or null when A's ratio is 0. */
  change: number | null;
  /** B's goal (A's when B has none). */
  goal: string | null;
  /** "worse" or "better" when the ratio moved against or toward its goal by more than 10%. */
  mark: "worse" | "better" | null;
}

/** The comparison of two runs. */
export interface Comparison {
  rows: ComparedRow[];
  onlyA: RunRow[];
  onlyB: RunRow[];
}

/**
 * Keys each row by module, name and baseline; a repeat of the same key in
 * one run gets its occurrence number, so the n-th matches the n-th.
 */
function keyRows(rows: RunRow[]): Map<string, RunRow> {
  const keyed = new Map<string, RunRow>();
  const seen = new Map<string, number>();
  for (const row of rows) {
    const base = JSON.stringify([row.module, row.name, row.baseline]);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    keyed.set(`${base}#${n}`, row);
  }
  return keyed;
}

/**
 * Whether a change moved a ratio against or toward its goal by more than
 * {@link MARK_THRESHOLD}; rows without a goal get no mark.
 */
export function markChange(change: number | null, goal: string | null): "worse" | "better" | null {
  const g = parseGoal(goal);
  if (!g || change === null || Math.abs(change) <= MARK_THRESHOLD) return null;
  // A "≥" goal wants the ratio up; a "≤" goal wants it down.
  const up = change > 0;
  return (g.min !== undefined) === up ? "better" : "worse";
}

/** Matches the rows of two runs (module + name + baseline) and computes each change. */
export function compareRuns(a: BenchRun, b: BenchRun): Comparison {
  const ka = keyRows(a.rows);
  const kb = keyRows(b.rows);
  const rows: ComparedRow[] = [];
  const onlyB: RunRow[] = [];
  for (const [key, rb] of kb) {
    const ra = ka.get(key);
    if (!ra) {
      onlyB.push(rb);
      continue;
    }
    const change = ra.ratio === 0 ? null : rb.ratio / ra.ratio - 1;
    const goal = rb.goal ?? ra.goal;
    rows.push({
      module: rb.module,
      name: rb.name,
      baseline: rb.baseline,
      a: ra.ratio,
      b: rb.ratio,
      change,
      goal,
      mark: markChange(change, goal),
    });
  }
  const onlyA = [...ka].filter(([key]) => !kb.has(key)).map(([, row]) => row);
  return { rows, onlyA, onlyB };
}

/** A ratio as the tables print it: 2 decimals, 2 significant digits below 0.1. */
export function formatRatio(r: number): string {
  return `${r >= 0.1 || r === 0 ? r.toFixed(2) : r.toPrecision(2)}×`;
}

/** A change as a signed percent with one decimal, e.g. "+12.5%", "-3.0%". */
export function formatChange(change: number | null): string {
  if (change === null) return "n/a";
  // Rounded first, so that -0.04% prints as +0.0%, not -0.0%.
  const pct = Math.round(change * 1000) / 10;
  return `${pct >= 0 ? "+" : ""}${(pct === 0 ? 0 : pct).toFixed(1)}%`;
}

/** One line saying what a run is: file, commit, Node, machine, date, kind of run. */
function describeRun(label: string, run: BenchRun): string {
  const failed = run.failed.length > 0 ? ` (failed: ${run.failed.join(", ")})` : "";
  const kind = `${run.ci ? "--ci run (short)" : "full run"}${failed}`;
  const load =
    run.machine.loadavg[0] !== undefined ? `, load ${run.machine.loadavg[0].toFixed(1)}` : "";
  return `${label}: ${labelCommit(run)}, node ${run.node}, ${formatMachine(run.machine)}${load}, ${run.date.slice(0, 10)}, ${kind}`;
}

const cell = (s: string) => s.replaceAll("|", "\\|");

/** The printed comparison: both runs described, a table of every shared row, then rows in one run only. */
export function formatComparison(
  c: Comparison,
  a: { label: string; run: BenchRun },
  b: { label: string; run: BenchRun },
): string {
  const out = [describeRun(`A ${a.label}`, a.run), describeRun(`B ${b.label}`, b.run)];
  const differs: string[] = [];
  if (formatMachine(a.run.machine) !== formatMachine(b.run.machine)) differs.push("machines");
  if (a.run.node !== b.run.node) differs.push("Node versions");
  if (a.run.ci !== b.run.ci) differs.push("kinds of run (--ci is short and noisy)");
  if (differs.length > 0)
    out.push(`Note: different ${differs.join(", ")}: changes may come from that, not the code.`);
  out.push(
    "",
    "| module | measured | baseline | A | B | change | goal | |",
    "|---|---|---|---:|---:|---:|---|---|",
  );
  for (const r of c.rows) {
    const mark = r.mark === "worse" ? "✖ worse" : r.mark === "better" ? "✓ better" : "";
    out.push(
      `| ${r.module} | ${cell(r.name)} | ${cell(r.baseline)} | ${formatRatio(r.a)} | ${formatRatio(r.b)} | ${formatChange(r.change)} | ${r.goal ?? ""} | ${mark} |`,
    );
  }
  out.push(
    "",
    `change = B ÷ A − 1. ✖ / ✓: moved against / toward its goal by more than ${MARK_THRESHOLD * 100}%.`,
  );
  for (const [title, rows] of [
    ["Only in A", c.onlyA],
    ["Only in B", c.onlyB],
  ] as const) {
    if (rows.length === 0) continue;
    out.push("", `${title} (${rows.length}):`);
    for (const r of rows)
      out.push(`- ${r.module}: ${r.name} vs ${r.baseline} (${formatRatio(r.ratio)})`);
  }
  return out.join("\n");
}
