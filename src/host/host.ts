/**
 * The host (DESIGN §7): runs named workers, each agent in its own fresh
 * hardened thread, and serves their delegations. The host owns every
 * `Sandbox`; a callee's sandbox is derived from its caller's, narrowed by
 * the callee's configuration and then by the call site, so a delegation
 * chain can only shrink access.
 *
 * Parts: options are checked in `host-options.ts`; agents are admitted and
 * run in `src/agents/` (`agent-runner.ts`, `delegation.ts`); a thread and its
 * read grants are started in `src/threads/`; the port is served in
 * `src/port/`. `docs/architecture.md` follows one delegation through them.
 */
import { pathToFileURL } from "node:url";
import type {
  UntypedWorkers,
  WorkerArgs,
  WorkerName,
  WorkerOutput,
} from "../../workers/worker-types.js";
import { AgentRunner, usesSpare } from "../agents/agent-runner.js";
import { checkWorkerSandboxes } from "../agents/worker-sandbox-check.js";
import { checkCeiling, computeCeiling } from "../approvals/expansion.js";
import { GrantBook, type SuggestedSandbox } from "../approvals/suggested-sandbox.js";
import { configError, DelegationRefusedError, escapeControl, ioError } from "../errors/index.js";
import { listMcpServerCode } from "../mcp-client/mcp-server-code.js";
import { connectMcpServers, type McpConnections } from "../mcp-client/mcp-servers.js";
import { setUpProcesses } from "../processes/process-setup.js";
import { createSandbox, Sandbox } from "../sandbox/sandbox.js";
import { computeExecArgv } from "../threads/permissions.js";
import { type SpareLaunch, SparePools } from "../threads/spare-pool.js";
import { DEFAULT_RESOURCE_LIMITS, resolveModulePath } from "../threads/thread-start.js";
import { type AuditLog, openAuditLog } from "./audit-log.js";
import { findAuditInside } from "./audit-placement.js";
import { codeOf, protectWorkerCode } from "./code-protection.js";
import { EventHub } from "./event-hub.js";
import { guardProcessSignals } from "./host-guards.js";
import { checkHostOptions } from "./host-options.js";
import type { HostEvent, HostOptions } from "./host-types.js";

export type { SuggestedSandbox } from "../approvals/suggested-sandbox.js";

/** Options of {@link Host.run}. */
export interface RunOptions {
  /** Aborts the agent and its whole delegation subtree. */
  signal?: AbortSignal;
  /** Deadline for the whole subtree (the smaller of this and the worker's). */
  timeoutMs?: number;
}

/**
 * A running host; see {@link createHost}. `Workers` maps worker names to
 * their types (`{ main: typeof import("./workers/main.js") }`), which types
 * `run` by name; without it any name is accepted and results are `unknown`.
 */
export interface Host<Workers extends object = UntypedWorkers> {
  /**
   * Runs worker `name` with `input` in a fresh thread and resolves with its
   * result. With a typed worker map, an unknown name or a wrong input is a
   * type error and the result has the worker's result type.
   * @throws AgentThreadError (it failed), DelegationRefusedError (agent limit), SandboxError
   */
  run<N extends WorkerName<Workers>>(
    name: N,
    ...args: WorkerArgs<Workers[N], RunOptions>
  ): Promise<WorkerOutput<Workers[N]>>;
  /**
   * Per worker that was granted access by dynamic expansion in this host's
   * runs: the `sandbox` block (object and YAML) that would make that access
   * permanent. Loading it grants exactly what was approved, no more.
   */
  suggestedSandboxes(): Record<string, SuggestedSandbox>;
  /** Every event, as an async iterator (ends when the host closes). */
  readonly events: AsyncIterable<HostEvent>;
  /** Stops every agent, terminates spare threads; leaves no handles. */
  close(): Promise<void>;
}

/**
 * Creates a host from options (or from `await loadProgram(dir)`). Options
 * are validated here; a bad or unknown one is a ConfigError naming its key.
 *
 * `Workers` types `host.run` by worker name (see {@link Host}): given
 * (`createHost<Workers>(…)`) or taken from the variable's declared type
 * (`const host: Host<Workers> = await createHost(…)`, or JSDoc `@type` in
 * plain JS). It is a promise about the modules the options name, as a typed
 * client's is about its server: the host checks names at run time, not the
 * types.
 */
export async function createHost<Workers extends object = UntypedWorkers>(
  options: HostOptions,
): Promise<Host<Workers>> {
  const checked = checkHostOptions(options);
  const { basePath, workers, maxDepth, maxAgents, maxThreads, warmThreads, models } = checked;
  const given = toSandbox(options.sandbox, basePath);
  const ceiling = checked.dynamic?.enabled
    ? computeCeiling(given, checkCeiling(given, [checked.dynamic.ceiling ?? []].flat()))
    : undefined;
  // The host's own stdio MCP servers' code too: the host runs it, unconfined.
  const { root, grantsOf } = protectWorkerCode(
    given,
    options.sandbox,
    basePath,
    workers,
    listMcpServerCode(checked.mcpServers, basePath),
  );
  // A worker `sandbox` key that some caller can never satisfy fails here,
  // naming the worker, the path and the key, instead of deep in a run.
  const unsatisfiable = checkWorkerSandboxes(root, workers, maxDepth);
  if (unsatisfiable.length > 0)
    throw configError(
      unsatisfiable.map((i) => ({
        path: ["workers", i.worker, "sandbox", ...i.key],
        message: i.message,
      })),
    );
  if (typeof checked.auditLog === "string") checkAuditOutside(root, checked.auditLog);
  // Spares serve workers with the default heap and no network, each only
  // workers with exactly its grants.
  const spareLaunch = new Map<string, SpareLaunch>();
  for (const [name, w] of workers) {
    const grants = grantsOf.get(name);
    if (grants && w.module && usesSpare(w))
      spareLaunch.set(name, {
        execArgv: computeExecArgv({ readPaths: grants }),
        // The URL the agent's boot names (runAgentThread resolves it alike).
        moduleUrl: pathToFileURL(resolveModulePath(w.module)).href,
      });
  }
  const pool =
    warmThreads > 0 && spareLaunch.size > 0
      ? new SparePools(warmThreads, spareLaunch, DEFAULT_RESOURCE_LIMITS)
      : undefined;
  // Process workers: kernel confinement must work here (else a ConfigError),
  // and their spares start now.
  const processes = await setUpProcesses(workers, root, checked.warmProcesses, codeOf);
  // What was started so far, stopped again if setup fails after it.
  const stopStarted = async () => {
    await pool?.close();
    await processes?.spares?.close();
  };
  // MCP servers some worker names: connected once, shared (a failure is a ConfigError).
  const mcpNames = new Set([...workers.values()].flatMap((w) => w.mcp ?? []));
  let mcp: McpConnections | undefined;
  try {
    mcp =
      mcpNames.size > 0
        ? await connectMcpServers(checked.mcpServers, mcpNames, basePath)
        : undefined;
  } catch (err) {
    await stopStarted();
    throw err;
  }
  const hub = new EventHub(options.onEvent);
  const grants = new GrantBook(workers);
  // A log that cannot be written stops everything: nothing runs unaudited.
  let auditFailure: Error | undefined;
  let audit: ReturnType<typeof openAuditOrThrow> | undefined;
  let runner: AgentRunner;
  try {
    audit =
      checked.auditLog === undefined
        ? undefined
        : openAuditOrThrow(checked.auditLog, () => {
            auditFailure = ioError(
              "audit",
              undefined,
              "the audit log could not be written; this host runs no more agents",
            );
            runner.close(auditFailure);
          });
    runner = new AgentRunner({
      workers,
      maxDepth,
      maxAgents,
      maxThreads,
      hub,
      pool,
      processes,
      models,
      mcp,
      approvals: {
        onApproval: checked.onApproval,
        audit,
        ceiling,
        onGrant: (g) => grants.add(g),
      },
    });
  } catch (err) {
    // The MCP servers started are stopped (their process groups gone), not left behind.
    audit?.close();
    await mcp?.close();
    await stopStarted();
    throw err;
  }
  // From now on a signal cannot open the inspector (see host-guards.ts).
  guardProcessSignals();
  const running = new Set<Promise<unknown>>();
  let closed = false;

  const host: Host = {
    async run(name: string, input?: unknown, opts: RunOptions = {}) {
      if (!workers.has(name)) {
        throw new DelegationRefusedError(
          `No worker named '${escapeControl(String(name).slice(0, 100))}'. Workers: ${[...workers.keys()].join(", ") || "none"}.`,
        );
      }
      opts.signal?.throwIfAborted();
      if (auditFailure) throw auditFailure;
      const agent = runner.createTopAgent(name, root, opts);
      const p = runner.runAgent(agent, input, undefined);
      running.add(p);
      const done = () => running.delete(p);
      p.then(done, done);
      // A run stopped because the audit log failed says so, not just "aborted".
      return p.catch((err: unknown) => {
        throw auditFailure ?? err;
      });
    },
    suggestedSandboxes: () => grants.suggest(),
    events: hub,
    async close() {
      if (closed) return;
      closed = true;
      runner.close();
      await Promise.allSettled([...running]);
      await pool?.close();
      await processes?.spares?.close();
      await mcp?.close();
      audit?.close();
      hub.end();
    },
  };
  // The worker map only types `run`; the host is the same.
  return host as Host<Workers>;
}

function toSandbox(s: HostOptions["sandbox"], basePath: string): Sandbox {
  if (s instanceof Sandbox) return s;
  // No sandbox configured: no worker has any file access.
  if (s === undefined) return createSandbox({ paths: {} });
  return createSandbox(s, { basePath });
}

/**
 * An audit log file agents can reach could be read (other agents' paths),
 * forged or replaced; it must lie outside every area the root sandbox can
 * read or write (audit-placement.ts).
 * @throws ConfigError naming the virtual path it would have
 */
function checkAuditOutside(root: Sandbox, file: string): void {
  const v = findAuditInside(root, file);
  if (v === undefined) return;
  throw configError([
    {
      path: ["auditLog"],
      message: `the audit log lies inside the sandbox (at '${escapeControl(v)}'), where agents could read, change or replace it; put it outside every sandbox area`,
    },
  ]);
}

/**
 * Opens the audit log now, so a bad path fails `createHost`.
 * @throws ConfigError naming the option and the file (a setup error, thrown to the host's own code)
 */
function openAuditOrThrow(
  target: string | import("node:stream").Writable,
  onFailure: () => void,
): AuditLog {
  try {
    return openAuditLog(target, onFailure);
  } catch (err) {
    throw configError([
      {
        path: ["auditLog"],
        message: `the audit log cannot be opened (${(err as NodeJS.ErrnoException).code ?? "error"})${typeof target === "string" ? `: '${escapeControl(target)}'` : ""}`,
      },
    ]);
  }
}
