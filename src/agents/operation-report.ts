/**
 * What an agent's operations leave behind: an `operation` event for each
 * (and a `denial` event when the sandbox refused it), and a line in the
 * audit log through the agent's gate (and a `denial` line when refused) —
 * virtual paths only.
 */
import { escapeControl, SandboxError, shortenMiddle } from "../errors/index.js";
import { REFUSAL_CODES } from "../host/audit-log.js";
import type { EventHub } from "../host/event-hub.js";
import { policyOf, type Sandbox } from "../sandbox/sandbox.js";
import type { Agent } from "./agent.js";

/** Longest path, as sent, that an audit line names when it is not a valid virtual path. */
const AUDIT_PATH_CHARS = 512;

/**
 * Reports one sandbox operation of `agent` (served by its port server):
 * audit line and events. `aborted`: it did not complete because the agent
 * stopped (outcome `aborted`, event `aborted: true`).
 */
export function reportOperation(
  hub: EventHub,
  agent: Agent,
  op: string,
  path: string | undefined,
  error: SandboxError | undefined,
  aborted = false,
): void {
  const time = Date.now();
  const raw = error?.path ?? path;
  // The audit log names the canonical path (it escapes what it writes);
  // a path that cannot be normalized is named as sent, cut in the middle.
  if (agent.gate)
    agent.gate.audit(
      op,
      raw === undefined
        ? undefined
        : (toVirtualOrUndefined(agent.sandbox, raw) ?? shortenMiddle(raw, AUDIT_PATH_CHARS)),
      error,
      aborted,
    );
  // Events show the worker's text: no raw control or invisible characters.
  const p = raw === undefined ? undefined : escapeControl(raw);
  hub.emit({
    type: "operation",
    agentId: agent.id,
    op,
    ...(p ? { path: p } : {}),
    ok: !error,
    ...(aborted && error ? { aborted: true as const } : {}),
    time,
  });
  if (error && !aborted && isDenial(error)) {
    hub.emit({
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

/**
 * `work`, with its audit line written when it settles (hook operations are
 * not reported by the port server). The line names no command or worker
 * text: only the operation and its outcome — `aborted` when the agent
 * stopped before it settled (a command is killed then, a callee aborted, and
 * the agent never gets the answer). The agent's run waits for it (see
 * `PortServer.close`), so the line is in before the run ends.
 */
export function auditWhenSettled<T>(
  agent: Agent,
  op: string,
  work: Promise<T>,
  /** The worker a `delegate` called, as asked (a hostile thread's text: cut to 100 characters). */
  callee?: string,
): Promise<T> {
  const gate = agent.gate;
  if (!gate) return work;
  const signal = agent.controller.signal;
  const who = callee === undefined ? undefined : shortenMiddle(String(callee), 100);
  return work.then(
    (v) => {
      gate.audit(op, undefined, undefined, signal.aborted, who);
      return v;
    },
    (err: unknown) => {
      // The error itself (a refusal the gate already logged is known by it).
      const error = err instanceof SandboxError ? err : { code: "io_error" };
      gate.audit(op, undefined, error, signal.aborted, who);
      throw err;
    },
  );
}

/** Converts a worker's path argument to its canonical virtual form, or undefined (a host path, say). */
export function toVirtualOrUndefined(sandbox: Sandbox, path: string): string | undefined {
  try {
    return policyOf(sandbox).normalize(path) ?? undefined;
  } catch {
    return undefined;
  }
}

/** A refusal (the audit log's `denial` lines use the same codes). */
function isDenial(e: SandboxError): boolean {
  return REFUSAL_CODES.has(e.code);
}
