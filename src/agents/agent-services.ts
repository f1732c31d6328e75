/**
 * What an agent's thread asks the host for besides sandbox operations and
 * delegations: an LLM agent's configuration and model calls (the thread
 * never names a model, nor needs the network), `ctx.runCommand` for
 * workers with `shell: true` and `ctx.git` for workers with `git: true`.
 */
import { DelegationRefusedError, escapeControl } from "../errors/index.js";
import { runGitTool } from "../git/git-tools.js";
import type { EventHub } from "../host/event-hub.js";
import type { HostEvent, WorkerSpec } from "../host/host-types.js";
import { type ModelCallInfo, serveModelCall } from "../models/model-calls.js";
import type { ToolCallTracker } from "../models/tool-call-tracker.js";
import type { WorkerModel } from "../models/worker-models.js";
import { runCommand } from "../os/run-command.js";
import type {
  LlmMcpTool,
  LlmWorkerInput,
  RunCommandReply,
  RunCommandRequest,
} from "../port/protocol.js";
import type { GitToolName } from "../tools/types.js";
import type { Agent } from "./agent.js";

/** Default time limit of `ctx.runCommand`. */
const DEFAULT_COMMAND_TIMEOUT_MS = 60_000;

/** Builds what the built-in LLM worker module gets: the worker's configuration and the input. */
export function buildLlmInput(
  agent: Agent,
  workers: Map<string, WorkerSpec>,
  input: unknown,
  mcpTools: LlmMcpTool[] = [],
): LlmWorkerInput {
  const spec = agent.spec;
  const out: LlmWorkerInput = {
    instructions: spec.instructions ?? "",
    workers: (spec.delegates ?? []).map((name) => {
      const description = workers.get(name)?.description;
      return description === undefined ? { name } : { name, description };
    }),
    shell: spec.shell === true,
    input,
  };
  if (spec.git === true) out.git = true;
  if (spec.maxSteps !== undefined) out.maxSteps = spec.maxSteps;
  if (spec.stream === true) out.stream = true;
  if (spec.tools !== undefined) out.toolNames = [...spec.tools];
  if (mcpTools.length > 0) out.mcpTools = mcpTools;
  return out;
}

/**
 * Serves one model call of an LLM agent with the model of its worker's
 * spec (the thread never names one), and reports it: a `model_call` event
 * whether it succeeded or failed, `model_text` events as a streamed
 * answer's text arrives.
 */
export async function serveAgentModelCall(
  hub: EventHub,
  agent: Agent,
  model: WorkerModel,
  tracker: ToolCallTracker,
  kind: "generate" | "stream",
  options: Record<string, unknown>,
): Promise<unknown> {
  tracker.observePrompt(options.prompt);
  const name = escapeControl(model.name);
  const result = (await serveModelCall({
    kind,
    options,
    model,
    signal: agent.controller.signal,
    ...(agent.deadline ? { deadlineAt: agent.deadline.at } : {}),
    onDone: (info) => hub.emit(modelCallEvent(agent, name, info)),
    onText: (textKind, delta) =>
      hub.emit({
        type: "model_text",
        agentId: agent.id,
        worker: agent.worker,
        model: name,
        kind: textKind,
        delta: escapeText(delta),
        time: Date.now(),
      }),
  })) as { content?: unknown; parts?: unknown };
  tracker.observeAnswer(kind === "generate" ? result.content : result.parts);
  return result;
}

/** The `model_call` event of a finished or failed call. */
function modelCallEvent(agent: Agent, model: string, info: ModelCallInfo): HostEvent {
  const common = {
    type: "model_call" as const,
    agentId: agent.id,
    worker: agent.worker,
    model,
    status: info.status,
    attempts: info.attempts,
    durationMs: Math.round(info.ms * 1000) / 1000,
    time: Date.now(),
  };
  if (info.status === "error")
    return {
      ...common,
      finishReason: "error",
      errorCode: info.errorCode,
      ...(info.statusCode !== undefined ? { statusCode: info.statusCode } : {}),
      isRetryable: info.isRetryable,
    };
  return {
    ...common,
    ...(info.inputTokens !== undefined ? { inputTokens: info.inputTokens } : {}),
    ...(info.outputTokens !== undefined ? { outputTokens: info.outputTokens } : {}),
    finishReason: info.finishReason,
  };
}

/**
 * A model's text for an event: newlines and tabs kept (a live view shows
 * lines), every other control or invisible character escaped (the text may
 * echo what a hostile file told the model, terminal escapes included).
 */
function escapeText(text: string): string {
  return text.replace(/[^\n\t]+/g, escapeControl);
}

/** Serves `ctx.runCommand` for workers with `shell: true`, within the agent's deadline. */
export async function serveAgentCommand(
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

/**
 * Serves `ctx.git(tool, args)` for workers with `git: true`: the git tool
 * runs here, under OS enforcement over the agent's sandbox, within its
 * deadline. Asks approval as a shell command does (git reads, and a commit
 * writes, the whole repository).
 */
export async function serveAgentGit(
  agent: Agent,
  tool: GitToolName,
  args: Record<string, unknown>,
): Promise<string> {
  if (agent.spec.git !== true)
    throw new DelegationRefusedError(
      `Git tools are not enabled for worker '${agent.worker}': it may not use them (give it 'git: true').`,
    );
  let timeoutMs = DEFAULT_COMMAND_TIMEOUT_MS;
  if (agent.deadline) timeoutMs = Math.min(timeoutMs, agent.deadline.at - Date.now());
  if (timeoutMs < 1)
    throw new DelegationRefusedError("No time is left before this agent's deadline.");
  const sandbox = agent.gate ? await agent.gate.checkShell(tool) : agent.sandbox;
  return runGitTool(sandbox, tool, args, { signal: agent.controller.signal, timeoutMs });
}
