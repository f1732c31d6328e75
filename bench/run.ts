/**
 * `npm run bench`: runs every benchmark module and prints each figure beside
 * its same-run baseline (CI's log shows these tables). `--write` also
 * rewrites bench/RESULTS.md; `--json [FILE]` records the run (bench/runs/ by
 * default) with commit, Node and machine; `--compare A.json B.json` prints
 * the change of every ratio; `--chart` redraws bench/ratios.svg. Only the
 * benchmark modules load tinybench and the library: comparing and charting
 * read JSON.
 */
import { spawnSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { type BenchArgs, parseBenchArgs } from "./args.js";
import { findGrossRegressions, pickRecordedRun } from "./gate.js";
import { readCommit, readMachine, readRunDir, writeChart, writeRunFile } from "./record.js";
import { formatModuleTable, formatResultsHeader, mergeResults } from "./results-md.js";
import {
  BenchInputError,
  type CollectedRow,
  compareRuns,
  formatComparison,
  makeBenchRun,
  normalizeRow,
  readBenchRun,
} from "./track.js";

const here = dirname(fileURLToPath(import.meta.url));
// Compiled to dist/bench/: the repository is two folders up.
const repo = join(here, "../..");
const benchDir = join(repo, "bench");
const runsDir = join(benchDir, "runs");
const chartFile = join(benchDir, "ratios.svg");

/** `--module F --rows-to PATH`: runs one module in this process and writes its rows. */
async function runChild(child: NonNullable<BenchArgs["child"]>): Promise<void> {
  const mod = (await import(pathToFileURL(join(here, child.module)).href)) as {
    default: () => Promise<CollectedRow[]>;
  };
  writeFileSync(child.rowsTo, JSON.stringify(await mod.default()));
  // Threads, servers or timers a module left behind must not keep the child alive.
  process.exit(0);
}

/**
 * Runs one module in a fresh Node process: what earlier modules left behind
 * must not weigh on it (a host grown to 1.5 GB RSS by earlier modules made
 * each process spawn 50× slower — fork copies its page tables).
 */
function runModule(file: string, ci: boolean): Omit<CollectedRow, "module">[] {
  const dir = mkdtempSync(join(tmpdir(), "mountbox-bench-rows-"));
  try {
    const out = join(dir, "rows.json");
    const r = spawnSync(
      process.execPath,
      [fileURLToPath(import.meta.url), ...(ci ? ["--ci"] : []), "--module", file, "--rows-to", out],
      { stdio: ["ignore", "inherit", "inherit"] },
    );
    if (r.status !== 0) throw new Error(`bench module ${file} failed (exit ${r.status})`);
    return JSON.parse(readFileSync(out, "utf8")) as Omit<CollectedRow, "module">[];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Redraws bench/ratios.svg from bench/runs/ and says so. */
function redrawChart(): void {
  const n = writeChart(repo, runsDir, chartFile);
  console.log(`drew bench/ratios.svg from ${n} recorded run${n === 1 ? "" : "s"} in bench/runs/`);
}

/** Runs the benchmarks, prints their tables, records and gates as asked. */
function runBenchmarks(args: BenchArgs): void {
  const modules = readdirSync(here)
    .filter((f) => f.endsWith(".bench.js"))
    .filter((f) => args.only.length === 0 || args.only.some((o) => f.startsWith(o)))
    .sort();
  // Taken before anything runs or is written: the code measured is HEAD's (+ uncommitted changes).
  const meta = {
    date: new Date().toISOString(),
    commit: readCommit(repo),
    node: process.version,
    machine: readMachine(),
    ci: args.ci,
  };
  const tables: string[] = [];
  const collected: CollectedRow[] = [];
  const ran: string[] = [];
  const failed: string[] = [];
  for (const file of modules) {
    const module = file.replace(".bench.js", "");
    let rows: CollectedRow[];
    const started = performance.now();
    try {
      rows = runModule(file, args.ci).map((r) => ({ module, ...r }));
    } catch (err) {
      // One failing module must not lose the others' figures: go on, record it, fail at the end.
      console.error(`\n${(err as Error).message}: its rows are missing from this run`);
      failed.push(module);
      continue;
    }
    ran.push(module);
    collected.push(...rows);
    const table = formatModuleTable(module, rows.map(normalizeRow));
    tables.push(...table);
    // The time each module takes: CI's budget is spent here too.
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    console.log(`${table.join("\n")}\n\n(${module}: ${seconds} s)`);
  }
  const run = makeBenchRun({ ...meta, modules: ran, failed }, collected);
  const held = pickRecordedRun(existsSync(runsDir) ? readRunDir(runsDir) : [], meta.node);

  // bench/results.json (not committed): the last run, in the same shape as a recorded one.
  writeFileSync(join(benchDir, "results.json"), `${JSON.stringify(run, null, 2)}\n`);
  let recorded: string | null = null;
  if (args.json?.file) {
    mkdirSync(dirname(args.json.file), { recursive: true });
    writeFileSync(args.json.file, `${JSON.stringify(run, null, 2)}\n`);
    console.log(`\nwrote ${args.json.file}`);
  } else if (args.json || args.write) {
    recorded = `bench/runs/${writeRunFile(runsDir, run)}`;
    console.log(`\nrecorded ${recorded}`);
  }
  if (args.write) {
    const file = join(benchDir, "RESULTS.md");
    const old = existsSync(file) ? readFileSync(file, "utf8") : "";
    const header = formatResultsHeader(run, recorded);
    writeFileSync(file, mergeResults(old, header, tables));
    console.log("wrote bench/RESULTS.md");
  }
  if (recorded) redrawChart();

  if (failed.length > 0) {
    console.error(`\nFailed modules (their rows are missing): ${failed.join(", ")}`);
    process.exitCode = 1;
  }
  // Held to the last recorded run before this one (read before it was added).
  const regressions = findGrossRegressions(run, held);
  if (regressions.length > 0) {
    console.error(
      "\nGross regressions (a ratio below half its goal, or below half a recorded ratio that missed it):",
    );
    for (const { row: r, recorded: was } of regressions)
      console.error(
        `- ${r.module}: ${r.name}: ${r.ratio.toFixed(2)}× (goal ${r.goal}${was === null ? "" : `; recorded ${was.toFixed(2)}×`})`,
      );
    process.exitCode = 1;
  } else if (args.ci && failed.length === 0) {
    console.log(
      `\nNo gross regression in ${run.rows.length} rows (a ratio below half a ≥ goal, or above twice a ≤ goal; for a goal the last recorded run missed, half or twice its ratio).`,
    );
  }
}

try {
  const args = parseBenchArgs(process.argv.slice(2));
  if (args.child) await runChild(args.child);
  else if (args.compare) {
    const [fa, fb] = args.compare;
    const a = readBenchRun(fa);
    const b = readBenchRun(fb);
    console.log(formatComparison(compareRuns(a, b), { label: fa, run: a }, { label: fb, run: b }));
  } else if (args.chart) redrawChart();
  else runBenchmarks(args);
} catch (err) {
  if (!(err instanceof BenchInputError)) throw err;
  console.error(`bench: ${err.message}`);
  process.exitCode = 2;
}
