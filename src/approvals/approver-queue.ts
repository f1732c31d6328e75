/**
 * Asking one agent's approver (issue 13). The request the approver sees is
 * built here from the operation kind and the normalized virtual path —
 * never from text the worker sent — so a worker cannot put words in front
 * of the approver.
 */
import { escapeControl, ioError, SHOWN_CHARS, shortenMiddle } from "../errors/index.js";
import type {
  ApprovalDecision,
  ApprovalOperation,
  ApprovalRequest,
  OnApproval,
} from "./approval-types.js";
import type { GrantAccess } from "./expansion.js";

/** What is asked: an operation on a path (for `expand`, the access asked for). */
export interface ApprovalQuestion {
  operation: ApprovalOperation;
  /** The normalized virtual path, as typed. */
  path: string;
  /** Where a link at `path` really leads, when elsewhere. */
  real?: string;
  access?: GrantAccess;
  /** The read is a listing or a search of the folder `path`. */
  via?: "list" | "search";
  /** For `mcp`: the server, the tool and (escaped, cut) the call's arguments. */
  mcp?: { server: string; tool: string; arguments: string };
}

/** `path (→ real)`, each part passed through `f`. */
function showPath(what: ApprovalQuestion, f: (s: string) => string): string {
  return what.real === undefined ? f(what.path) : `${f(what.path)} (\u2192 ${f(what.real)})`;
}

/** An audit line of an agent's approvals (the gate adds agent, chain and tool). */
export interface GateAuditLine {
  type: "approval_request" | "approval_decision" | "grant" | "denial";
  op: string;
  path?: string;
  access?: GrantAccess;
  outcome: string;
  code?: string;
}

/** Who asks, as the approver sees it, and whom to ask. */
export interface ApproverQueueOptions {
  agentId: string;
  worker: string;
  chain: string[];
  onApproval: OnApproval | undefined;
  /**
   * The agent's signal. A question pending when it aborts is given up at
   * once (its decision line says `aborted`, written before the abort
   * returns); none is asked after. The approver's late answer is ignored.
   */
  signal?: AbortSignal;
}

/** How a question ended: answered, the approver threw, or the agent stopped first. */
type Answer = { kind: "answer"; value: unknown } | { kind: "failed" } | { kind: "stopped" };

/**
 * Asks (`ask` is called now) and resolves with the answer — or, if `signal`
 * aborts first, calls `onStop` (synchronously, inside the abort) and
 * resolves with `stopped`. Exactly one of the two.
 */
function answerOrStop(
  ask: () => unknown,
  signal: AbortSignal | undefined,
  onStop: () => void,
): Promise<Answer> {
  return new Promise((resolve) => {
    let done = false;
    const end = (a: Answer): boolean => {
      if (done) return false;
      done = true;
      signal?.removeEventListener("abort", onAbort);
      resolve(a);
      return true;
    };
    const onAbort = (): void => {
      if (end({ kind: "stopped" })) onStop();
    };
    signal?.addEventListener("abort", onAbort, { once: true });
    let answer: unknown;
    try {
      answer = ask();
    } catch {
      end({ kind: "failed" });
      return;
    }
    Promise.resolve(answer).then(
      (value) => end({ kind: "answer", value }),
      () => end({ kind: "failed" }),
    );
  });
}

/**
 * One agent's line to the approver: one request of the agent before the
 * approver at a time, each asked request and its decision audited.
 */
export class ApproverQueue {
  readonly #o: ApproverQueueOptions;
  readonly #audit: (e: GateAuditLine, tool?: string) => void;
  /** Requests of this agent waiting for an answer, by what they ask. */
  readonly #pending = new Map<string, Promise<ApprovalDecision>>();
  /** The last request in line: one request of an agent before the approver at a time. */
  #queue: Promise<unknown> = Promise.resolve();
  /** Set by the last denial: nobody could be asked. */
  #noApprover = false;
  /** Questions asked so far (an MCP call's own key). */
  #asked = 0;

  constructor(opts: ApproverQueueOptions, audit: (e: GateAuditLine, tool?: string) => void) {
    this.#o = opts;
    this.#audit = audit;
  }

  /** True if the last denial came because no approver is configured. */
  get noApprover(): boolean {
    return this.#noApprover;
  }

  /**
   * Asks the approver, one request of this agent at a time (the rest wait
   * in line); an identical request already pending shares its answer.
   * `covered`, checked when the request's turn comes, skips asking when a
   * session decision given meanwhile covers it.
   */
  ask(what: ApprovalQuestion, tool?: string, covered?: () => boolean): Promise<ApprovalDecision> {
    // An MCP call is asked on its own: its arguments differ, and a `once`
    // answer shared by calls waiting for the same tool let one answer run
    // them all (found by a review).
    const key =
      what.operation === "mcp"
        ? `mcp\0${++this.#asked}`
        : `${what.operation}\0${what.access ?? ""}\0${what.via ?? ""}\0${showPath(what, (p) => p)}`;
    const shared = this.#pending.get(key);
    if (shared) return shared;
    const turn = this.#queue.then(() =>
      covered?.() ? ("once" as const) : this.#askNow(what, tool),
    );
    this.#queue = turn.catch(() => undefined);
    this.#pending.set(key, turn);
    const done = () => {
      this.#pending.delete(key);
    };
    turn.then(done, done);
    return turn;
  }

  async #askNow(what: ApprovalQuestion, tool?: string): Promise<ApprovalDecision> {
    const o = this.#o;
    // Its agent is gone: nobody is asked, and nothing is done.
    if (o.signal?.aborted) throw stopped(what);
    // Every string escaped (issue 18): what the approver reads is what is there.
    const long = what.path.length > SHOWN_CHARS || (what.real?.length ?? 0) > SHOWN_CHARS;
    const request: ApprovalRequest = {
      agentId: o.agentId,
      worker: o.worker,
      chain: o.chain.map((w) => escapeControl(w)),
      operation: what.operation,
      path: showPath(what, escapeControl),
      ...(long ? { displayPath: showPath(what, (p) => escapeControl(shortenMiddle(p))) } : {}),
      ...(what.access ? { access: what.access } : {}),
      ...(what.via ? { via: what.via } : {}),
      ...(what.mcp
        ? {
            mcp: {
              server: escapeControl(what.mcp.server),
              tool: escapeControl(what.mcp.tool),
              arguments: what.mcp.arguments,
            },
          }
        : {}),
      ...(tool ? { tool } : {}),
    };
    // The audit log escapes the path itself.
    const line = {
      op: what.operation,
      path: showPath(what, (p) => p),
      ...(what.access ? { access: what.access } : {}),
    };
    this.#audit({ type: "approval_request", ...line, outcome: "asked" }, tool);
    let decision: ApprovalDecision = "deny";
    let code: string | undefined;
    if (o.onApproval) {
      const onApproval = o.onApproval;
      const a = await answerOrStop(
        () => onApproval(request),
        o.signal,
        () => this.#audit({ type: "approval_decision", ...line, outcome: "aborted" }, tool),
      );
      if (a.kind === "stopped") throw stopped(what);
      const d = a.kind === "answer" ? a.value : undefined;
      // Anything but the three answers is a no: fail closed.
      if (d === "once" || d === "session" || d === "deny") decision = d;
      else code = a.kind === "failed" ? "approver_failed" : "invalid_decision";
    } else code = "no_approver";
    this.#audit(
      { type: "approval_decision", ...line, outcome: decision, ...(code ? { code } : {}) },
      tool,
    );
    if (decision === "deny") this.#noApprover = code === "no_approver";
    return decision;
  }
}

/** The error of a question given up because its agent stopped. */
function stopped(what: ApprovalQuestion) {
  return ioError(
    "approval",
    what.operation === "shell" || what.operation === "mcp" ? undefined : what.path,
    "the agent stopped while its approval was pending; nothing was done",
  );
}
