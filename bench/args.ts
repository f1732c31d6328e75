/**
 * The bench runner's arguments: `npm run bench -- [modules…] [--ci]
 * [--write] [--json [FILE.json]]`, `--compare A.json B.json`, `--chart`.
 */
import { BenchInputError } from "./track.js";

/** What the runner was asked to do. */
export interface BenchArgs {
  /** Short runs and the gross-regression gate. */
  ci: boolean;
  /** Rewrite bench/RESULTS.md (and record the run, and redraw the chart). */
  write: boolean;
  /** Record the run: into FILE, or into bench/runs/ when `file` is null. */
  json: { file: string | null } | null;
  /** Compare two recorded runs and do nothing else. */
  compare: [string, string] | null;
  /** Redraw bench/ratios.svg from bench/runs/ and do nothing else. */
  chart: boolean;
  /** Module-name prefixes to run (all when empty). */
  only: string[];
  /** Set in the child process that runs one module. */
  child: { module: string; rowsTo: string } | null;
}

const USAGE =
  "usage: npm run bench -- [module…] [--ci] [--write] [--json [FILE.json]] | --compare A.json B.json | --chart";

/** Parses the runner's arguments; a wrong one is a {@link BenchInputError} with the usage. */
export function parseBenchArgs(argv: string[]): BenchArgs {
  const args: BenchArgs = {
    ci: false,
    write: false,
    json: null,
    compare: null,
    chart: false,
    only: [],
    child: null,
  };
  const operand = (i: number) =>
    argv[i] !== undefined && !argv[i]!.startsWith("--") ? argv[i] : undefined;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === "--ci") args.ci = true;
    else if (a === "--write") args.write = true;
    else if (a === "--chart") args.chart = true;
    else if (a === "--json") {
      // Only a name ending in .json is the file: `--json port` runs the port module.
      const file = operand(i + 1);
      args.json = { file: file?.endsWith(".json") ? file : null };
      if (args.json.file) i++;
    } else if (a === "--compare") {
      const [x, y] = [operand(i + 1), operand(i + 2)];
      if (x === undefined || y === undefined)
        throw new BenchInputError(`--compare needs two run files (A, then B) — ${USAGE}`);
      args.compare = [x, y];
      i += 2;
    } else if (a === "--module" || a === "--rows-to") {
      const value = operand(i + 1);
      if (value === undefined)
        throw new BenchInputError(`${a} needs a value (internal) — ${USAGE}`);
      args.child = {
        module: "",
        rowsTo: "",
        ...args.child,
        [a === "--module" ? "module" : "rowsTo"]: value,
      };
      i++;
    } else if (a.startsWith("--")) throw new BenchInputError(`unknown option ${a} — ${USAGE}`);
    else args.only.push(a);
  }
  const others = args.ci || args.write || args.json !== null || args.only.length > 0;
  if (args.compare && (others || args.chart))
    throw new BenchInputError(`--compare only reads two run files: give it alone — ${USAGE}`);
  if (args.chart && others)
    throw new BenchInputError(
      `--chart only redraws bench/ratios.svg from bench/runs/: give it alone (--write and --json redraw it too) — ${USAGE}`,
    );
  return args;
}
