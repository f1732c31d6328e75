/**
 * The host (DESIGN §7): runs named workers, each agent in its own fresh
 * hardened thread, and serves their delegations. The host owns every
 * `Sandbox`; a callee's sandbox is derived from its caller's, narrowed by
 * the callee's configuration and then by the call site, so a delegation
 * chain can only shrink access.
 *
 * Parts: options are checked in `host-options.ts`, a thread's read grants
 * computed in `permissions.ts`, agents run and delegate in
 * `agent-runner.ts`, a call site's options and attachments are checked in
 * `delegation-options.ts`.
 */
import { type ConfigIssue, configError, DelegationRefusedError, escapeControl } from "../errors.js";
import { createSandbox, policyOf, Sandbox } from "../sandbox/sandbox.js";
import { AgentRunner, usesSpare } from "./agent-runner.js";
import { DEFAULT_RESOURCE_LIMITS } from "./agent-thread.js";
import { EventHub } from "./event-hub.js";
import { guardProcessSignals } from "./host-guards.js";
import { checkHostOptions } from "./host-options.js";
import type { HostEvent, HostOptions } from "./host-types.js";
import { isLlmWorker } from "./model-host.js";
import {
  checkReadGrants,
  computeExecArgv,
  computeWorkerGrants,
  llmWorkerCode,
} from "./permissions.js";
import { SparePools } from "./spare-pool.js";

/** Options of {@link Host.run}. */
export interface RunOptions {
  /** Aborts the agent and its whole delegation subtree. */
  signal?: AbortSignal;
  /** Deadline for the whole subtree (the smaller of this and the worker's). */
  timeoutMs?: number;
}

/** A running host; see {@link createHost}. */
export interface Host {
  /**
   * Runs worker `name` with `input` in a fresh thread and resolves with its
   * result.
   * @throws AgentThreadError (it failed), DelegationRefusedError (agent limit), SandboxError
   */
  run(name: string, input?: unknown, opts?: RunOptions): Promise<unknown>;
  /** Every event, as an async iterator (ends when the host closes). */
  readonly events: AsyncIterable<HostEvent>;
  /** Stops every agent, terminates spare threads; leaves no handles. */
  close(): Promise<void>;
}

/**
 * Creates a host from options (or from `await loadProgram(dir)`). Options
 * are validated here; a bad or unknown one is a ConfigError naming its key.
 */
export async function createHost(options: HostOptions): Promise<Host> {
  const { basePath, workers, maxDepth, maxAgents, maxThreads, warmThreads, models } =
    checkHostOptions(options);
  const given = toSandbox(options.sandbox, basePath);
  // Fail fast on a grant that would hand a thread a sandbox folder, or a
  // declared package that is not installed.
  const grantsOf = new Map<string, string[]>();
  const issues: ConfigIssue[] = [];
  for (const [name, w] of workers) {
    const code = w.module
      ? { module: w.module, dependencies: w.dependencies ?? [] }
      : isLlmWorker(w)
        ? llmWorkerCode
        : undefined;
    if (!code) continue;
    try {
      const grants = computeWorkerGrants(typeof code === "function" ? code() : code);
      grantsOf.set(name, checkReadGrants(grants, given));
    } catch (err) {
      issues.push({ path: ["workers", name, "dependencies"], message: (err as Error).message });
    }
  }
  if (issues.length > 0) throw configError(issues);
  const root = protectCode(given, options.sandbox, basePath, [...grantsOf.values()].flat());
  // Spares serve workers with the default heap and no network, each only
  // workers with exactly its grants.
  const spareArgv = new Map<string, string[]>();
  for (const [name, w] of workers) {
    const grants = grantsOf.get(name);
    if (grants && w.module && usesSpare(w))
      spareArgv.set(name, computeExecArgv({ readPaths: grants }));
  }
  const pool =
    warmThreads > 0 && spareArgv.size > 0
      ? new SparePools(warmThreads, spareArgv, DEFAULT_RESOURCE_LIMITS)
      : undefined;
  const hub = new EventHub(options.onEvent);
  const runner = new AgentRunner({ workers, maxDepth, maxAgents, maxThreads, hub, pool, models });
  // From now on a signal cannot open the inspector (see host-guards.ts).
  guardProcessSignals();
  const running = new Set<Promise<unknown>>();
  let closed = false;

  return {
    async run(name, input, opts = {}) {
      if (!workers.has(name)) {
        throw new DelegationRefusedError(
          `No worker named '${escapeControl(String(name).slice(0, 100))}'. Workers: ${[...workers.keys()].join(", ") || "none"}.`,
        );
      }
      opts.signal?.throwIfAborted();
      const agent = runner.createTopAgent(name, root, opts);
      const p = runner.runAgent(agent, input, undefined);
      running.add(p);
      const done = () => running.delete(p);
      p.then(done, done);
      return p;
    },
    events: hub,
    async close() {
      if (closed) return;
      closed = true;
      runner.close();
      await Promise.allSettled([...running]);
      await pool?.close();
      hub.end();
    },
  };
}

function toSandbox(s: HostOptions["sandbox"], basePath: string): Sandbox {
  if (s instanceof Sandbox) return s;
  // No sandbox configured: no worker has any file access.
  if (s === undefined) return createSandbox({ paths: {} });
  return createSandbox(s, { basePath });
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
        message: `worker code is writable by agents at ${[...writable].sort().join(", ")}: an agent could change what later threads and the host run. Mount it read-only, or add it to the sandbox's 'protected' list`,
      },
    ]);
  }
  const existing = (config as { protected?: string[] }).protected ?? [".git"];
  return createSandbox(
    { ...config, protected: [...existing, ...[...writable].sort()] } as typeof config,
    { basePath },
  );
}
