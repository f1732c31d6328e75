/**
 * One agent of a host (a top-level run or a delegation): what the host keeps
 * about it, its deadline (one for its whole subtree) and its abort signal,
 * linked to its caller's.
 */
import { setMaxListeners } from "node:events";
import type { AgentGate } from "../approvals/agent-gate.js";
import type { WorkerSpec } from "../host/host-types.js";
import type { Sandbox } from "../sandbox/sandbox.js";
import { DeadlineExceeded } from "../threads/agent-thread.js";

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
  /** MCP servers it may use: its worker's `mcp`, narrowed by its caller's (set when it runs). */
  mcpServers?: readonly string[];
  /** Its approvals and grants, once it runs (issue 13). */
  gate?: AgentGate;
}

/** Creates an agent that is aborted when `parentSignal` is (its caller's, or the run's). */
export function createAgent(
  fields: Pick<Agent, "id" | "worker" | "spec" | "sandbox" | "depth" | "deadline">,
  parentSignal: AbortSignal | undefined,
): Agent {
  return { ...fields, controller: linkController(parentSignal), waiting: 0, attachedBytes: 0 };
}

/** Picks the earliest of an inherited deadline and budgets starting now. */
export function pickDeadline(
  inherited: Agent["deadline"],
  ...budgets: (number | undefined)[]
): Agent["deadline"] {
  let d = inherited;
  for (const ms of budgets)
    if (ms !== undefined && (d === undefined || Date.now() + ms < d.at))
      d = { at: Date.now() + ms, ms };
  return d;
}

/**
 * Starts the deadline timer of `agent`, if it set its own deadline: the
 * agent that set a deadline keeps the timer; at the deadline its whole
 * subtree fails with reason `timeout`, whatever any of it catches.
 */
export function startDeadlineTimer(
  agent: Agent,
  parent: Agent | undefined,
): NodeJS.Timeout | undefined {
  if (!agent.deadline || agent.deadline === parent?.deadline) return undefined;
  const { at, ms } = agent.deadline;
  return setTimeout(
    () => agent.controller.abort(new DeadlineExceeded(ms)),
    Math.min(Math.max(0, at - Date.now()), MAX_TIMER_MS),
  );
}

/** Creates an AbortController that aborts when `parent` does. */
function linkController(parent: AbortSignal | undefined): AbortController {
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
