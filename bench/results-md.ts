/**
 * The printed tables and bench/RESULTS.md, as text: the runner prints the
 * tables (CI's log shows them) and `--write` rewrites the file, keeping the
 * hand-written notes below {@link NOTES_MARK}.
 */
import { type BenchRun, formatMachine, labelCommit, type RunRow } from "./track.js";

/** Everything from this line on in bench/RESULTS.md survives `--write`. */
export const NOTES_MARK = "<!-- notes: kept by --write -->";

const fmt = (hz: number) => (hz >= 1000 ? `${(hz / 1000).toFixed(1)}k` : hz.toFixed(1));

/** One module's rows as a markdown table under its heading. */
export function formatModuleTable(module: string, rows: RunRow[]): string[] {
  return [
    `\n### ${module}\n`,
    "| measured | ops/s | baseline | ops/s | ratio | goal |",
    "|---|---:|---|---:|---:|---|",
    ...rows.map(
      (r) =>
        `| ${r.name} | ${fmt(r.hz)} | ${r.baseline} | ${fmt(r.baselineHz)} | **${r.ratio.toFixed(2)}×** | ${r.goal ?? ""} |`,
    ),
  ];
}

/** The generated head of bench/RESULTS.md: how it is made, the chart, and the run's facts. */
export function formatResultsHeader(run: BenchRun, runFile: string | null): string[] {
  return [
    "# Benchmark results",
    "",
    "Produced by `npm run bench -- --write` (tinybench). Every figure is measured",
    "beside its baseline in the same run; ratio = ops/s of the measured ÷ ops/s of",
    "the baseline (above 1 is faster). Speed is never asserted in tests.",
    "",
    "Each `--write` (and each `--json`) also records the run in `bench/runs/`",
    "(committed: the chart's history) and redraws the chart of the tracked",
    "ratios over the recorded runs; `npm run bench -- --compare A.json B.json`",
    "prints the change of every ratio between two of them.",
    "",
    "![Tracked ratios over the recorded runs](ratios.svg)",
    "",
    `- date: ${run.date.slice(0, 10)}`,
    `- commit: ${labelCommit(run)}${runFile ? ` (recorded as \`${runFile}\`)` : ""}`,
    `- machine: ${formatMachine(run.machine)}, load ${run.machine.loadavg.map((l) => l.toFixed(1)).join(" / ")} at the start`,
    `- node: ${run.node}`,
  ];
}

/**
 * The new bench/RESULTS.md: header and tables from this run, then the old
 * file's notes from {@link NOTES_MARK} on (the mark alone when it had none).
 */
export function mergeResults(old: string, header: string[], tables: string[]): string {
  const notes = old.includes(NOTES_MARK) ? old.slice(old.indexOf(NOTES_MARK)) : `${NOTES_MARK}\n`;
  return `${header.join("\n")}\n${tables.join("\n")}\n\n${notes}`;
}
