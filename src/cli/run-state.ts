/**
 * What `mountbox run`'s live view shows, kept apart from drawing it: the
 * tree of agents (built from the host's events), the approvals waiting for
 * an answer, and the last lines worth seeing. The state changes on every
 * event; listeners hear of it at most once per {@link RunState.intervalMs},
 * however busy the agents are, so the view redraws at most ~10 times a
 * second. Every string in it is already escaped for a terminal.
 */
import type { ApprovalDecision, ApprovalRequest } from "../approvals/approval-types.js";
import { escapeControl } from "../errors/index.js";
import type { HostEvent } from "../host/host-types.js";

/** One agent of the run, as the live view shows it. */
export interface AgentRow {
  id: string;
  worker: string;
  depth: number;
  parentId?: string;
  /** Its sandbox, in short (`/src r`, `/ r*w*`). */
  access: string;
  /** The last thing it did (`read /src/a.ts`, `model step 2`). */
  current: string;
  operations: number;
  denials: number;
  modelSteps: number;
  tokens: number;
  status: "running" | "waiting" | "done" | "failed";
  /** Why it failed (`timeout`, `thrown`, …). */
  reason?: string;
  startedAt: number;
  endedAt?: number;
}

/** An approval the user has not answered yet. */
export interface PendingApproval {
  request: ApprovalRequest;
  /** Answers it (once; later answers are ignored). */
  answer: (decision: ApprovalDecision) => void;
}

/** A line under the tree: a refusal, a failure, a log line, an answer. */
export interface NoteLine {
  kind: "denial" | "failure" | "warning" | "log" | "answer";
  text: string;
}

/**
 * Longest text kept for a line: an agent's megabyte log line would
 * otherwise be measured again at every redraw.
 */
const MAX_LINE = 400;

function cut(text: string): string {
  return text.length > MAX_LINE ? `${text.slice(0, MAX_LINE)}…` : text;
}

/** The last notes kept (older ones scroll away). */
const MAX_NOTES = 6;

/** The state of a run, and a throttled way to hear that it changed. */
export class RunState {
  readonly agents = new Map<string, AgentRow>();
  readonly approvals: PendingApproval[] = [];
  readonly notes: NoteLine[] = [];
  readonly startedAt = Date.now();
  endedAt: number | undefined;
  private readonly listeners = new Set<() => void>();
  private timer: NodeJS.Timeout | undefined;
  private lastEmit = 0;

  /**
   * @param title what the header says (`review · main`)
   * @param accessOf an agent's sandbox in short, from its chain of worker names
   * @param intervalMs the least time between two notices to listeners
   */
  constructor(
    readonly title: string,
    private readonly accessOf: (chain: string[]) => string,
    readonly intervalMs = 100,
  ) {}

  /** Takes one host event into the state. */
  apply(e: HostEvent): void {
    if (e.type === "agent_started") {
      const chain = [...this.chainOf(e.parentId), e.worker];
      this.agents.set(e.agentId, {
        id: e.agentId,
        worker: escapeControl(e.worker),
        depth: e.depth,
        ...(e.parentId === undefined ? {} : { parentId: e.parentId }),
        access: this.accessOf(chain),
        current: "starting",
        operations: 0,
        denials: 0,
        modelSteps: 0,
        tokens: 0,
        status: "running",
        startedAt: e.time,
      });
      const parent = e.parentId === undefined ? undefined : this.agents.get(e.parentId);
      if (parent !== undefined) parent.current = `delegate ${escapeControl(e.worker)}`;
    } else if (e.type === "agent_finished" || e.type === "agent_failed") {
      const a = this.agents.get(e.agentId);
      if (a === undefined) return;
      // What it still waits for, nobody needs to answer (nor see) now.
      for (const p of this.approvals.filter((p) => p.request.agentId === e.agentId))
        p.answer("deny");
      a.status = e.type === "agent_finished" ? "done" : "failed";
      a.endedAt = e.time;
      if (a.current === "starting") a.current = "";
      if (e.type === "agent_failed") {
        a.reason = e.reason;
        this.note("failure", `${a.worker} failed (${e.reason}): ${escapeControl(e.message)}`);
      }
    } else if (e.type === "operation") {
      const a = this.agents.get(e.agentId);
      if (a === undefined) return;
      a.operations++;
      a.current = cut(`${e.op}${e.path === undefined ? "" : ` ${e.path}`}`);
    } else if (e.type === "denial") {
      const a = this.agents.get(e.agentId);
      if (a !== undefined) a.denials++;
      const what = `${e.op}${e.path === undefined ? "" : ` ${e.path}`}`;
      this.note("denial", `${a?.worker ?? e.agentId}: ${what} refused (${e.code})`);
    } else if (e.type === "model_call") {
      const a = this.agents.get(e.agentId);
      if (a === undefined) return;
      a.modelSteps++;
      a.tokens += (e.inputTokens ?? 0) + (e.outputTokens ?? 0);
      a.current = `model step ${a.modelSteps}${e.status === "error" ? " failed" : ""}`;
    } else if (e.type === "log" && e.dropped === undefined) {
      this.note("log", `${escapeControl(e.worker)}: ${escapeControl(e.message)}`);
    } else return;
    this.changed();
  }

  /** Queues an approval request; the promise settles when the user answers. */
  ask(request: ApprovalRequest): Promise<ApprovalDecision> {
    return new Promise((resolve) => {
      let settled = false;
      const entry: PendingApproval = {
        request,
        answer: (decision) => {
          if (settled) return;
          settled = true;
          const i = this.approvals.indexOf(entry);
          if (i >= 0) this.approvals.splice(i, 1);
          this.setWaiting(request.agentId);
          const said =
            decision === "once" ? "once" : decision === "session" ? "for the session" : "denied";
          this.note(
            "answer",
            `${escapeControl(request.worker)}: ${request.operation} ${request.displayPath ?? request.path} — ${said}`,
          );
          resolve(decision);
        },
      };
      this.approvals.push(entry);
      this.setWaiting(request.agentId);
      this.changed();
    });
  }

  /** Shows a process warning (Node's or mountbox's) under the tree instead of across it. */
  warn(message: string): void {
    this.note("warning", escapeControl(message));
    this.changed();
  }

  /** Denies every approval still waiting (the run is over or stopping). */
  denyPending(): void {
    for (const p of [...this.approvals]) p.answer("deny");
  }

  /** Marks the run over (the clock in the header stops). */
  end(): void {
    this.endedAt = Date.now();
    this.changed();
  }

  /** Calls `listener` (throttled) after changes; returns how to stop. */
  subscribe(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Tells listeners now that time passed (the running clocks), throttled like any change. */
  tick(): void {
    this.changed();
  }

  private note(kind: NoteLine["kind"], text: string): void {
    this.notes.push({ kind, text: cut(text) });
    if (this.notes.length > MAX_NOTES) this.notes.shift();
  }

  /** An agent shows "waiting" while one of its approvals is open. */
  private setWaiting(agentId: string): void {
    const a = this.agents.get(agentId);
    if (a === undefined || (a.status !== "running" && a.status !== "waiting")) return;
    a.status = this.approvals.some((p) => p.request.agentId === agentId) ? "waiting" : "running";
  }

  private chainOf(id: string | undefined): string[] {
    const out: string[] = [];
    for (let a = id === undefined ? undefined : this.agents.get(id); a !== undefined; ) {
      out.unshift(a.worker);
      a = a.parentId === undefined ? undefined : this.agents.get(a.parentId);
    }
    return out;
  }

  /** Notifies listeners, at most once per interval (a trailing notice carries the rest). */
  private changed(): void {
    if (this.timer !== undefined) return;
    const wait = this.lastEmit + this.intervalMs - Date.now();
    const emit = () => {
      this.timer = undefined;
      this.lastEmit = Date.now();
      for (const l of this.listeners) l();
    };
    if (wait <= 0) emit();
    else this.timer = setTimeout(emit, wait);
  }

  /** Cancels a pending notice (the view is closing). */
  dispose(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    this.listeners.clear();
  }
}
