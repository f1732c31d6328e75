/**
 * Program configuration (DESIGN §3): `program.yaml` and `workers/<name>.worker`
 * files, validated into camelCase worker specs. This module holds the top
 * level of program.yaml; a worker's keys are `worker-config.ts` (its
 * `sandbox` key `worker-sandbox-config.ts`), the files' text (YAML, the
 * `.worker` frontmatter) `config-text.ts`, and what the schemas share
 * `yaml-schema.ts`.
 *
 * Pure: text in, validated values or issues out. Reading files, checking that
 * module files exist and building the host options is `host/load-program.ts`.
 *
 * Keys are snake_case only, as DESIGN §3 says YAML files are written; a
 * camelCase key is an unknown key with a hint naming the snake_case spelling.
 * (The `sandbox` block of program.yaml is validated by `parseSandboxConfig`,
 * which also takes camelCase: that is its contract, kept as is.)
 */
import { z } from "zod";
import { ConfigError, type ConfigIssue } from "../errors/index.js";
import {
  type ParsedSandboxConfig,
  parseSandboxConfig,
  type SandboxConfig,
} from "./sandbox-config.js";
import { checkWorkerName } from "./worker-config.js";
import type { Isolation } from "./worker-spec.js";
import { convertZodIssues, isolationSchema, positiveInt } from "./yaml-schema.js";

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
  /** `warm_processes`: warm spare processes per process worker. */
  warmProcesses?: number;
  /** `isolation`: where workers run unless they say otherwise. */
  isolation?: Isolation;
  /**
   * `mcp_servers`: MCP servers by name, as `createHost({ mcpServers })`
   * takes them (checked there: `command`, `args`, `env`, `cwd` or `url`,
   * `headers`, and `approval`).
   */
  mcpServers?: Record<string, unknown>;
  /** Raw worker entries by name (validated one by one with `parseWorkerEntry`). */
  workers: Record<string, unknown>;
}

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
  warm_processes: z
    .number({ error: "expected a non-negative integer (processes)" })
    .int("expected a non-negative integer (processes)")
    .nonnegative("expected a non-negative integer (processes)")
    .optional(),
  isolation: isolationSchema.optional(),
  // Checked by createHost (checkMcpServers), which names each key.
  mcp_servers: z
    .record(z.string(), z.unknown(), { error: "expected a map of MCP server names to servers" })
    .optional(),
  // Checked entry by entry, so every entry's issues are reported with its name.
  workers: z.unknown().optional(),
});

const PROGRAM_KEYS = Object.keys(programFileSchema.shape);

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
    if (data.warm_processes !== undefined) out.warmProcesses = data.warm_processes;
    if (data.isolation !== undefined) out.isolation = data.isolation;
    if (data.mcp_servers !== undefined) out.mcpServers = data.mcp_servers;
  } else {
    issues.push(...convertZodIssues(result.error, [], () => PROGRAM_KEYS));
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
