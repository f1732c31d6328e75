/**
 * The agents of one host: admission (`maxAgents`, and `maxThreads` for live
 * threads), a deadline per subtree, delegation with narrowing at each hop,
 * and the events they produce. `createHost` validates options and hands
 * them here; everything in this class trusts them.
 */
import { setMaxListeners } from "node:events";
import {
  AgentGate,
  type GrantRecord,
  type OnApproval,
  portTargets,
} from "../approvals/approvals.js";
import { intersectSandboxes } from "../approvals/expansion.js";
import {
  AgentThreadError,
  DelegationRefusedError,
  escapeControl,
  SandboxError,
} from "../errors/index.js";
import type { AuditLog } from "../host/audit-log.js";
import type { EventHub } from "../host/event-hub.js";
import type { WorkerSpec } from "../host/host-types.js";
import {
  isLlmWorker,
  serveModelCall,
  ToolCallTracker,
  type WorkerModel,
} from "../models/model-host.js";
import { runCommand } from "../os/run-command.js";
import { createFairScheduler, type FairScheduler } from "../port/fair-scheduler.js";
import type {
  Attachment,
  LlmWorkerInput,
  RunCommandReply,
  RunCommandRequest,
} from "../port/protocol.js";
import { policyOf, type Sandbox } from "../sandbox/sandbox.js";
import {
  type AgentThreadOptions,
  DeadlineExceeded,
  runAgentThread,
} from "../threads/agent-thread.js";
import { canRestrictNetwork, llmWorkerCode } from "../threads/permissions.js";
import type { SparePools } from "../threads/spare-pool.js";
import { checkCallOptions, readAttachments } from "./delegation-options.js";
import { applyWorkerSandbox } from "./worker-sandbox.js";

/** How long a terminated thread may take to exit before it counts as stuck. */
const STUCK_AFTER_MS = 1000;
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
  /** Its approvals and grants, once it runs (issue 13). */
  gate?: AgentGate;
}

/** Approvals, expansion and audit of a host (issue 13), validated by `createHost`. */
export interface RunnerApprovals {
  onApproval: OnApproval | undefined;
  audit: AuditLog | undefined;
  /** Dynamic expansion is on: grants never go beyond this sandbox. */
  ceiling: Sandbox | undefined;
  /** Called with every expansion granted. */
  onGrant: (grant: GrantRecord) => void;
}

/** What an {@link AgentRunner} needs, validated by `createHost`. */
export interface AgentRunnerOptions {
  workers: Map<string, WorkerSpec>;
  maxDepth: number;
  maxAgents: number;
  maxThreads: number;
  hub: EventHub;
  pool: SparePools | undefined;
  /** Each LLM worker's model (see `resolveWorkerModels`). */
  models?: Map<string, WorkerModel>;
  /** Approvals, expansion and audit; absent → no approver, no expansion, no log. */
  approvals?: RunnerApprovals;
}

/** Default time limit of `ctx.runCommand`. */
const DEFAULT_COMMAND_TIMEOUT_MS = 60_000;

let warnedNetwork = false;

/** Runs the agents of one host. */
export class AgentRunner {
  readonly #workers: Map<string, WorkerSpec>;
  readonly #maxDepth: number;
  readonly #maxAgents: number;
  readonly #maxThreads: number;
  readonly #hub: EventHub;
  readonly #pool: SparePools | undefined;
  readonly #models: Map<string, WorkerModel>;
  readonly #approvals: RunnerApprovals | undefined;
  /** Shares the host's event loop fairly among this host's agents. */
  readonly #scheduler: FairScheduler = createFairScheduler();
  readonly #live = new Set<Agent>();
  /**
   * Threads of finished agents still running a while after `terminate()`
   * (blocked in native code, e.g. a read on an inherited descriptor).
   */
  #stuck = 0;
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
    this.#models = opts.models ?? new Map();
    this.#approvals = opts.approvals;
  }

  /**
   * The gate of an agent about to run: its own session memory (a caller's
   * decisions are not inherited), expansion bounded by the ceiling and, for
   * a callee, by its caller's effective sandbox. Undefined when nothing in
   * its sandbox could ever ask.
   */
  #gateFor(agent: Agent, parent: Agent | undefined): AgentGate | undefined {
    const a = this.#approvals;
    const chain = [...(parent?.gate?.chain ?? []), agent.worker];
    const ceiling = a?.ceiling;
    const flagged = policyOf(agent.sandbox).table.mounts.some(
      (m) => m.readApproval || m.writeApproval,
    );
    if (!ceiling && !flagged && !a?.audit) return undefined;
    const callerBound = parent?.gate?.effective ?? parent?.sandbox;
    return new AgentGate({
      agentId: agent.id,
      worker: agent.worker,
      chain,
      sandbox: agent.sandbox,
      onApproval: a?.onApproval,
      expansion: ceiling
        ? { bound: callerBound ? intersectSandboxes(ceiling, callerBound) : ceiling }
        : undefined,
      audit: a?.audit,
      onGrant: (g) => a?.onGrant(g),
    });
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

  /** Refuses new agents and aborts every live one (with `reason`, if given). */
  close(reason?: Error): void {
    this.#closed = true;
    for (const a of this.#live) a.controller.abort(reason ?? new Error("host closed"));
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
    if (this.#live.size + this.#stuck >= this.#maxThreads)
      throw new DelegationRefusedError(
        `Cannot start '${worker}': ${this.#maxThreads} agent threads are already alive, counting callers waiting on their callees and stopped threads that have not exited yet (maxThreads). Wait for one to finish, or raise maxThreads.`,
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
    // A thread still running STUCK_AFTER_MS after its agent finished is
    // counted against maxThreads until it really exits.
    let handedOver = false;
    let exited = false;
    let stuck = false;
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
    const gate = this.#gateFor(agent, parent);
    if (gate) agent.gate = gate;
    const model = isLlmWorker(agent.spec) ? this.#models.get(agent.worker) : undefined;
    const tracker = model ? new ToolCallTracker(agent.id, (e) => this.#hub.emit(e)) : undefined;
    try {
      if (!agent.spec.module && !model) {
        throw new AgentThreadError(
          "not_runnable",
          `Worker '${agent.worker}' has no module and no model: give it 'module', or 'instructions' and a 'model' from createHost({ models }).`,
        );
      }
      if (agent.spec.network !== true && !canRestrictNetwork()) warnNetworkOnce();
      // An LLM agent runs the built-in LLM worker module; its thread never
      // needs the network (the host makes the model calls).
      const code = model
        ? llmWorkerCode()
        : { module: agent.spec.module!, dependencies: agent.spec.dependencies ?? [] };
      const opts: AgentThreadOptions = {
        module: code.module,
        input: model ? this.#llmInput(agent, input) : input,
        sandbox: agent.sandbox,
        signal: agent.controller.signal,
        dependencies: [...(code.dependencies ?? [])],
        network: !model && agent.spec.network === true,
        onDelegate: (name, childInput, callOpts) =>
          auditWhenSettled(agent, "delegate", this.#delegate(agent, name, childInput, callOpts)),
        onRunCommand: (command, request) =>
          auditWhenSettled(agent, "runCommand", this.#runCommand(agent, command, request)),
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
        const spare = this.#pool.take(agent.worker);
        if (spare) opts.spare = spare;
      }
      if (attachments) opts.attachments = attachments;
      if (gate) {
        // Only operations that touch a path can need a decision; the rest
        // run on the effective sandbox (so describe() shows the grants).
        opts.beforeOperation = (op, args) => {
          const targets = portTargets(op, args);
          return targets.length > 0 ? gate.check(targets) : gate.effective;
        };
      }
      if (model && tracker)
        opts.onModel = (kind, options) => this.#callModel(agent, model, tracker, kind, options);
      opts.onThreadExit = () => {
        exited = true;
        if (stuck) this.#stuck--;
      };
      handedOver = true;
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
        message: e.message,
        durationMs: Date.now() - started,
        time: Date.now(),
      });
      throw e;
    } finally {
      tracker?.flush();
      if (handedOver && !exited) {
        setTimeout(() => {
          if (exited) return;
          stuck = true;
          this.#stuck++;
        }, STUCK_AFTER_MS).unref();
      }
      if (timer) clearTimeout(timer);
      this.#active--;
      this.#live.delete(agent);
      // Whatever happened, nothing below this agent outlives it.
      agent.controller.abort();
    }
  }

  /** What the built-in LLM worker module gets: the worker's configuration and the input. */
  #llmInput(agent: Agent, input: unknown): LlmWorkerInput {
    const spec = agent.spec;
    const out: LlmWorkerInput = {
      instructions: spec.instructions ?? "",
      workers: (spec.delegates ?? []).map((name) => {
        const description = this.#workers.get(name)?.description;
        return description === undefined ? { name } : { name, description };
      }),
      shell: spec.shell === true,
      input,
    };
    if (spec.maxSteps !== undefined) out.maxSteps = spec.maxSteps;
    if (spec.tools !== undefined) out.toolNames = [...spec.tools];
    return out;
  }

  /**
   * Serves one model call of an LLM agent with the model of its worker's
   * spec (the thread never names one), and reports it.
   */
  async #callModel(
    agent: Agent,
    model: WorkerModel,
    tracker: ToolCallTracker,
    kind: "generate" | "stream",
    options: Record<string, unknown>,
  ): Promise<unknown> {
    tracker.observePrompt(options.prompt);
    const result = (await serveModelCall({
      kind,
      options,
      model,
      signal: agent.controller.signal,
      onDone: (info) =>
        this.#hub.emit({
          type: "model_call",
          agentId: agent.id,
          worker: agent.worker,
          model: escapeControl(model.name),
          ...(info.inputTokens !== undefined ? { inputTokens: info.inputTokens } : {}),
          ...(info.outputTokens !== undefined ? { outputTokens: info.outputTokens } : {}),
          finishReason: info.finishReason,
          durationMs: Math.round(info.ms * 1000) / 1000,
          time: Date.now(),
        }),
    })) as { content?: unknown; parts?: unknown };
    tracker.observeAnswer(kind === "generate" ? result.content : result.parts);
    return result;
  }

  /** Serves `ctx.runCommand` for workers with `shell: true`, within the agent's deadline. */
  async #runCommand(
    agent: Agent,
    command: string,
    request: RunCommandRequest,
  ): Promise<RunCommandReply> {
    if (agent.spec.shell !== true)
      throw new DelegationRefusedError(
        `Shell is not enabled for worker '${agent.worker}': it may not run commands (give it 'shell: true').`,
      );
    let timeoutMs = request.timeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS;
    if (agent.deadline) timeoutMs = Math.min(timeoutMs, agent.deadline.at - Date.now());
    if (timeoutMs < 1)
      throw new DelegationRefusedError("No time is left before this agent's deadline.");
    const sandbox = agent.gate ? await agent.gate.checkShell() : agent.sandbox;
    const r = await runCommand(sandbox, command, {
      timeoutMs,
      network: agent.spec.network === true,
      env: {},
      signal: agent.controller.signal,
    });
    return {
      exitCode: r.exitCode,
      stdout: r.stdout,
      stderr: r.stderr,
      timedOut: r.timedOut,
      truncated: r.truncated,
      notes: [...r.notes],
      confined: r.confined,
    };
  }

  #reportOperation(
    agent: Agent,
    op: string,
    path: string | undefined,
    error: SandboxError | undefined,
  ): void {
    const time = Date.now();
    const p = error?.path ?? path;
    agent.gate?.audit(
      op,
      p === undefined ? undefined : toVirtualOrUndefined(agent.sandbox, p),
      error,
    );
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
      const read = await this.#readAttachments(caller, callOpts.attachments);
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

  /**
   * A caller's attachments, read like its reads: through its gate (each
   * asks approval where a read would) and written to the audit log.
   */
  async #readAttachments(
    caller: Agent,
    paths: string[] | undefined,
  ): ReturnType<typeof readAttachments> {
    const gate = caller.gate;
    if (!gate || !paths || paths.length === 0) return readAttachments(caller, paths);
    const audit = (err: unknown) => {
      for (const p of paths)
        gate.audit(
          "readAttachment",
          toVirtualOrUndefined(caller.sandbox, p),
          err === undefined
            ? undefined
            : { code: err instanceof SandboxError ? err.code : "io_error" },
        );
    };
    try {
      const sandbox = await gate.check(paths.flatMap((p) => portTargets("readFile", [p])));
      const read = await readAttachments(caller, paths, sandbox);
      audit(undefined);
      return read;
    } catch (err) {
      audit(err);
      throw err;
    }
  }
}

/** Spares are started with one set of flags: the default heap, no network. */
export function usesSpare(spec: WorkerSpec): boolean {
  // LLM workers run the built-in module, whose grants spares do not have.
  return (
    spec.maxOldGenerationSizeMb === undefined && spec.network !== true && spec.module !== undefined
  );
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
  const cause = err.cause;
  const message = err.message.startsWith(`Worker '${worker}'`)
    ? err.message
    : err.reason === "threw" && cause instanceof Error
      ? `Worker '${worker}' failed: ${cause instanceof SandboxError ? "" : `${cause.name}: `}${cause.message}`
      : err.message.replace(/^The agent('s)?/, `Worker '${worker}'$1`);
  // The cause's text comes from the worker: no raw control characters.
  return new AgentThreadError(
    err.reason,
    escapeControl(message),
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
    e.code === "invalid_path" ||
    e.code === "approval_denied"
  );
}

/**
 * `work`, with its audit line written when it settles (hook operations are
 * not reported by the port server). The line names no command or worker
 * text: only the operation and its outcome.
 */
function auditWhenSettled<T>(agent: Agent, op: string, work: Promise<T>): Promise<T> {
  const gate = agent.gate;
  if (!gate) return work;
  return work.then(
    (v) => {
      gate.audit(op, undefined, undefined);
      return v;
    },
    (err: unknown) => {
      gate.audit(op, undefined, { code: err instanceof SandboxError ? err.code : "io_error" });
      throw err;
    },
  );
}

/** The canonical virtual form of a worker's path argument, or undefined (a host path, say). */
function toVirtualOrUndefined(sandbox: Sandbox, path: string): string | undefined {
  try {
    return policyOf(sandbox).normalize(path) ?? undefined;
  } catch {
    return undefined;
  }
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
