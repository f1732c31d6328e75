/**
 * The agents of one host: each one admitted, run in its own thread under its
 * deadline and signal, and wired to what it may ask the host for (sandbox
 * operations through its gate, model calls, shell commands, delegations).
 * `createHost` validates options and hands them here; everything in this
 * class trusts them.
 */
import { AgentGate, type GrantRecord } from "../approvals/agent-gate.js";
import type { OnApproval } from "../approvals/approval-types.js";
import { intersectSandboxes } from "../approvals/expansion.js";
import { portTargets } from "../approvals/gate-targets.js";
import { AgentThreadError } from "../errors/index.js";
import type { AuditLog } from "../host/audit-log.js";
import type { EventHub } from "../host/event-hub.js";
import type { WorkerSpec } from "../host/host-types.js";
import { effectiveMcpServers, mcpToolsFor, serveAgentMcpCall } from "../mcp-client/mcp-calls.js";
import type { McpConnections } from "../mcp-client/mcp-servers.js";
import { ToolCallTracker } from "../models/tool-call-tracker.js";
import { isLlmWorker, type WorkerModel } from "../models/worker-models.js";
import { createFairScheduler, type FairScheduler } from "../port/fair-scheduler.js";
import type { Attachment } from "../port/protocol.js";
import { runAgentProcess } from "../processes/agent-process.js";
import type { ProcessSetup } from "../processes/process-setup.js";
import { policyOf, type Sandbox } from "../sandbox/sandbox.js";
import { runAgentThread } from "../threads/agent-thread.js";
import { canRestrictNetwork, llmWorkerCode } from "../threads/permissions.js";
import type { SparePools } from "../threads/spare-pool.js";
import type { AgentThreadOptions, AgentThreadResult } from "../threads/thread-options.js";
import { Admission, type ThreadWatch } from "./admission.js";
import { type Agent, createAgent, pickDeadline, startDeadlineTimer } from "./agent.js";
import { reportFailed, reportFinished, reportLog, reportStarted } from "./agent-events.js";
import {
  buildLlmInput,
  serveAgentCommand,
  serveAgentGit,
  serveAgentModelCall,
} from "./agent-services.js";
import { type DelegationContext, delegate } from "./delegation.js";
import { auditWhenSettled, reportOperation } from "./operation-report.js";
import { applyWorkerSandbox } from "./worker-sandbox.js";

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
  /** How process agents run (when some worker has `isolation: "process"`). */
  processes?: ProcessSetup | undefined;
  /** Each LLM worker's model (see `resolveWorkerModels`). */
  models?: Map<string, WorkerModel>;
  /** Approvals, expansion and audit; absent → no approver, no expansion, no log. */
  approvals?: RunnerApprovals;
  /** The MCP servers the host connected (those some worker names). */
  mcp?: McpConnections | undefined;
}

/** Runs the agents of one host. */
export class AgentRunner {
  readonly #workers: Map<string, WorkerSpec>;
  readonly #hub: EventHub;
  readonly #pool: SparePools | undefined;
  readonly #processes: ProcessSetup | undefined;
  readonly #models: Map<string, WorkerModel>;
  readonly #approvals: RunnerApprovals | undefined;
  readonly #mcp: McpConnections | undefined;
  readonly #admission: Admission;
  readonly #delegation: DelegationContext;
  /** Shares the host's event loop fairly among this host's agents. */
  readonly #scheduler: FairScheduler = createFairScheduler();
  #nextId = 1;

  constructor(opts: AgentRunnerOptions) {
    this.#workers = opts.workers;
    this.#hub = opts.hub;
    this.#pool = opts.pool;
    this.#processes = opts.processes;
    this.#models = opts.models ?? new Map();
    this.#approvals = opts.approvals;
    this.#mcp = opts.mcp;
    this.#admission = new Admission(opts);
    this.#delegation = {
      workers: opts.workers,
      maxDepth: opts.maxDepth,
      admission: this.#admission,
      nextId: () => this.nextId(),
      runAgent: (child, input, caller, attachments) =>
        this.runAgent(child, input, caller, attachments),
    };
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
    // A server whose calls ask approval needs the agent's approver.
    const mcpAsks = (agent.mcpServers ?? []).some((s) => this.#mcp?.get(s)?.approval === "always");
    if (!ceiling && !flagged && !a?.audit && !mcpAsks) return undefined;
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
      signal: agent.controller.signal,
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
    return createAgent(
      {
        id: this.nextId(),
        worker: name,
        spec,
        sandbox: applyWorkerSandbox(root, spec.sandbox),
        depth: 1,
        deadline: pickDeadline(undefined, spec.timeoutMs, opts.timeoutMs),
      },
      opts.signal,
    );
  }

  /** Refuses new agents and aborts every live one (with `reason`, if given). */
  close(reason?: Error): void {
    this.#admission.close(reason);
  }

  /** Runs one agent in its own thread; its deadline timer, events and slot. */
  async runAgent(
    agent: Agent,
    input: unknown,
    parent: Agent | undefined,
    attachments?: Attachment[],
  ): Promise<unknown> {
    this.#admission.enter(agent);
    let thread: ThreadWatch | undefined;
    const started = Date.now();
    const timer = startDeadlineTimer(agent, parent);
    reportStarted(this.#hub, agent, parent, started);
    // A callee may use only the MCP servers its caller may use too.
    agent.mcpServers = effectiveMcpServers(agent.spec, parent);
    const gate = this.#gateFor(agent, parent);
    if (gate) agent.gate = gate;
    const model = isLlmWorker(agent.spec) ? this.#models.get(agent.worker) : undefined;
    const tracker = model ? new ToolCallTracker(agent.id, (e) => this.#hub.emit(e)) : undefined;
    try {
      const opts = this.#threadOptions(agent, input, model, tracker);
      if (attachments) opts.attachments = attachments;
      thread = this.#admission.watchThread();
      opts.onThreadExit = thread.onThreadExit;
      const { value } = await this.#run(agent, opts);
      reportFinished(this.#hub, agent, started);
      return value;
    } catch (err) {
      throw reportFailed(this.#hub, agent, err, started);
    } finally {
      tracker?.flush();
      thread?.onAgentDone();
      if (timer) clearTimeout(timer);
      this.#admission.leave(agent);
      // Whatever happened, nothing below this agent outlives it.
      agent.controller.abort();
    }
  }

  /** Runs the agent in a thread, or in a confined process if its worker says so. */
  #run(agent: Agent, opts: AgentThreadOptions): Promise<AgentThreadResult> {
    const processes = this.#processes;
    if (agent.spec.isolation !== "process" || processes === undefined) return runAgentThread(opts);
    const spare = processes.spares?.take(agent.worker);
    const plan = processes.plans.get(agent.worker);
    return runAgentProcess({
      ...opts,
      confinement: processes.confinement,
      ...(spare ? { processSpare: spare } : {}),
      ...(plan ? { plan } : {}),
    });
  }

  /**
   * The options of an agent's thread: its code (an LLM agent runs the
   * built-in LLM worker module), heap or spare, and the hooks that serve
   * what it asks the host for.
   */
  #threadOptions(
    agent: Agent,
    input: unknown,
    model: WorkerModel | undefined,
    tracker: ToolCallTracker | undefined,
  ): AgentThreadOptions {
    if (!agent.spec.module && !model) {
      throw new AgentThreadError(
        "not_runnable",
        `Worker '${agent.worker}' has no module and no model: give it 'module', or 'instructions' and a 'model' from createHost({ models }).`,
      );
    }
    // A process agent has the network only if it asks (its own namespace).
    if (agent.spec.network !== true && agent.spec.isolation !== "process" && !canRestrictNetwork())
      warnNetworkOnce();
    // An LLM agent runs the built-in LLM worker module; its thread never
    // needs the network (the host makes the model calls).
    const code = model
      ? llmWorkerCode()
      : { module: agent.spec.module!, dependencies: agent.spec.dependencies ?? [] };
    const opts: AgentThreadOptions = {
      module: code.module,
      input: model
        ? buildLlmInput(agent, this.#workers, input, mcpToolsFor(this.#mcp, agent.mcpServers ?? []))
        : input,
      sandbox: agent.sandbox,
      signal: agent.controller.signal,
      dependencies: [...(code.dependencies ?? [])],
      network: !model && agent.spec.network === true,
      onDelegate: (name, childInput, callOpts) =>
        auditWhenSettled(
          agent,
          "delegate",
          delegate(this.#delegation, agent, name, childInput, callOpts),
          name,
        ),
      onRunCommand: (command, request) =>
        auditWhenSettled(agent, "runCommand", serveAgentCommand(agent, command, request)),
      onGit: (tool, args) => auditWhenSettled(agent, "git", serveAgentGit(agent, tool, args), tool),
      onOperation: (op, path, error, aborted) =>
        reportOperation(this.#hub, agent, op, path, error, aborted),
      // The run waits for what its hooks still run: stop them (a callee is
      // aborted, a command killed) as soon as the agent is done.
      onStop: () => agent.controller.abort(),
      scheduler: this.#scheduler,
      onLog: (entry) => reportLog(this.#hub, agent, entry),
    };
    if (agent.spec.isolation === "process") {
      if (agent.spec.maxOldGenerationSizeMb !== undefined)
        opts.resourceLimits = { maxOldGenerationSizeMb: agent.spec.maxOldGenerationSizeMb };
    } else if (agent.spec.maxOldGenerationSizeMb !== undefined) {
      opts.resourceLimits = { maxOldGenerationSizeMb: agent.spec.maxOldGenerationSizeMb };
    } else if (this.#pool && usesSpare(agent.spec)) {
      const spare = this.#pool.take(agent.worker);
      if (spare) opts.spare = spare;
    }
    const gate = agent.gate;
    if (gate) {
      // Only operations that touch a path can need a decision; the rest
      // run on the effective sandbox (so describe() shows the grants).
      opts.beforeOperation = (op, args) => {
        const targets = portTargets(op, args);
        return targets.length > 0 ? gate.check(targets) : gate.effective;
      };
    }
    if (model && tracker)
      opts.onModel = (kind, options) =>
        serveAgentModelCall(this.#hub, agent, model, tracker, kind, options);
    if (model && this.#mcp)
      opts.onMcpCall = (server, tool, args) =>
        auditWhenSettled(
          agent,
          "mcp.call",
          serveAgentMcpCall(this.#hub, this.#mcp, agent, server, tool, args),
          // Named in the audit line like a callee: `server__tool` (the thread's text, cut).
          `${server}__${tool}`,
        );
    return opts;
  }
}

/** Spares are started with one set of flags: the default heap, no network. */
export function usesSpare(spec: WorkerSpec): boolean {
  // LLM workers run the built-in module, whose grants spares do not have.
  return (
    spec.maxOldGenerationSizeMb === undefined &&
    spec.network !== true &&
    spec.module !== undefined &&
    spec.isolation !== "process"
  );
}

let warnedNetwork = false;

/** Warns once per process that threads keep the network this Node cannot take away. */
function warnNetworkOnce(): void {
  if (warnedNetwork) return;
  warnedNetwork = true;
  process.emitWarning(
    `Agent threads have the network on this Node.js (${process.version}) although their workers do not ask for it ('network' is false): Node can take it away from a thread only from Node 25 on.`,
    { code: "MOUNTBOX_NETWORK_UNENFORCED" },
  );
}
