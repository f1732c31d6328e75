/**
 * Program configuration (DESIGN §3): `program.yaml` and `workers/<name>.worker`
 * files, validated into camelCase worker specs.
 *
 * Pure: text in, validated values or issues out. Reading files, checking that
 * module files exist and building the host options is `runtime/load-program.ts`.
 *
 * Keys are snake_case only, as DESIGN §3 says YAML files are written; a
 * camelCase key is an unknown key with a hint naming the snake_case spelling.
 * (The `sandbox` block of program.yaml is validated by `parseSandboxConfig`,
 * which also takes camelCase: that is its contract, kept as is.)
 */
import { LineCounter, parseDocument } from "yaml";
import { z } from "zod";
import { ConfigError, type ConfigIssue, configError } from "../errors.js";
import {
  checkConfigPath,
  type ParsedSandboxConfig,
  parseSandboxConfig,
  type SandboxConfig,
  toConfigIssues,
} from "./sandbox-config.js";
import type { WorkerSandboxSpec, WorkerSpec } from "./worker-spec.js";

/** Key path prefix of an issue: `[]` in a `.worker` file, `["workers", name]` in program.yaml. */
type KeyPath = (string | number)[];

/** What a worker's paths are checked against: the form of the program's sandbox. */
export interface ProgramSandboxShape {
  /** `root` form needs absolute virtual paths; `named` also takes `name/rel` and `name:rel`. */
  form: "root" | "named";
  /** Names of the named-paths form (empty in root form). */
  names: readonly string[];
}

/** A worker as configured: its spec plus the keys the host does not use (yet). */
export interface WorkerDefinition {
  /** What the host runs; `module` is still as written (not resolved). */
  spec: WorkerSpec;
  /** Model for an LLM worker (`.worker` files only); also in `spec.model`. */
  model?: string;
  /** Tool names for an LLM worker (`.worker` files only); also in `spec.tools`. */
  tools?: string[];
  /** `name` from a `.worker` frontmatter, if given (checked against the file name by the loader). */
  declaredName?: string;
}

/** The top level of program.yaml, validated (workers not yet checked against the files). */
export interface ProgramFileConfig {
  name?: string;
  /** Default model for LLM workers (`loadProgram` puts it in their specs). */
  model?: string;
  /** The program sandbox in camelCase, as written otherwise (root and sources unresolved). */
  sandbox?: SandboxConfig;
  /** The validated sandbox, or undefined when absent. */
  parsedSandbox?: ParsedSandboxConfig;
  maxDepth?: number;
  maxAgents?: number;
  /** `audit_log`: the audit log's file, relative to the program folder. */
  auditLog?: string;
  warmThreads?: number;
  /** Raw worker entries by name (validated one by one with {@link parseWorkerEntry}). */
  workers: Record<string, unknown>;
}

const positiveInt = (what: string) =>
  z
    .number({ error: `expected a positive integer (${what})` })
    .int(`expected a positive integer (${what})`)
    .positive(`expected a positive integer (${what})`);

const pathList = z.union([z.string(), z.array(z.string())], {
  error: "expected a virtual path or a list of virtual paths",
});

const workerSandboxSchema = z.strictObject({
  restrict: z.string().optional(),
  readonly: z.boolean().optional(),
  allow_read: pathList.optional(),
  allow_write: pathList.optional(),
  inherit: z.boolean().optional(),
});

// Keys shared by both places a worker can be defined.
const commonWorkerKeys = {
  description: z.string().optional(),
  // Checked separately with workerSandboxSchema (see parseWorkerEntry).
  sandbox: z.unknown().optional(),
  delegates: z.array(z.string(), { error: "expected a list of worker names" }).optional(),
  timeout_ms: positiveInt("milliseconds").optional(),
  max_old_generation_size_mb: positiveInt("megabytes").optional(),
  // Package names the module imports, or paths of its own helper files.
  dependencies: z
    .array(z.string().min(1), {
      error: "expected a list of package names or file/folder paths",
    })
    .optional(),
  network: z.boolean().optional(),
  shell: z.boolean().optional(),
};

const workerEntrySchema = z.strictObject({
  ...commonWorkerKeys,
  module: z.string({
    error: (iss) =>
      iss.input === undefined
        ? "a worker in program.yaml is a code worker and needs 'module' (LLM workers go in workers/<name>.worker)"
        : "expected a string (the worker's JS module, relative to the program folder)",
  }),
});

const workerFileSchema = z.strictObject({
  ...commonWorkerKeys,
  name: z.string().optional(),
  module: z.string().optional(),
  model: z.string().min(1, "a model cannot be empty").optional(),
  tools: z.array(z.string(), { error: "expected a list of tool names" }).optional(),
  max_steps: positiveInt("model steps").optional(),
  // Seed 002 put instructions in the frontmatter; the body is the usual place.
  instructions: z.string().optional(),
});

const programFileSchema = z.strictObject({
  name: z.string().optional(),
  model: z.string().min(1, "a model cannot be empty").optional(),
  // Validated by parseSandboxConfig, which has its own messages and hints.
  sandbox: z.unknown().optional(),
  max_depth: positiveInt("delegation depth").optional(),
  max_agents: positiveInt("agents").optional(),
  // The audit log's file, relative to the program folder (issue 13).
  audit_log: z.string().min(1, "an audit log path cannot be empty").optional(),
  warm_threads: z
    .number({ error: "expected a non-negative integer (threads)" })
    .int("expected a non-negative integer (threads)")
    .nonnegative("expected a non-negative integer (threads)")
    .optional(),
  // Checked entry by entry, so every entry's issues are reported with its name.
  workers: z.unknown().optional(),
});

const PROGRAM_KEYS = Object.keys(programFileSchema.shape);
const ENTRY_KEYS = Object.keys(workerEntrySchema.shape);
const FILE_KEYS = Object.keys(workerFileSchema.shape);
const SANDBOX_KEYS = Object.keys(workerSandboxSchema.shape);

/** Worker names end up in file names, delegate lists and messages: keep them plain. */
const WORKER_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

/**
 * Checks a worker name (a program.yaml key or a `.worker` file's base name).
 * @returns an issue message, or undefined when the name is fine
 */
export function checkWorkerName(name: string): string | undefined {
  return WORKER_NAME.test(name)
    ? undefined
    : "a worker name may use letters, digits, '.', '_' and '-' only, and starts with a letter or digit";
}

/**
 * Parses YAML text. Syntax errors become a ConfigError naming the file and
 * the line and column (shifted by `lineOffset`, e.g. for frontmatter).
 */
export function parseYamlText(text: string, source: string, lineOffset = 0): unknown {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true });
  if (doc.errors.length > 0) {
    throw configError(
      doc.errors.map((e) => {
        const { line, col } = lineCounter.linePos(e.pos[0]);
        return {
          path: [],
          message: `YAML syntax error at line ${line + lineOffset}, column ${col}: ${e.message}`,
        };
      }),
      source,
    );
  }
  try {
    // maxAliasCount keeps an alias bomb from expanding into gigabytes.
    return doc.toJS({ maxAliasCount: 100 });
  } catch (err) {
    throw configError([{ path: [], message: `YAML error: ${(err as Error).message}` }], source);
  }
}

/** A `.worker` file split into its frontmatter and its instructions body. */
export interface WorkerFileParts {
  /** The YAML between the `---` lines. */
  frontmatter: string;
  /** Lines before the frontmatter's first line (for YAML error positions). */
  frontmatterLineOffset: number;
  /** The instructions, without surrounding blank lines. */
  body: string;
}

/**
 * Splits a `.worker` file: a `---` line, YAML frontmatter, a `---` line, then
 * markdown instructions. A file without an opening `---` is an error rather
 * than all-instructions: a forgotten `---` would otherwise silently drop the
 * worker's `sandbox` narrowing.
 */
export function splitWorkerFile(text: string, source: string): WorkerFileParts {
  const lines = text.replace(/^\uFEFF/, "").split(/\r?\n/);
  const isFence = (line: string | undefined) => line?.trimEnd() === "---";
  if (!isFence(lines[0])) {
    throw configError(
      [
        {
          path: [],
          message:
            "a .worker file starts with a '---' line, then YAML frontmatter, then a closing '---' line, then the instructions",
        },
      ],
      source,
    );
  }
  const close = lines.findIndex((line, i) => i > 0 && isFence(line));
  if (close < 0) {
    throw configError(
      [
        {
          path: [],
          message:
            "the frontmatter has no closing '---' line (put one between the YAML and the instructions)",
        },
      ],
      source,
    );
  }
  return {
    frontmatter: lines.slice(1, close).join("\n"),
    frontmatterLineOffset: 1,
    body: lines
      .slice(close + 1)
      .join("\n")
      .replace(/^(?:[ \t]*\n)+/, "")
      .trimEnd(),
  };
}

/** Converts zod issues, replacing unknown-key messages with hints for our own keys. */
function toIssues(error: z.ZodError, prefix: KeyPath, keysAt: (path: KeyPath) => string[]) {
  const out: ConfigIssue[] = [];
  for (const issue of error.issues) {
    if (issue.code === "unrecognized_keys") {
      const at = issue.path.map((k) => (typeof k === "number" ? k : String(k)));
      const known = keysAt(at);
      for (const key of issue.keys)
        out.push({ path: [...prefix, ...at, key], message: describeUnknownKey(key, known) });
      continue;
    }
    out.push(...toConfigIssues(new z.ZodError([issue]), prefix));
  }
  return out;
}

/** `unknown key 'read_only' (did you mean 'readonly'?)`, or the allowed keys when nothing is close. */
function describeUnknownKey(key: string, known: string[]): string {
  const squash = (k: string) => k.replaceAll("_", "").replaceAll("-", "").toLowerCase();
  const match = known.find((k) => squash(k) === squash(key));
  if (match) return `unknown key '${key}' (did you mean '${match}'?)`;
  return `unknown key '${key}' (allowed: ${known.join(", ")})`;
}

/**
 * Validates the top level of program.yaml (null, from an empty file, is an
 * empty program). Issues are appended to `issues`; the sandbox is checked with
 * `parseSandboxConfig` so its messages match `createSandbox`'s.
 */
export function parseProgramFile(raw: unknown, issues: ConfigIssue[]): ProgramFileConfig {
  const out: ProgramFileConfig = { workers: {} };
  if (raw === null || raw === undefined) return out;
  if (typeof raw !== "object" || Array.isArray(raw)) {
    issues.push({
      path: [],
      message: `expected a mapping of keys (name, sandbox, workers, …), received ${Array.isArray(raw) ? "a list" : typeof raw}`,
    });
    return out;
  }
  const result = programFileSchema.safeParse(raw);
  if (result.success) {
    const data = result.data;
    if (data.name !== undefined) out.name = data.name;
    if (data.model !== undefined) out.model = data.model;
    if (data.max_depth !== undefined) out.maxDepth = data.max_depth;
    if (data.max_agents !== undefined) out.maxAgents = data.max_agents;
    if (data.audit_log !== undefined) out.auditLog = data.audit_log;
    if (data.warm_threads !== undefined) out.warmThreads = data.warm_threads;
  } else {
    issues.push(...toIssues(result.error, [], () => PROGRAM_KEYS));
  }
  // `sandbox` and `workers` are unknown-typed in the schema, so they are read
  // from the raw object even when another key failed: every issue in the file
  // is reported at once.
  const { sandbox, workers } = raw as Record<string, unknown>;
  if (sandbox !== undefined) {
    try {
      out.parsedSandbox = parseSandboxConfig(sandbox, { at: ["sandbox"] });
      out.sandbox = toCamelSandbox(sandbox as Record<string, unknown>);
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      issues.push(...err.issues);
    }
  }
  if (workers !== undefined && workers !== null) {
    if (typeof workers !== "object" || Array.isArray(workers)) {
      issues.push({
        path: ["workers"],
        message: "expected a map of worker names to worker entries",
      });
    } else {
      // Object.entries, not z.record: zod drops a `__proto__` key silently.
      for (const [name, entry] of Object.entries(workers)) {
        const bad = checkWorkerName(name);
        if (bad) issues.push({ path: ["workers", name], message: bad });
        else out.workers[name] = entry;
      }
    }
  }
  return out;
}

const SANDBOX_CAMEL: Record<string, string> = {
  max_file_bytes: "maxFileBytes",
  read_approval: "readApproval",
  write_approval: "writeApproval",
};

/** The validated YAML sandbox with camelCase keys (so it is a real `SandboxConfig`). */
function toCamelSandbox(raw: Record<string, unknown>): SandboxConfig {
  const rename = (obj: Record<string, unknown>) =>
    Object.fromEntries(Object.entries(obj).map(([k, v]) => [SANDBOX_CAMEL[k] ?? k, v]));
  const out = rename(raw);
  if (raw.paths !== undefined) {
    out.paths = Object.fromEntries(
      Object.entries(raw.paths as Record<string, Record<string, unknown>>).map(([n, p]) => [
        n,
        rename(p),
      ]),
    );
  }
  return out as SandboxConfig;
}

/** Options of {@link parseWorkerEntry}. */
export interface ParseWorkerOptions {
  /** `entry`: a code-worker entry in program.yaml; `file`: a `.worker` frontmatter. */
  kind: "entry" | "file";
  /** Key path prefix for issues (`["workers", name]` in program.yaml). */
  at: KeyPath;
  /**
   * The program sandbox's shape; `none` when program.yaml has no sandbox;
   * `invalid` when it has one with errors (worker paths are then not checked,
   * to avoid a cascade of follow-on messages).
   */
  sandbox: ProgramSandboxShape | "none" | "invalid";
  /** Every worker of the program, for checking `delegates`. */
  workerNames: ReadonlySet<string>;
  /** The `.worker` body (kind `file`). */
  body?: string;
}

/**
 * Validates one worker (a program.yaml entry or a `.worker` frontmatter) and
 * returns its camelCase definition, appending every problem to `issues`.
 * Module paths are returned as written; the loader resolves and checks them.
 */
export function parseWorkerEntry(
  raw: unknown,
  opts: ParseWorkerOptions,
  issues: ConfigIssue[],
): WorkerDefinition | undefined {
  const { at } = opts;
  const schema = opts.kind === "entry" ? workerEntrySchema : workerFileSchema;
  const topKeys = opts.kind === "entry" ? ENTRY_KEYS : FILE_KEYS;
  const result = schema.safeParse(raw ?? {});
  if (!result.success) issues.push(...toIssues(result.error, at, () => topKeys));
  // The sandbox is checked on its own, so its problems are reported even
  // when another key of the worker failed.
  const rawSandbox =
    typeof raw === "object" && raw !== null ? (raw as Record<string, unknown>).sandbox : undefined;
  let sandbox: WorkerSandboxSpec | undefined;
  if (rawSandbox !== undefined) {
    const parsed = workerSandboxSchema.safeParse(rawSandbox);
    if (parsed.success)
      sandbox = parseWorkerSandbox(parsed.data, opts.sandbox, [...at, "sandbox"], issues);
    else issues.push(...toIssues(parsed.error, [...at, "sandbox"], () => SANDBOX_KEYS));
  }
  if (!result.success) return undefined;
  const data = result.data as z.infer<typeof workerFileSchema>;
  const spec: WorkerSpec = {};
  const def: WorkerDefinition = { spec };

  if (data.module !== undefined) {
    if (data.module.trim() === "")
      issues.push({ path: [...at, "module"], message: "a module path cannot be empty" });
    else spec.module = data.module;
  }
  const body = opts.body ?? "";
  if (data.instructions !== undefined && body !== "") {
    issues.push({
      path: [...at, "instructions"],
      message: "give the instructions either in 'instructions' or after the frontmatter, not both",
    });
  }
  const instructions = body !== "" ? body : data.instructions?.trim();
  if (instructions) spec.instructions = instructions;
  if (opts.kind === "file" && data.module === undefined && !instructions)
    issues.push({
      path: at,
      message:
        "an LLM worker needs instructions after the frontmatter (or 'module' for a code worker)",
    });
  if (data.description !== undefined) spec.description = data.description;
  if (sandbox) spec.sandbox = sandbox;
  if (data.delegates !== undefined) {
    data.delegates.forEach((d, i) => {
      if (!opts.workerNames.has(d))
        issues.push({
          path: [...at, "delegates", i],
          message: `no worker named '${d}' (workers: ${[...opts.workerNames].sort().join(", ") || "none"})`,
        });
    });
    spec.delegates = data.delegates;
  }
  if (data.timeout_ms !== undefined) spec.timeoutMs = data.timeout_ms;
  if (data.dependencies !== undefined) spec.dependencies = data.dependencies;
  if (data.network !== undefined) spec.network = data.network;
  if (data.max_old_generation_size_mb !== undefined)
    spec.maxOldGenerationSizeMb = data.max_old_generation_size_mb;
  if (data.shell !== undefined) spec.shell = data.shell;
  if (data.max_steps !== undefined) spec.maxSteps = data.max_steps;
  // The host uses `model` and `tools` for LLM workers only; a code worker's
  // stay in its definition.
  const llm = spec.module === undefined;
  if (data.model !== undefined) {
    def.model = data.model;
    if (llm) spec.model = data.model;
  }
  if (data.tools !== undefined) {
    def.tools = data.tools;
    if (llm) spec.tools = data.tools;
  }
  if (data.name !== undefined) def.declaredName = data.name;
  return def;
}

/** Validates a worker's `sandbox` key against the program sandbox's form. */
function parseWorkerSandbox(
  raw: z.infer<typeof workerSandboxSchema>,
  shape: ProgramSandboxShape | "none" | "invalid",
  at: KeyPath,
  issues: ConfigIssue[],
): WorkerSandboxSpec | undefined {
  if (shape === "invalid") return undefined;
  if (shape === "none") {
    // Narrowing nothing is harmless, but the author clearly expects file
    // access this worker will never get (DESIGN §3: no program sandbox →
    // no worker has file access). Say so instead of failing at run time.
    issues.push({
      path: at,
      message:
        "this worker narrows the program's sandbox, but program.yaml has no 'sandbox' (so no worker has file access); add one to program.yaml or remove this key",
    });
    return undefined;
  }
  const out: WorkerSandboxSpec = {};
  const check = (value: string, key: string, where: KeyPath) =>
    checkWorkerPath(value, key, shape, where, issues);
  if (raw.restrict !== undefined) {
    const p = check(raw.restrict, "restrict", [...at, "restrict"]);
    if (p !== undefined) out.restrict = p;
  }
  if (raw.readonly !== undefined) out.readonly = raw.readonly;
  for (const [snake, camel] of [
    ["allow_read", "allowRead"],
    ["allow_write", "allowWrite"],
  ] as const) {
    const v = raw[snake];
    if (v === undefined) continue;
    if (typeof v === "string") {
      const p = check(v, snake, [...at, snake]);
      if (p !== undefined) out[camel] = p;
    } else {
      const list = v.map((e, i) => check(e, `an ${snake} entry`, [...at, snake, i]));
      if (list.every((p) => p !== undefined)) out[camel] = list as string[];
    }
  }
  if (raw.inherit !== undefined) out.inherit = raw.inherit;
  return out;
}

/**
 * Checks one configured worker path and returns its canonical virtual form.
 * Root form: absolute only (DESIGN §2: configuration paths are absolute).
 * Named form: also `name`, `name/rel`, `name:rel`; the first segment must be a name.
 */
function checkWorkerPath(
  value: string,
  what: string,
  shape: ProgramSandboxShape,
  at: KeyPath,
  issues: ConfigIssue[],
): string | undefined {
  if (shape.form === "root") return checkConfigPath(value, what, at, issues);
  const norm = checkConfigPath(value, what, at, issues, new Set(shape.names));
  if (norm === undefined) return undefined;
  const first = norm.split("/")[1] ?? "";
  if (norm !== "/" && !shape.names.includes(first)) {
    issues.push({
      path: at,
      message: `'${value}' is not under a named path of the program sandbox (names: ${shape.names.join(", ") || "none"})`,
    });
    return undefined;
  }
  return norm;
}
