import { resolve } from "node:path";
import type { Writable } from "node:stream";
import type { OnApproval } from "../approvals/approval-types.js";
import type { Isolation, WorkerSpec } from "../config/worker-spec.js";
import { type ConfigIssue, configError } from "../errors/index.js";
import { checkMcpServers, type McpServerConfig } from "../mcp-client/mcp-servers.js";
import { DEFAULT_MODEL_RETRIES } from "../models/model-retries.js";
import { isLlmWorker, resolveWorkerModels, type WorkerModel } from "../models/worker-models.js";
import { Sandbox } from "../sandbox/sandbox.js";
import { llmWorkerCode } from "../threads/permissions.js";
import { TOOL_NAMES } from "../tools/types.js";
import type { DynamicOption, HostOptions } from "./host-types.js";
import { checkDependencies, checkModule } from "./worker-files.js";

const HOST_KEYS = [
  "sandbox",
  "basePath",
  "workers",
  "maxDepth",
  "maxAgents",
  "maxThreads",
  "warmThreads",
  "warmProcesses",
  "isolation",
  "onEvent",
  "name",
  "models",
  "modelRetries",
  "onApproval",
  "auditLog",
  "dynamic",
  "mcpServers",
];

/** DESIGN's options that this release does not have yet: refused, never ignored. */
const PLANNED_KEYS: string[] = [];

const SPEC_KEYS = [
  "dependencies",
  "module",
  "instructions",
  "description",
  "sandbox",
  "delegates",
  "timeoutMs",
  "maxOldGenerationSizeMb",
  "network",
  "model",
  "tools",
  "maxSteps",
  "stream",
  "shell",
  "git",
  "isolation",
  "mcp",
];

/** Host options after validation. */
export interface CheckedHostOptions {
  basePath: string;
  workers: Map<string, WorkerSpec>;
  maxDepth: number;
  maxAgents: number;
  maxThreads: number;
  warmThreads: number;
  warmProcesses: number;
  /** Each LLM worker's model, resolved from `models`. */
  models: Map<string, WorkerModel>;
  /** Issue 13: the approver, the audit log target, dynamic expansion (as given; checked). */
  onApproval: OnApproval | undefined;
  auditLog: string | Writable | undefined;
  dynamic: DynamicOption | undefined;
  /** `mcpServers`, checked (each worker's `mcp` names known servers). */
  mcpServers: Map<string, McpServerConfig>;
}

/**
 * Validates every option of `createHost`; module paths become absolute real
 * paths, path dependencies too (package names stay names). With
 * `serving` (a program's sandbox served without running it, `mountbox mcp
 * <dir>`), LLM workers' models and the AI SDK are not asked for: nothing
 * runs them.
 * @throws ConfigError listing every issue with its key path
 */
export function checkHostOptions(
  options: HostOptions,
  { serving = false }: { serving?: boolean } = {},
): CheckedHostOptions {
  if (typeof options !== "object" || options === null)
    throw configError([{ path: [], message: "expected an options object" }]);
  const issues: ConfigIssue[] = [];
  for (const k of Object.keys(options))
    if (!HOST_KEYS.includes(k)) issues.push({ path: [k], message: describeUnknown(k, HOST_KEYS) });
  if (options.onEvent !== undefined && typeof options.onEvent !== "function")
    issues.push({ path: ["onEvent"], message: "expected a function" });
  const basePath = resolve(options.basePath ?? ".");
  const maxAgents = checkCount(options.maxAgents, 32, "maxAgents", 1, issues);
  const maxDepth = checkCount(options.maxDepth, 5, "maxDepth", 1, issues);
  const out: CheckedHostOptions = {
    basePath,
    workers: checkWorkers(
      options.workers,
      basePath,
      checkIsolation(options.isolation, ["isolation"], issues) ?? "thread",
      issues,
    ),
    maxDepth,
    maxAgents,
    // Callers waiting on callees keep their threads: by default room for
    // one chain of full depth beside the other running agents.
    maxThreads: checkCount(options.maxThreads, maxAgents + maxDepth - 1, "maxThreads", 1, issues),
    warmThreads: checkCount(options.warmThreads, 0, "warmThreads", 0, issues),
    warmProcesses: checkCount(options.warmProcesses, 0, "warmProcesses", 0, issues),
    models: new Map(),
    onApproval: undefined,
    auditLog: undefined,
    dynamic: undefined,
    mcpServers: new Map(),
  };
  const modelRetries = checkCount(
    options.modelRetries,
    DEFAULT_MODEL_RETRIES,
    "modelRetries",
    0,
    issues,
  );
  if (!serving) out.models = resolveWorkerModels(options.models, out.workers, issues, modelRetries);
  checkApprovalOptions(options, out, issues);
  out.mcpServers = checkMcpServers(options.mcpServers, out.workers, issues);
  if (!serving && [...out.workers.values()].some(isLlmWorker)) {
    try {
      llmWorkerCode();
    } catch (err) {
      issues.push({ path: ["workers"], message: (err as Error).message });
    }
  }
  if (issues.length > 0) throw configError(issues);
  return out;
}

/** Checks `onApproval`, `auditLog` and `dynamic` (and the sandbox config's `dynamic`). */
function checkApprovalOptions(
  options: HostOptions,
  out: CheckedHostOptions,
  issues: ConfigIssue[],
): void {
  const { onApproval, auditLog } = options;
  if (onApproval !== undefined && typeof onApproval !== "function")
    issues.push({
      path: ["onApproval"],
      message: 'expected a function (request) => "once" | "session" | "deny"',
    });
  else out.onApproval = onApproval;
  if (
    auditLog !== undefined &&
    !(typeof auditLog === "string" && auditLog !== "") &&
    !(
      typeof auditLog === "object" &&
      auditLog !== null &&
      typeof (auditLog as Writable).write === "function"
    )
  )
    issues.push({ path: ["auditLog"], message: "expected a file path or a writable stream" });
  else out.auditLog = typeof auditLog === "string" ? resolve(out.basePath, auditLog) : auditLog;
  const fromConfig =
    options.sandbox !== undefined && !(options.sandbox instanceof Sandbox)
      ? (options.sandbox as { dynamic?: unknown }).dynamic
      : undefined;
  // createHost's own option wins over the sandbox config's.
  const [raw, at] =
    options.dynamic !== undefined
      ? [options.dynamic, ["dynamic"]]
      : [fromConfig, ["sandbox", "dynamic"]];
  if (raw === undefined) return;
  const d = raw as Record<string, unknown>;
  const bad = (message: string) => issues.push({ path: at, message });
  if (typeof d !== "object" || d === null || Array.isArray(d))
    return void bad("expected { enabled: true|false, ceiling?: virtual path(s) }");
  for (const k of Object.keys(d))
    if (k !== "enabled" && k !== "ceiling")
      issues.push({ path: [...at, k], message: `unknown key '${k}' (expected enabled, ceiling)` });
  if (typeof d.enabled !== "boolean")
    issues.push({ path: [...at, "enabled"], message: "expected true or false" });
  const ceiling =
    d.ceiling === undefined ? undefined : Array.isArray(d.ceiling) ? d.ceiling : [d.ceiling];
  if (ceiling !== undefined && !ceiling.every((c) => typeof c === "string" && c.startsWith("/")))
    issues.push({
      path: [...at, "ceiling"],
      message: "expected a virtual path or a list of them (each starting with '/')",
    });
  else if (typeof d.enabled === "boolean")
    out.dynamic = { enabled: d.enabled, ...(ceiling ? { ceiling: ceiling as string[] } : {}) };
}

function checkCount(
  v: unknown,
  dflt: number,
  key: string,
  min: number,
  issues: ConfigIssue[],
): number {
  if (v === undefined) return dflt;
  if (typeof v !== "number" || !Number.isInteger(v) || v < min)
    issues.push({ path: [key], message: `expected an integer ≥ ${min}` });
  return typeof v === "number" ? v : dflt;
}

function checkWorkers(
  raw: unknown,
  basePath: string,
  isolation: Isolation,
  issues: ConfigIssue[],
): Map<string, WorkerSpec> {
  const out = new Map<string, WorkerSpec>();
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    issues.push({ path: ["workers"], message: "expected an object of worker specs" });
    return out;
  }
  for (const [name, value] of Object.entries(raw as Record<string, unknown>)) {
    const at = ["workers", name];
    if (typeof value !== "object" || value === null) {
      issues.push({ path: at, message: "expected a worker spec object" });
      continue;
    }
    const spec = { ...(value as WorkerSpec) };
    for (const k of Object.keys(spec))
      if (!SPEC_KEYS.includes(k))
        issues.push({ path: [...at, k], message: describeUnknown(k, SPEC_KEYS) });
    if (spec.module !== undefined) {
      const real = checkModule(spec.module, basePath, [...at, "module"], issues);
      if (real) spec.module = real;
    }
    if (spec.dependencies !== undefined) {
      const deps = checkDependencies(spec.dependencies, basePath, [...at, "dependencies"], issues);
      if (deps) spec.dependencies = deps;
    }
    if (
      spec.delegates !== undefined &&
      (!Array.isArray(spec.delegates) || !spec.delegates.every((d) => typeof d === "string"))
    )
      issues.push({ path: [...at, "delegates"], message: "expected a list of worker names" });
    for (const k of ["timeoutMs", "maxOldGenerationSizeMb"] as const) {
      const v = spec[k];
      if (v !== undefined && (typeof v !== "number" || !(v > 0)))
        issues.push({ path: [...at, k], message: "expected a positive number" });
    }
    for (const k of ["network", "shell", "git"] as const)
      if (spec[k] !== undefined && typeof spec[k] !== "boolean")
        issues.push({ path: [...at, k], message: "expected true or false" });
    // Every spec says where it runs from here on (the host's default filled in).
    spec.isolation = checkIsolation(spec.isolation, [...at, "isolation"], issues) ?? isolation;
    checkLlmKeys(spec, at, issues);
    out.set(name, spec);
  }
  for (const [name, spec] of out) {
    if (!Array.isArray(spec.delegates)) continue;
    spec.delegates.forEach((d, i) => {
      if (!out.has(d))
        issues.push({ path: ["workers", name, "delegates", i], message: `no worker named '${d}'` });
    });
  }
  return out;
}

/** Checks an `isolation` value (undefined when absent or wrong). */
function checkIsolation(
  value: unknown,
  at: (string | number)[],
  issues: ConfigIssue[],
): Isolation | undefined {
  if (value === undefined || value === "thread" || value === "process") return value;
  issues.push({
    path: at,
    message: 'expected "thread" (a hardened worker thread) or "process" (a confined process)',
  });
  return undefined;
}

/** Checks the LLM keys of a spec: `instructions`, `model`, `maxSteps`, `stream`, `tools`. */
function checkLlmKeys(spec: WorkerSpec, at: (string | number)[], issues: ConfigIssue[]): void {
  if (spec.instructions !== undefined && typeof spec.instructions !== "string")
    issues.push({ path: [...at, "instructions"], message: "expected a string" });
  if (spec.model !== undefined && (typeof spec.model !== "string" || spec.model === ""))
    issues.push({ path: [...at, "model"], message: "expected a model name" });
  const steps = spec.maxSteps;
  if (steps !== undefined && (typeof steps !== "number" || !Number.isInteger(steps) || steps < 1))
    issues.push({ path: [...at, "maxSteps"], message: "expected a positive integer" });
  if (spec.stream !== undefined && typeof spec.stream !== "boolean")
    issues.push({ path: [...at, "stream"], message: "expected a boolean" });
  if (spec.tools === undefined) return;
  if (!Array.isArray(spec.tools) || !spec.tools.every((t) => typeof t === "string")) {
    issues.push({ path: [...at, "tools"], message: "expected a list of tool names" });
    return;
  }
  spec.tools.forEach((t, i) => {
    if (!(TOOL_NAMES as readonly string[]).includes(t))
      issues.push({
        path: [...at, "tools", i],
        message: `unknown tool '${t}'; known tools: ${TOOL_NAMES.join(", ")}`,
      });
    else if (t === "shell" && spec.shell !== true)
      issues.push({ path: [...at, "tools", i], message: "'shell' needs 'shell: true'" });
    else if (t.startsWith("git_") && spec.git !== true)
      issues.push({ path: [...at, "tools", i], message: `'${t}' needs 'git: true'` });
    else if (t === "call_worker" && !spec.delegates?.length)
      issues.push({
        path: [...at, "tools", i],
        message: "'call_worker' needs 'delegates' (the workers it may call)",
      });
  });
}

/** "unknown option 'x'", with the closest known key when it is a likely typo. */
function describeUnknown(key: string, known: readonly string[]): string {
  if (known === HOST_KEYS && PLANNED_KEYS.includes(key))
    return `option '${key}' is not available in this release`;
  let best: string | undefined;
  let bestDistance = 3;
  for (const k of known === HOST_KEYS ? [...known, ...PLANNED_KEYS] : known) {
    const d = editDistance(key.toLowerCase(), k.toLowerCase());
    if (d < bestDistance) {
      best = k;
      bestDistance = d;
    }
  }
  if (best && PLANNED_KEYS.includes(best))
    return `unknown option '${key}' (did you mean '${best}'? It is not available in this release)`;
  return `unknown option '${key}'${best ? ` (did you mean '${best}'?)` : ""}`;
}

function editDistance(a: string, b: string): number {
  if (Math.abs(a.length - b.length) > 2) return 3;
  let prev = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++)
      cur[j] = Math.min(
        prev[j]! + 1,
        cur[j - 1]! + 1,
        prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
    prev = cur;
  }
  return prev[b.length]!;
}
