/**
 * The impure side of tracking: the commit and machine a run measures,
 * bench/runs/ on disk, and the commit order the chart needs (from git).
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { cpus, loadavg, totalmem } from "node:os";
import { join } from "node:path";
import { orderRuns, renderRatioChart } from "./chart.js";
import {
  type BenchRun,
  nameRunFile,
  type RunCommit,
  type RunMachine,
  readBenchRun,
} from "./track.js";

/** Runs git in `cwd`; its trimmed stdout, or undefined when git fails or is missing. */
function runGit(cwd: string, args: string[]): string | undefined {
  const r = spawnSync("git", args, { cwd, encoding: "utf8", maxBuffer: 64 * 2 ** 20 });
  return r.status === 0 ? r.stdout.trim() : undefined;
}

/**
 * HEAD and whether tracked files differ from it (untracked files do not
 * count: a checkout has build output and caches beside it), or null outside git.
 */
export function readCommit(repo: string): RunCommit | null {
  const sha = runGit(repo, ["rev-parse", "HEAD"]);
  if (!sha) return null;
  const status = runGit(repo, ["status", "--porcelain", "--untracked-files=no"]);
  return { sha, dirty: status === undefined || status !== "" };
}

/** This machine: CPU model and count, memory, platform, and the load as the run starts. */
export function readMachine(): RunMachine {
  const list = cpus();
  return {
    cpu: list[0]?.model.trim() ?? "unknown CPU",
    cpus: list.length,
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    platform: process.platform,
    arch: process.arch,
    loadavg: loadavg().map((l) => Math.round(l * 100) / 100),
  };
}

/** Writes a run into `dir` under its default name (`-2`, `-3`… when taken); returns the file name. */
export function writeRunFile(dir: string, run: BenchRun): string {
  mkdirSync(dir, { recursive: true });
  const base = nameRunFile(run).replace(/\.json$/, "");
  let name = `${base}.json`;
  for (let n = 2; existsSync(join(dir, name)); n++) name = `${base}-${n}.json`;
  writeFileSync(join(dir, name), `${JSON.stringify(run, null, 2)}\n`);
  return name;
}

/** Reads every run in `dir` (none when it does not exist), each checked; in file-name order. */
export function readRunDir(dir: string): BenchRun[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => f.endsWith(".json"))
    .sort()
    .map((f) => readBenchRun(join(dir, f)));
}

/** Draws the chart of `runsDir`'s runs, in commit order, into `svgFile`; returns how many runs. */
export function writeChart(repo: string, runsDir: string, svgFile: string): number {
  const history = runGit(repo, ["rev-list", "--reverse", "HEAD"])?.split("\n") ?? [];
  const runs = orderRuns(readRunDir(runsDir), history);
  writeFileSync(svgFile, renderRatioChart(runs));
  return runs.length;
}
