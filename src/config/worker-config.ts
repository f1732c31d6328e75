/**
 * One worker's configuration, from either place it can be defined: a code
 * worker's entry in program.yaml or a `.worker` file's frontmatter (with the
 * instructions body), validated into its camelCase {@link WorkerSpec}.
 */
import { z } from "zod";
import type { ConfigIssue } from "../errors/index.js";
import { type ProgramSandboxShape, parseWorkerSandboxKey } from "./worker-sandbox-config.js";
import type { WorkerSpec } from "./worker-spec.js";
import { convertZodIssues, isolationSchema, type KeyPath, positiveInt } from "./yaml-schema.js";

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

// Keys shared by both places a worker can be defined.
const commonWorkerKeys = {
  description: z.string().optional(),
  // Checked separately with parseWorkerSandboxKey (see parseWorkerEntry).
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
  git: z.boolean().optional(),
  isolation: isolationSchema.optional(),
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
  // MCP servers (program.yaml `mcp_servers`) whose tools it is offered.
  mcp: z.array(z.string(), { error: "expected a list of MCP server names" }).optional(),
  stream: z.boolean({ error: "expected true or false" }).optional(),
  // Seed 002 put instructions in the frontmatter; the body is the usual place.
  instructions: z.string().optional(),
});

const ENTRY_KEYS = Object.keys(workerEntrySchema.shape);
const FILE_KEYS = Object.keys(workerFileSchema.shape);

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
  if (!result.success) issues.push(...convertZodIssues(result.error, at, () => topKeys));
  // The sandbox is checked on its own, so its problems are reported even
  // when another key of the worker failed.
  const rawSandbox =
    typeof raw === "object" && raw !== null ? (raw as Record<string, unknown>).sandbox : undefined;
  const sandbox =
    rawSandbox === undefined
      ? undefined
      : parseWorkerSandboxKey(rawSandbox, opts.sandbox, [...at, "sandbox"], issues);
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
  if (data.isolation !== undefined) spec.isolation = data.isolation;
  if (data.max_old_generation_size_mb !== undefined)
    spec.maxOldGenerationSizeMb = data.max_old_generation_size_mb;
  if (data.shell !== undefined) spec.shell = data.shell;
  if (data.git !== undefined) spec.git = data.git;
  if (data.max_steps !== undefined) spec.maxSteps = data.max_steps;
  if (data.stream !== undefined) spec.stream = data.stream;
  if (data.mcp !== undefined) spec.mcp = data.mcp;
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
