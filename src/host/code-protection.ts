/**
 * The host's own code and every worker's, kept out of agents' reach: what
 * `createHost` does before any agent runs, shared with the commands that
 * serve a program's sandbox without running it (`mountbox mcp <dir>`), so
 * an MCP client cannot change what the next `mountbox run` executes either.
 */
import { dirname, isAbsolute } from "node:path";
import { type ConfigIssue, configError } from "../errors/index.js";
import { isLlmWorker } from "../models/worker-models.js";
import { DEFAULT_PROTECTED } from "../sandbox/protected-defaults.js";
import { createSandbox, policyOf, Sandbox } from "../sandbox/sandbox.js";
import { listLookupPlaces } from "../threads/module-grants.js";
import { checkReadGrants, computeWorkerGrants, llmWorkerCode } from "../threads/permissions.js";
import type { HostOptions, WorkerSpec } from "./host-types.js";

/** What {@link protectWorkerCode} returns. */
export interface ProtectedRoot {
  /** The root sandbox with every writable code path added to `protected`. */
  root: Sandbox;
  /** Each code or LLM worker's read grants (the folders its thread may import from). */
  grantsOf: Map<string, string[]>;
}

/**
 * Checks each worker's read grants against the sandbox `given` (a grant
 * that would hand a thread a sandbox folder, or a declared package that is
 * not installed, fails here) and returns the root sandbox with every
 * writable place the workers' code is loaded or looked up from protected.
 * @throws ConfigError naming the worker's `dependencies`, or the writable code of a given `Sandbox`
 */
export function protectWorkerCode(
  given: Sandbox,
  config: HostOptions["sandbox"],
  basePath: string,
  workers: ReadonlyMap<string, WorkerSpec>,
  /** Host paths of other code the host runs (its stdio MCP servers': mcp-server-code.ts). */
  otherCode: readonly string[] = [],
): ProtectedRoot {
  const grantsOf = new Map<string, string[]>();
  // Where the workers' imports are looked up: planted code there would be
  // granted to, and run by, their next threads.
  const lookupPlaces = new Set<string>();
  const issues: ConfigIssue[] = [];
  for (const [name, w] of workers) {
    if (!w.module && !isLlmWorker(w)) continue;
    try {
      const resolved = codeOf(w);
      const grants = computeWorkerGrants(resolved);
      grantsOf.set(name, checkReadGrants(grants, given));
      // The module's folder, its helper folders, and every package folder
      // granted (a workspace package looks up its imports from its own
      // folder upwards, e.g. packages/node_modules before the root's).
      const folders = [
        dirname(resolved.module),
        ...(resolved.dependencies ?? []).filter(isAbsolute),
        ...grants,
      ];
      for (const f of folders) for (const place of listLookupPlaces(f)) lookupPlaces.add(place);
    } catch (err) {
      issues.push({ path: ["workers", name, "dependencies"], message: (err as Error).message });
    }
  }
  if (issues.length > 0) throw configError(issues);
  const root = protectCode(given, config, basePath, [
    ...[...grantsOf.values()].flat(),
    ...lookupPlaces,
    ...otherCode,
  ]);
  return { root, grantsOf };
}

/** A worker's code: its module and dependencies, or the built-in LLM worker's. */
export function codeOf(w: WorkerSpec): { module: string; dependencies: readonly string[] } {
  if (w.module) return { module: w.module, dependencies: w.dependencies ?? [] };
  const llm = llmWorkerCode();
  return { module: llm.module, dependencies: llm.dependencies ?? [] };
}

/**
 * Worker code inside a writable sandbox area (root ".", workers and
 * node_modules in the project) could be changed by one agent for every
 * later thread — and for the host itself. A sandbox built from a config gets
 * those paths added to its `protected` list (writes refused, reads as
 * before); a `Sandbox` object passed in cannot be changed, so it is refused.
 * @throws ConfigError naming the writable code paths of a given `Sandbox`
 */
function protectCode(
  sandbox: Sandbox,
  config: HostOptions["sandbox"],
  basePath: string,
  grants: readonly string[],
): Sandbox {
  const table = policyOf(sandbox).table;
  const writable = new Set<string>();
  for (const g of grants) {
    const v = table.mapBack(g);
    if (v !== undefined && sandbox.canWrite(v)) writable.add(v);
  }
  if (writable.size === 0) return sandbox;
  if (config instanceof Sandbox || config === undefined) {
    throw configError([
      {
        path: ["sandbox"],
        message: `worker or MCP server code is writable by agents at ${[...writable].sort().join(", ")}: an agent could change what later threads and the host run. Mount it read-only, or add it to the sandbox's 'protected' list`,
      },
    ]);
  }
  const existing = (config as { protected?: string[] }).protected ?? [...DEFAULT_PROTECTED];
  return createSandbox(
    { ...config, protected: [...existing, ...[...writable].sort()] } as typeof config,
    { basePath },
  );
}
