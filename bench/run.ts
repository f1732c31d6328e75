/**
 * `npm run bench`: runs every benchmark module and prints each figure beside
 * its same-run baseline. `--write` also rewrites bench/RESULTS.md.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { cpus, totalmem } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { type BenchRow, CI_MODE, isGrossRegression } from "./lib.js";

const here = dirname(fileURLToPath(import.meta.url));
const only = process.argv.slice(2).filter((a) => !a.startsWith("--"));
const modules = readdirSync(here)
  .filter((f) => f.endsWith(".bench.js"))
  .filter((f) => only.length === 0 || only.some((o) => f.startsWith(o)))
  .sort();

const fmt = (hz: number) => (hz >= 1000 ? `${(hz / 1000).toFixed(1)}k` : hz.toFixed(1));
const lines: string[] = [];
const all: (BenchRow & { bench: string })[] = [];
for (const file of modules) {
  const mod = (await import(pathToFileURL(join(here, file)).href)) as {
    default: () => Promise<BenchRow[]>;
  };
  const rows = await mod.default();
  all.push(...rows.map((r) => ({ bench: file.replace(".bench.js", ""), ...r })));
  lines.push(`\n### ${file.replace(".bench.js", "")}\n`);
  lines.push(
    "| measured | ops/s | baseline | ops/s | ratio | goal |",
    "|---|---:|---|---:|---:|---|",
  );
  for (const r of rows) {
    lines.push(
      `| ${r.name} | ${fmt(r.hz)} | ${r.baseline} | ${fmt(r.baselineHz)} | **${r.ratio.toFixed(2)}×** | ${r.goal ?? ""} |`,
    );
  }
  console.log(lines.slice(-rows.length - 3).join("\n"));
}

const machine = `${cpus().length} × ${cpus()[0]?.model ?? "unknown CPU"}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, ${process.platform}-${process.arch}`;
const header = [
  "# Benchmark results",
  "",
  "Produced by `npm run bench -- --write` (tinybench). Every figure is measured",
  "beside its baseline in the same run; ratio = ops/s of the measured ÷ ops/s of",
  "the baseline (above 1 is faster). Speed is never asserted in tests.",
  "",
  `- date: ${new Date().toISOString().slice(0, 10)}`,
  `- machine: ${machine}`,
  `- node: ${process.version}`,
];
if (process.argv.includes("--write")) {
  // Hand-written notes below the marker survive a rewrite.
  const file = join(here, "../../bench/RESULTS.md");
  const MARK = "<!-- notes: kept by --write -->";
  const old = existsSync(file) ? readFileSync(file, "utf8") : "";
  const notes = old.includes(MARK) ? old.slice(old.indexOf(MARK)) : `${MARK}\n`;
  writeFileSync(file, `${header.join("\n")}\n${lines.join("\n")}\n\n${notes}`);
  console.log("\nwrote bench/RESULTS.md");
}

// bench/results.json: every row of this run, machine-readable (CI reads it).
writeFileSync(
  join(here, "../../bench/results.json"),
  `${JSON.stringify({ date: new Date().toISOString(), node: process.version, machine, ci: CI_MODE, rows: all }, null, 2)}\n`,
);
const regressions = all.filter(isGrossRegression);
if (regressions.length > 0) {
  console.error("\nGross regressions (ratio below half its goal, or above twice a ≤ goal):");
  for (const r of regressions)
    console.error(`- ${r.bench}: ${r.name}: ${r.ratio.toFixed(2)}× (goal ${r.goal})`);
  process.exitCode = 1;
}
