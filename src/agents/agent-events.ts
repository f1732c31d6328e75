/**
 * The events of one agent's life: started, finished or failed (its failure
 * naming its worker), and the log lines of its thread.
 */
import { AgentThreadError, escapeControl, SandboxError } from "../errors/index.js";
import type { EventHub } from "../host/event-hub.js";
import type { AgentLogEntry } from "../threads/thread-options.js";
import type { Agent } from "./agent.js";

/** Reports that `agent` started (at `time`), under `parent` if it is a callee. */
export function reportStarted(
  hub: EventHub,
  agent: Agent,
  parent: Agent | undefined,
  time: number,
): void {
  hub.emit({
    type: "agent_started",
    agentId: agent.id,
    worker: agent.worker,
    depth: agent.depth,
    ...(parent ? { parentId: parent.id } : {}),
    time,
  });
}

/** Reports that `agent`, started at `started`, finished. */
export function reportFinished(hub: EventHub, agent: Agent, started: number): void {
  hub.emit({
    type: "agent_finished",
    agentId: agent.id,
    worker: agent.worker,
    durationMs: Date.now() - started,
    time: Date.now(),
  });
}

/** Reports that `agent`, started at `started`, failed with `err`; returns the error to throw. */
export function reportFailed(
  hub: EventHub,
  agent: Agent,
  err: unknown,
  started: number,
): SandboxError {
  const e = describeFailure(agent.worker, err);
  hub.emit({
    type: "agent_failed",
    agentId: agent.id,
    worker: agent.worker,
    reason: e instanceof AgentThreadError ? e.reason : e.code,
    message: e.message,
    durationMs: Date.now() - started,
    time: Date.now(),
  });
  return e;
}

/** Reports one log line of `agent`'s thread. */
export function reportLog(hub: EventHub, agent: Agent, entry: AgentLogEntry): void {
  hub.emit({
    type: "log",
    agentId: agent.id,
    worker: agent.worker,
    level: entry.level,
    ...(entry.stream ? { stream: entry.stream } : {}),
    ...(entry.dropped !== undefined ? { dropped: entry.dropped } : {}),
    // A worker's text: no raw control characters reach an event.
    message: escapeControl(entry.message),
    time: Date.now(),
  });
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
  // A failed model call (here or in a callee) keeps what the provider said.
  const own = err.statusCode !== undefined || err.isRetryable !== undefined;
  const model = !own && cause instanceof AgentThreadError ? cause : err;
  const info = {
    ...(model.statusCode !== undefined ? { statusCode: model.statusCode } : {}),
    ...(model.isRetryable !== undefined ? { isRetryable: model.isRetryable } : {}),
  };
  // The cause's text comes from the worker: no raw control characters.
  return new AgentThreadError(
    err.reason,
    escapeControl(message),
    { stdout: err.stdout, stderr: err.stderr },
    cause,
    info,
  );
}
