/**
 * The agents of one host: admission (`maxAgents`, and `maxThreads` for live
 * threads), a deadline per subtree, delegation with narrowing at each hop,
 * and the events they produce. `createHost` validates options and hands
 * them here; everything in this class trusts them.
 */
import { setMaxListeners } from "node:events";
import {
  AgentThreadError,
  DelegationRefusedError,
  escapeControl,
  SandboxError,
} from "../errors.js";
import type { Sandbox } from "../sandbox/sandbox.js";
import { type AgentThreadOptions, DeadlineExceeded, runAgentThread } from "./agent-thread.js";
import { checkCallOptions, readAttachments } from "./delegation-options.js";
import type { EventHub } from "./event-hub.js";
import { createFairScheduler, type FairScheduler } from "./fair-scheduler.js";
import type { WorkerSpec } from "./host-types.js";
import { canRestrictNetwork } from "./permissions.js";
import type { Attachment } from "./protocol.js";
import type { SparePool } from "./spare-pool.js";
import { applyWorkerSandbox } from "./worker-sandbox.js";

/** Longest delay setTimeout honours (≈ 24.8 days). */
const MAX_TIMER_MS = 2_147_483_647;

/** One agent: a top-level run or a delegation. */
export interface Agent {
  id: string;
  worker: string;
  spec: WorkerSpec;
  sandbox: Sandbox;
  depth: number;
  /** When its subtree must be done (epoch ms), and the budget that set it. */
  deadline: { at: number; ms: number } | undefined;
  controller: AbortController;
  /** Callees it is waiting on; while > 0 it does not count as running. */
  waiting: number;
  /** Attachment bytes it has handed to callees still running. */
  attachedBytes: number;
}

/** What an {@link AgentRunner} needs, validated by `createHost`. */
export interface AgentRunnerOptions {
  workers: Map<string, WorkerSpec>;
  maxDepth: number;
  maxAgents: number;
  maxThreads: number;
  hub: EventHub;
  pool: SparePool | undefined;
}

let warnedNetwork = false;

/** Runs the agents of one host. */
export class AgentRunner {
  readonly #workers: Map<string, WorkerSpec>;
  readonly #maxDepth: number;
  readonly #maxAgents: number;
  readonly #maxThreads: number;
  readonly #hub: EventHub;
  readonly #pool: SparePool | undefined;
  /** Shares the host's event loop fairly among this host's agents. */
  readonly #scheduler: FairScheduler = createFairScheduler();
  readonly #live = new Set<Agent>();
  /** Agents running (not waiting on a callee). */
  #active = 0;
  #nextId = 1;
  #closed = false;

  constructor(opts: AgentRunnerOptions) {
    this.#workers = opts.workers;
    this.#maxDepth = opts.maxDepth;
    this.#maxAgents = opts.maxAgents;
    this.#maxThreads = opts.maxThreads;
    this.#hub = opts.hub;
    this.#pool = opts.pool;
  }

  /** A fresh agent id. */
  nextId(): string {
    return `a${this.#nextId++}`;
  }

  /** A top-level agent for worker `name` (whose spec exists) over `root`. */
  createTopAgent(
    name: string,
    root: Sandbox,
    opts: { signal?: AbortSignal; timeoutMs?: number },
  ): Agent {
    const spec = this.#workers.get(name)!;
    return {
      id: this.nextId(),
      worker: name,
      spec,
      sandbox: applyWorkerSandbox(root, spec.sandbox),
      depth: 1,
      deadline: earliest(undefined, spec.timeoutMs, opts.timeoutMs),
      controller: linkedController(opts.signal),
      waiting: 0,
      attachedBytes: 0,
    };
  }

  /** Refuses new agents and aborts every live one. */
  close(): void {
    this.#closed = true;
    for (const a of this.#live) a.controller.abort(new Error("host closed"));
  }

  /**
   * Admits one more agent: the host is open, fewer than `maxAgents` run
   * code, and fewer than `maxThreads` threads are alive (a caller waiting on
   * its callee gives its `maxAgents` slot back, so deep chains never
   * deadlock, but its thread lives on and can still run code).
   */
  #admit(worker: string): void {
    if (this.#closed) throw new DelegationRefusedError("The host is closed.");
    if (this.#active >= this.#maxAgents)
      throw new DelegationRefusedError(
        `Cannot start '${worker}': ${this.#maxAgents} agents are already running (maxAgents). Wait for one to finish, or raise maxAgents.`,
      );
    if (this.#live.size >= this.#maxThreads)
      throw new DelegationRefusedError(
        `Cannot start '${worker}': ${this.#maxThreads} agent threads are already alive, counting callers waiting on their callees (maxThreads). Wait for one to finish, or raise maxThreads.`,
      );
  }

  /** Runs one agent in its own thread; its deadline timer, events and slot. */
  async runAgent(
    agent: Agent,
    input: unknown,
    parent: Agent | undefined,
    attachments?: Attachment[],
  ): Promise<unknown> {
    this.#admit(agent.worker);
    this.#active++;
    this.#live.add(agent);
    const started = Date.now();
    // The agent that set a deadline keeps the timer; at the deadline its
    // whole subtree fails with reason `timeout`, whatever any of it catches.
    let timer: NodeJS.Timeout | undefined;
    if (agent.deadline && agent.deadline !== parent?.deadline) {
      const { at, ms } = agent.deadline;
      timer = setTimeout(
        () => agent.controller.abort(new DeadlineExceeded(ms)),
        Math.min(Math.max(0, at - Date.now()), MAX_TIMER_MS),
      );
    }
    this.#hub.emit({
      type: "agent_started",
      agentId: agent.id,
      worker: agent.worker,
      depth: agent.depth,
      ...(parent ? { parentId: parent.id } : {}),
      time: started,
    });
    try {
      if (!agent.spec.module) {
        throw new AgentThreadError(
          "not_runnable",
          `Worker '${agent.worker}' has no module: LLM workers need a model adapter, which this release does not include.`,
        );
      }
      if (agent.spec.network !== true && !canRestrictNetwork()) warnNetworkOnce();
      const opts: AgentThreadOptions = {
        module: agent.spec.module,
        input,
        sandbox: agent.sandbox,
        signal: agent.controller.signal,
        dependencies: agent.spec.dependencies ?? [],
        network: agent.spec.network === true,
        onDelegate: (name, childInput, callOpts) =>
          this.#delegate(agent, name, childInput, callOpts),
        onOperation: (op, path, error) => this.#reportOperation(agent, op, path, error),
        scheduler: this.#scheduler,
        onLog: (entry) =>
          this.#hub.emit({
            type: "log",
            agentId: agent.id,
            worker: agent.worker,
            level: entry.level,
            ...(entry.stream ? { stream: entry.stream } : {}),
            // A worker's text: no raw control characters reach an event.
            message: escapeControl(entry.message),
            time: Date.now(),
          }),
      };
      if (agent.spec.maxOldGenerationSizeMb !== undefined) {
        opts.resourceLimits = { maxOldGenerationSizeMb: agent.spec.maxOldGenerationSizeMb };
      } else if (this.#pool && usesSpare(agent.spec)) {
        const spare = this.#pool.take();
        if (spare) opts.spare = spare;
      }
      if (attachments) opts.attachments = attachments;
      const { value } = await runAgentThread(opts);
      this.#hub.emit({
        type: "agent_finished",
        agentId: agent.id,
        worker: agent.worker,
        durationMs: Date.now() - started,
        time: Date.now(),
      });
      return value;
    } catch (err) {
      const e = describeFailure(agent.worker, err);
      this.#hub.emit({
        type: "agent_failed",
        agentId: agent.id,
        worker: agent.worker,
        reason: e instanceof AgentThreadError ? e.reason : e.code,
        message: escapeControl(e.message),
        durationMs: Date.now() - started,
        time: Date.now(),
      });
      throw e;
    } finally {
      if (timer) clearTimeout(timer);
      this.#active--;
      this.#live.delete(agent);
      // Whatever happened, nothing below this agent outlives it.
      agent.controller.abort();
    }
  }

  #reportOperation(
    agent: Agent,
    op: string,
    path: string | undefined,
    error: SandboxError | undefined,
  ): void {
    const time = Date.now();
    const p = error?.path ?? path;
    this.#hub.emit({
      type: "operation",
      agentId: agent.id,
      op,
      ...(p ? { path: p } : {}),
      ok: !error,
      time,
    });
    if (error && isDenial(error)) {
      this.#hub.emit({
        type: "denial",
        agentId: agent.id,
        op,
        ...(p ? { path: p } : {}),
        code: error.code,
        message: error.message,
        time,
      });
    }
  }

  /** Serves `ctx.delegate` for `caller`: checks, narrows, runs the callee. */
  async #delegate(
    caller: Agent,
    name: string,
    input: unknown,
    raw: Record<string, unknown>,
  ): Promise<unknown> {
    const allowed = caller.spec.delegates ?? [];
    if (!allowed.includes(name)) {
      throw new DelegationRefusedError(
        `Worker '${caller.worker}' may not delegate to '${escapeControl(name.slice(0, 100))}'. It may call: ${allowed.length ? allowed.join(", ") : "no workers"}.`,
      );
    }
    const spec = this.#workers.get(name)!;
    const maxDepth = this.#maxDepth;
    if (caller.depth + 1 > maxDepth) {
      throw new DelegationRefusedError(
        `Cannot delegate to '${name}': the chain would be ${caller.depth + 1} agents deep (maxDepth ${maxDepth}). Do the work here, or return to your caller.`,
      );
    }
    const callOpts = checkCallOptions(raw);
    const sandbox = applyWorkerSandbox(
      applyWorkerSandbox(caller.sandbox, spec.sandbox),
      callOpts.sandbox,
    );
    // A caller waiting on its callees does not hold a slot they need: it
    // gives its own slot back once, however many callees it waits on.
    if (caller.waiting++ === 0) this.#active--;
    let charged = 0;
    try {
      this.#admit(name); // before any costly work (attachments)
      const read = await readAttachments(caller, callOpts.attachments);
      charged = read.charged;
      const child: Agent = {
        id: this.nextId(),
        worker: name,
        spec,
        sandbox,
        depth: caller.depth + 1,
        deadline: earliest(caller.deadline, spec.timeoutMs, callOpts.timeoutMs),
        controller: linkedController(caller.controller.signal),
        waiting: 0,
        attachedBytes: 0,
      };
      return await this.runAgent(child, input, caller, read.attachments);
    } finally {
      caller.attachedBytes -= charged;
      if (--caller.waiting === 0) this.#active++;
    }
  }
}

/** Spares are started with one set of flags: the default heap, no network. */
export function usesSpare(spec: WorkerSpec): boolean {
  return spec.maxOldGenerationSizeMb === undefined && spec.network !== true;
}

/** The earliest of an inherited deadline and budgets starting now. */
function earliest(
  inherited: Agent["deadline"],
  ...budgets: (number | undefined)[]
): Agent["deadline"] {
  let d = inherited;
  for (const ms of budgets)
    if (ms !== undefined && (d === undefined || Date.now() + ms < d.at))
      d = { at: Date.now() + ms, ms };
  return d;
}

function warnNetworkOnce(): void {
  if (warnedNetwork) return;
  warnedNetwork = true;
  process.emitWarning(
    `Agent threads have the network on this Node.js (${process.version}) although their workers do not ask for it ('network' is false): Node can take it away from a thread only from Node 25 on.`,
    { code: "MOUNTBOX_NETWORK_UNENFORCED" },
  );
}

/**
 * Names the worker in a failure, so a chain reads "Worker 'a' failed: Worker
 * 'b' failed: …". A worker that threw a mountbox error keeps it as `cause`.
 */
function describeFailure(worker: string, err: unknown): SandboxError {
  if (!(err instanceof AgentThreadError)) {
    return err instanceof SandboxError
      ? err
      : new AgentThreadError("crashed", `Worker '${worker}' could not run.`);
  }
  if (err.message.startsWith(`Worker '${worker}'`)) return err;
  const cause = err.cause;
  const message =
    err.reason === "threw" && cause instanceof Error
      ? `Worker '${worker}' failed: ${cause instanceof SandboxError ? "" : `${cause.name}: `}${cause.message}`
      : err.message.replace(/^The agent('s)?/, `Worker '${worker}'$1`);
  return new AgentThreadError(
    err.reason,
    message,
    { stdout: err.stdout, stderr: err.stderr },
    cause,
  );
}

function isDenial(e: SandboxError): boolean {
  return (
    e.code === "path_not_in_sandbox" ||
    e.code === "path_not_writable" ||
    e.code === "suffix_not_allowed" ||
    e.code === "file_too_large" ||
    e.code === "invalid_path"
  );
}

/** An AbortController that aborts when `parent` does. */
function linkedController(parent: AbortSignal | undefined): AbortController {
  const c = new AbortController();
  // Each callee listens on its caller's signal; many callees are normal.
  setMaxListeners(0, c.signal);
  if (parent) {
    if (parent.aborted) c.abort(parent.reason);
    else {
      const onAbort = () => c.abort(parent.reason);
      parent.addEventListener("abort", onAbort, { once: true });
      c.signal.addEventListener("abort", () => parent.removeEventListener("abort", onAbort), {
        once: true,
      });
    }
  }
  return c;
}
