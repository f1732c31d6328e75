/**
 * A program worker's sandbox as a top-level run gives it, for commands that
 * serve it without running the program (`mountbox mcp <program-dir>`).
 */
import { resolve } from "node:path";
import { listWorkerReaches } from "../agents/worker-sandbox-check.js";
import { checkCeiling, computeCeiling } from "../approvals/expansion.js";
import type { SandboxConfig } from "../config/sandbox-config.js";
import { escapeControl } from "../errors/index.js";
import { protectWorkerCode } from "../host/code-protection.js";
import { checkHostOptions } from "../host/host-options.js";
import { loadProgramDefinition } from "../host/load-program.js";
import { listMcpServerCode } from "../mcp-client/mcp-server-code.js";
import { createSandbox, Sandbox } from "../sandbox/sandbox.js";
import { llmWorkerCode } from "../threads/permissions.js";
import { UsageError } from "./cli-io.js";

/**
 * Loads the program in `dir` (validated as `run` loads it) and returns the
 * sandbox of `worker` (default: 'main', or the only worker) at the top.
 * @throws ConfigError for a bad program, UsageError for an unknown worker
 */
export async function loadWorkerSandbox(dir: string, worker?: string): Promise<Sandbox> {
  return (await loadWorkerServing(dir, worker)).sandbox;
}

/** What serving a program worker's files needs: its sandbox, name and expansion bound. */
export interface WorkerServing {
  /** The worker's sandbox at the top of the program. */
  sandbox: Sandbox;
  /** The worker's name. */
  worker: string;
  /**
   * With dynamic expansion on (the program's `sandbox.dynamic`): the
   * ceiling no grant goes beyond, as `createHost` computes it for a
   * top-level agent.
   */
  ceiling?: Sandbox;
}

/**
 * {@link loadWorkerSandbox}, with the worker's name and the program's
 * expansion ceiling.
 * @throws ConfigError for a bad program or ceiling, UsageError for an unknown worker
 */
export async function loadWorkerServing(dir: string, worker?: string): Promise<WorkerServing> {
  const { options } = await loadProgramDefinition(resolve(dir));
  const names = Object.keys(options.workers);
  const name =
    worker ?? (names.includes("main") ? "main" : names.length === 1 ? names[0] : undefined);
  if (name === undefined || !names.includes(name))
    throw new UsageError(
      `${worker === undefined ? "name the worker whose sandbox to serve (--worker)" : `no worker named '${escapeControl(worker.slice(0, 60))}'`}; workers: ${escapeControl(names.join(", ")) || "none"}`,
    );
  // As createHost protects it: an MCP client may not change what the next
  // `mountbox run` of this program executes (its workers' code, the
  // packages they import) any more than an agent may.
  // LLM workers run mountbox's own worker with the AI SDK: protected as a
  // run protects them where the SDK is installed; where it is not, a run
  // fails before any thread starts, and serving needs no model.
  const checked = checkHostOptions(options, { serving: true });
  const llmRuns = canLoadLlmWorker();
  const codeWorkers = new Map(
    [...checked.workers].filter(([, w]) => w.module !== undefined || llmRuns),
  );
  const { root } = protectWorkerCode(
    makeRootSandbox(options),
    options.sandbox,
    checked.basePath,
    codeWorkers,
    listMcpServerCode(checked.mcpServers, checked.basePath),
  );
  const reach = listWorkerReaches(root, new Map(Object.entries(options.workers)), 1).find(
    (r) => r.chain.length === 1 && r.chain[0] === name,
  );
  if (reach === undefined)
    throw new UsageError(`worker '${escapeControl(name)}' cannot run at the top of this program`);
  // As createHost: its own `dynamic` option first, else the sandbox config's.
  const config = options.sandbox instanceof Sandbox ? undefined : options.sandbox;
  const dynamic = options.dynamic ?? config?.dynamic;
  if (dynamic?.enabled !== true) return { sandbox: reach.sandbox, worker: name };
  const ceiling = computeCeiling(root, checkCeiling(root, [dynamic.ceiling ?? []].flat()));
  return { sandbox: reach.sandbox, worker: name, ceiling };
}

/** A program's root sandbox as `createHost` makes it (no sandbox: no file access). */
export function makeRootSandbox(options: {
  sandbox?: SandboxConfig | Sandbox | undefined;
  basePath?: string | undefined;
}): Sandbox {
  return options.sandbox instanceof Sandbox
    ? options.sandbox
    : createSandbox(options.sandbox ?? { paths: {} }, { basePath: options.basePath });
}

/** True if the built-in LLM worker's code (mountbox's own, with the AI SDK) resolves. */
function canLoadLlmWorker(): boolean {
  try {
    llmWorkerCode();
    return true;
  } catch {
    return false;
  }
}
