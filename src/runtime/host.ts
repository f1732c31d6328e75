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
import { createSandbox, Sandbox } from "../sandbox/sandbox.js";
import { AgentRunner, usesSpare } from "./agent-runner.js";
import { DEFAULT_RESOURCE_LIMITS } from "./agent-thread.js";
import { EventHub } from "./event-hub.js";
import { guardProcessSignals } from "./host-guards.js";
import { checkHostOptions } from "./host-options.js";
import type { HostEvent, HostOptions } from "./host-types.js";
import { compactGrants } from "./module-grants.js";
import { checkReadGrants, computeExecArgv, computeWorkerGrants } from "./permissions.js";
import { SparePool } from "./spare-pool.js";

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
  const root = toSandbox(options.sandbox, basePath);
  // Fail fast on a grant that would hand a thread a sandbox folder, or a
  // declared package that is not installed.
  const grantsOf = new Map<string, string[]>();
  const issues: ConfigIssue[] = [];
  for (const [name, w] of workers) {
    if (!w.module) continue;
    try {
      const grants = computeWorkerGrants({ module: w.module, dependencies: w.dependencies ?? [] });
      grantsOf.set(name, checkReadGrants(grants, root));
    } catch (err) {
      issues.push({ path: ["workers", name, "dependencies"], message: (err as Error).message });
    }
  }
  if (issues.length > 0) throw configError(issues);
  // Spares serve workers with the default heap and no network, so one set
  // of flags covers them all.
  const spareGrants = compactGrants(
    [...workers].flatMap(([name, w]) => (usesSpare(w) ? (grantsOf.get(name) ?? []) : [])),
  );
  const pool =
    warmThreads > 0 && spareGrants.length > 0
      ? new SparePool(
          warmThreads,
          computeExecArgv({ readPaths: spareGrants }),
          DEFAULT_RESOURCE_LIMITS,
        )
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
