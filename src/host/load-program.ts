/**
 * `loadProgram(dir)`: reads `dir/program.yaml` and `dir/workers/*.worker` and
 * returns the options `createHost` takes (DESIGN §3, §7).
 *
 * Every problem is a ConfigError naming the file relative to `dir`
 * (`program.yaml`, `workers/analyzer.worker`) and the key path; all issues in
 * one file are reported together. These are setup errors, thrown to the
 * host's own code: a file or folder that is missing is also named by the host
 * path it was looked for at (its developer needs it). Nothing here reaches a
 * thread or a model.
 */
import { realpathSync } from "node:fs";
import { readdir, readFile, stat } from "node:fs/promises";
import { isAbsolute, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { checkWorkerSandboxes } from "../agents/worker-sandbox-check.js";
import { parseYamlText, splitWorkerFile } from "../config/config-text.js";
import { parseProgramFile } from "../config/program-config.js";
import type { SandboxConfig } from "../config/sandbox-config.js";
import {
  checkWorkerName,
  type ParseWorkerOptions,
  parseWorkerEntry,
} from "../config/worker-config.js";
import { ConfigError, type ConfigIssue, configError, escapeControl } from "../errors/index.js";
import { DEFAULT_PROTECTED } from "../sandbox/protected-defaults.js";
import { createSandbox, policyOf } from "../sandbox/sandbox.js";
import { isPathLike } from "../threads/module-grants.js";
import type { HostOptions, WorkerSpec } from "./host-types.js";
import { checkProgramMcp } from "./program-mcp-check.js";

const PROGRAM_FILE = "program.yaml";
const WORKER_SUFFIX = ".worker";

/** What a worker's configuration holds beyond its {@link WorkerSpec}. */
export interface WorkerSource {
  /** The file it is defined in, relative to the program folder. */
  source: string;
  /** `model` of a `.worker` file (also in the spec). */
  model?: string;
  /** `tools` of a `.worker` file (also in the spec). */
  tools?: string[];
}

/** A loaded program: the host options plus the keys the host does not use. */
export interface ProgramDefinition {
  /** What `createHost` takes. */
  options: HostOptions;
  /** `model` of program.yaml (default model for LLM workers, put in their specs). */
  model?: string;
  /** Per worker: where it is defined, and its `model` and `tools`. */
  workers: Record<string, WorkerSource>;
}

/**
 * Loads a program folder into the options `createHost` takes:
 * `createHost(await loadProgram(dir))`.
 *
 * @param dir the program folder (holding `program.yaml` and optionally `workers/`)
 * @throws ConfigError for a missing or invalid file, naming it relative to `dir`
 */
export async function loadProgram(dir: string): Promise<HostOptions> {
  return (await loadProgramDefinition(dir)).options;
}

/**
 * Like {@link loadProgram}, but also returns what the host does not use:
 * each worker's source file, `model` and `tools`, and the program's `model`.
 *
 * @throws ConfigError for a missing or invalid file, naming it relative to `dir`
 */
export async function loadProgramDefinition(dir: string): Promise<ProgramDefinition> {
  const basePath = resolve(dir);
  const text = await readConfigFile(basePath, PROGRAM_FILE);
  const raw = parseYamlText(text, PROGRAM_FILE);
  const fileNames = await listWorkerFiles(basePath);

  const issues: ConfigIssue[] = [];
  const program = parseProgramFile(raw, issues);
  let shape: ParseWorkerOptions["sandbox"] = "none";
  if (program.parsedSandbox) {
    shape = { form: program.parsedSandbox.form, names: program.parsedSandbox.names };
    if (program.sandbox) checkSandboxFolders(program.sandbox, basePath, issues);
  } else if (isRecord(raw) && raw.sandbox !== undefined) {
    shape = "invalid";
  }
  // Names of both kinds are known before any worker is checked, so
  // `delegates` may name a worker defined in either place.
  const workerNames = new Set([
    ...Object.keys(program.workers),
    ...fileNames.filter((n) => !checkWorkerName(n)),
  ]);

  const workers: Record<string, WorkerSpec> = {};
  const sources: Record<string, WorkerSource> = {};
  for (const [name, entry] of Object.entries(program.workers)) {
    const at = ["workers", name];
    const def = parseWorkerEntry(entry, { kind: "entry", at, sandbox: shape, workerNames }, issues);
    if (!def) continue;
    await resolveModule(def.spec, basePath, [...at, "module"], issues);
    workers[name] = def.spec;
    sources[name] = { source: PROGRAM_FILE };
  }
  if (issues.length > 0) throw configError(issues, PROGRAM_FILE);

  for (const name of fileNames) {
    const source = `workers/${name}${WORKER_SUFFIX}`;
    const fileIssues: ConfigIssue[] = [];
    const badName = checkWorkerName(name);
    if (badName)
      fileIssues.push({
        path: [],
        message: `the file name gives the worker name '${name}': ${badName}`,
      });
    if (Object.hasOwn(program.workers, name))
      fileIssues.push({
        path: [],
        message: `worker '${name}' is also defined in program.yaml (at workers.${name}); define it in one place`,
      });
    const parts = splitWorkerFile(await readConfigFile(basePath, source), source);
    const front = parseYamlText(parts.frontmatter, source, parts.frontmatterLineOffset);
    const def = parseWorkerEntry(
      front,
      { kind: "file", at: [], sandbox: shape, workerNames, body: parts.body },
      fileIssues,
    );
    if (def?.declaredName !== undefined && def.declaredName !== name)
      fileIssues.push({
        path: ["name"],
        message: `the name '${def.declaredName}' does not match the file name '${name}${WORKER_SUFFIX}' (a worker is called by its file name)`,
      });
    if (def) await resolveModule(def.spec, basePath, ["module"], fileIssues);
    if (fileIssues.length > 0 || !def) throw configError(fileIssues, source);
    workers[name] = def.spec;
    sources[name] = { source };
    if (def.model !== undefined) sources[name].model = def.model;
    if (def.tools !== undefined) sources[name].tools = def.tools;
  }

  // program.yaml's `model` is the default of every LLM worker without one.
  if (program.model !== undefined)
    for (const spec of Object.values(workers))
      if (spec.instructions !== undefined && spec.module === undefined && spec.model === undefined)
        spec.model = program.model;
  const options: HostOptions = { basePath, workers };
  if (program.sandbox) {
    options.sandbox = protectProgramFiles(program.sandbox, basePath);
    checkWorkerSandboxKeys(options.sandbox, basePath, workers, sources, program.maxDepth);
  }
  if (program.name !== undefined) options.name = program.name;
  if (program.maxDepth !== undefined) options.maxDepth = program.maxDepth;
  if (program.maxAgents !== undefined) options.maxAgents = program.maxAgents;
  if (program.auditLog !== undefined) options.auditLog = resolve(basePath, program.auditLog);
  if (program.warmThreads !== undefined) options.warmThreads = program.warmThreads;
  if (program.warmProcesses !== undefined) options.warmProcesses = program.warmProcesses;
  if (program.isolation !== undefined) options.isolation = program.isolation;
  if (program.mcpServers !== undefined)
    options.mcpServers = program.mcpServers as NonNullable<HostOptions["mcpServers"]>;
  checkProgramMcp(options, sources, PROGRAM_FILE);
  const out: ProgramDefinition = { options, workers: sources };
  if (program.model !== undefined) out.model = program.model;
  return out;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** Reads a UTF-8 config file; every failure is a ConfigError naming `rel` only. */
async function readConfigFile(basePath: string, rel: string): Promise<string> {
  try {
    return await readFile(join(basePath, rel), "utf8");
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const message =
      code === "ENOENT"
        ? rel === PROGRAM_FILE
          ? `program.yaml was not found in the program folder '${escapeControl(basePath)}' (loadProgram(dir) reads dir/program.yaml)`
          : "the file was not found"
        : code === "EISDIR"
          ? "it is a directory, not a file"
          : `the file cannot be read (${code ?? "unknown error"})`;
    throw configError([{ path: [], message }], rel);
  }
}

/** Base names of `workers/*.worker` files, sorted; none when `workers/` is absent. */
async function listWorkerFiles(basePath: string): Promise<string[]> {
  let entries: string[];
  try {
    entries = await readdir(join(basePath, "workers"));
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return [];
    throw configError(
      [
        {
          path: [],
          message: `the workers folder cannot be read (${code ?? "unknown error"}): '${escapeControl(join(basePath, "workers"))}'`,
        },
      ],
      "workers/",
    );
  }
  return entries
    .filter((e) => e.endsWith(WORKER_SUFFIX) && e.length > WORKER_SUFFIX.length)
    .map((e) => e.slice(0, -WORKER_SUFFIX.length))
    .sort();
}

/**
 * Resolves `spec.module` against the program folder (or a `file:` URL) and
 * checks the file exists, replacing it with the absolute path. The message
 * repeats a relative path as written but never an absolute one.
 */
async function resolveModule(
  spec: WorkerSpec,
  basePath: string,
  at: (string | number)[],
  issues: ConfigIssue[],
): Promise<void> {
  const written = spec.module;
  if (written === undefined) return;
  const isUrl = written.startsWith("file:");
  const shown = isUrl || isAbsolute(written) ? "the module file" : `the module file '${written}'`;
  let abs: string;
  try {
    abs = isUrl ? fileURLToPath(written) : resolve(basePath, written);
  } catch {
    issues.push({ path: at, message: "expected a file path or a 'file:' URL" });
    return;
  }
  const st = await stat(abs).catch(() => undefined);
  if (!st) {
    const where = isUrl || isAbsolute(written) ? "" : ` (relative to the program folder)`;
    issues.push({
      path: at,
      message: `${shown} does not exist: '${escapeControl(abs)}'${where}`,
    });
    return;
  }
  if (!st.isFile()) {
    issues.push({ path: at, message: `${shown} is not a file` });
    return;
  }
  spec.module = abs;
  // Package names stay names (the host finds them from the module's folder).
  spec.dependencies = spec.dependencies?.map((d) => (isPathLike(d) ? resolve(basePath, d) : d));
  if (spec.dependencies === undefined) delete spec.dependencies;
}

/**
 * Builds the root sandbox once to check its folders exist now, so the error
 * names program.yaml and `sandbox.…` instead of surfacing in `createHost`.
 */
function checkSandboxFolders(config: SandboxConfig, basePath: string, issues: ConfigIssue[]) {
  try {
    createSandbox(config, { basePath });
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    for (const issue of err.issues)
      issues.push({ path: ["sandbox", ...issue.path], message: issue.message });
  }
}

/**
 * program.yaml and the `workers/` folder decide what the next load runs
 * (sandbox, shell, modules): where the root sandbox reaches them, they are
 * added to its `protected` list (writes, removes and moves refused — the
 * whole folder, so no new `.worker` file either; reads as before). The
 * default entries are kept when the list was not given.
 */
function protectProgramFiles(config: SandboxConfig, basePath: string): SandboxConfig {
  const table = policyOf(createSandbox(config, { basePath })).table;
  let realBase: string;
  try {
    realBase = realpathSync(basePath);
  } catch {
    realBase = basePath;
  }
  const found = new Set<string>();
  for (const name of [PROGRAM_FILE, "workers"]) {
    const candidates = [join(basePath, name), join(realBase, name)];
    try {
      candidates.push(realpathSync(join(basePath, name)));
    } catch {
      // Absent (a `workers/` folder may be created later): its place is protected.
    }
    for (const c of candidates) {
      const v = table.mapBack(c);
      if (v !== undefined && v !== "/" && !table.isProtected(v)) found.add(v);
    }
  }
  if (found.size === 0) return config;
  const existing = config.protected ?? [...DEFAULT_PROTECTED];
  return { ...config, protected: [...existing, ...[...found].sort()] };
}

/**
 * Refuses a worker `sandbox` key that the program's sandbox, or a caller
 * along some delegation path, can never satisfy (see
 * `worker-sandbox-check.ts`): the first file with such a key, its YAML key
 * named (snake_case) as in the other errors of that file.
 * @throws ConfigError naming the file, the worker, the path and the key
 */
function checkWorkerSandboxKeys(
  config: SandboxConfig,
  basePath: string,
  workers: Record<string, WorkerSpec>,
  sources: Record<string, WorkerSource>,
  maxDepth = 5,
): void {
  const found = checkWorkerSandboxes(
    createSandbox(config, { basePath }),
    new Map(Object.entries(workers)),
    maxDepth,
  );
  const bySource = new Map<string, ConfigIssue[]>();
  for (const i of found) {
    const source = sources[i.worker]?.source ?? PROGRAM_FILE;
    const key = i.key.map((k) =>
      k === "allowRead" ? "allow_read" : k === "allowWrite" ? "allow_write" : k,
    );
    const at =
      source === PROGRAM_FILE ? ["workers", i.worker, "sandbox", ...key] : ["sandbox", ...key];
    bySource.set(source, [...(bySource.get(source) ?? []), { path: at, message: i.message }]);
  }
  const first = [...bySource.keys()].sort(
    (a, b) => Number(b === PROGRAM_FILE) - Number(a === PROGRAM_FILE) || a.localeCompare(b),
  )[0];
  if (first !== undefined) throw configError(bySource.get(first)!, first);
}
