/**
 * `npm run bench`: runs every benchmark module and prints each figure beside
 * its same-run baseline. `--write` also rewrites bench/RESULTS.md.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { cpus, tmpdir, totalmem } from "node:os";
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

// `--module F --rows-to PATH`: run one module here and write its rows (the
// parent runs each module so, in a fresh process).
const childAt = process.argv.indexOf("--module");
if (childAt !== -1) {
  const file = process.argv[childAt + 1] as string;
  const out = process.argv[process.argv.indexOf("--rows-to") + 1] as string;
  const mod = (await import(pathToFileURL(join(here, file)).href)) as {
    default: () => Promise<BenchRow[]>;
  };
  writeFileSync(out, JSON.stringify(await mod.default()));
  process.exit(0);
}

/**
 * Runs one module in a fresh Node process: what earlier modules left behind
 * must not weigh on it (a host grown to 1.5 GB RSS by earlier modules made
 * each process spawn 50× slower — fork copies its page tables).
 */
function runModule(file: string): BenchRow[] {
  const dir = mkdtempSync(join(tmpdir(), "mountbox-bench-rows-"));
  try {
    const out = join(dir, "rows.json");
    const flags = process.argv.slice(2).filter((a) => a.startsWith("--") && a !== "--write");
    const r = spawnSync(
      process.execPath,
      [fileURLToPath(import.meta.url), ...flags, "--module", file, "--rows-to", out],
      { stdio: ["ignore", "inherit", "inherit"] },
    );
    if (r.status !== 0) throw new Error(`bench module ${file} failed (exit ${r.status})`);
    return JSON.parse(readFileSync(out, "utf8")) as BenchRow[];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const lines: string[] = [];
const all: (BenchRow & { bench: string })[] = [];
for (const file of modules) {
  const rows = runModule(file);
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
