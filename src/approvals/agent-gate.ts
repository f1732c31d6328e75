/**
 * Approvals and dynamic expansion, decided by the host (issue 13). Every
 * agent gets one {@link AgentGate}; the port server calls it before each
 * sandbox operation, the tool layer before each tool call. The gate asks
 * with the normalized virtual path (see approver-queue.ts for the request
 * the approver sees), keeps the agent's session decisions, and widens its
 * sandbox by the expansions granted.
 */
import { ApprovalDeniedError, escapeControl, SandboxError } from "../errors/index.js";
import { type AuditLog, REFUSAL_CODES } from "../host/audit-log.js";
import { policyOf, type Sandbox } from "../sandbox/sandbox.js";
import { isWithin, parentPath } from "../sandbox/virtual-path.js";
import {
  anyFlag,
  needsApproval,
  normalizeQuietly,
  readsOnlyUnder,
  realLocation,
} from "./approval-paths.js";
import type { ApprovalOperation, OnApproval } from "./approval-types.js";
import { ApproverQueue, type GateAuditLine } from "./approver-queue.js";
import { type GrantAccess, widenSandbox } from "./expansion.js";
import type { GateTarget } from "./gate-targets.js";
import {
  noApprovals,
  type OperationApprovals,
  RunSandboxes,
  type SessionDecision,
} from "./run-sandbox.js";

/** Dynamic expansion of one agent: on, and never beyond `bound`. */
export interface GateExpansion {
  bound: Sandbox;
}

/** One granted expansion, for `host.suggestedSandboxes()`. */
export interface GrantRecord {
  worker: string;
  access: GrantAccess;
  dir: string;
}

/** What one agent's gate needs. */
export interface GateOptions {
  agentId: string;
  worker: string;
  chain: string[];
  /** The agent's own sandbox; grants are added to a copy, never to it. */
  sandbox: Sandbox;
  onApproval: OnApproval | undefined;
  expansion: GateExpansion | undefined;
  audit: AuditLog | undefined;
  /** Called with every grant (once or session). */
  onGrant?: (grant: GrantRecord) => void;
  /**
   * The agent's signal: a question pending when it aborts is given up (its
   * decision line says `aborted`), and none is asked after.
   */
  signal?: AbortSignal;
  /**
   * A search whose folder has flagged areas outside it (reachable only
   * through links): `restrict` (default) runs it on a sandbox that reads
   * only under the folder; `ask` asks read for each such area instead (the
   * in-process tools, which run on the sandbox they were made with).
   */
  linksOut?: "restrict" | "ask";
  /**
   * What a refusal says after "… needs approval, " when no approver could
   * be asked: how this agent's user can allow it (the MCP server names its
   * `--approve` flag). Default: no approver is configured.
   */
  noApproverText?: (operation: ApprovalOperation) => string;
}

/**
 * The approvals of one agent's run: its session decisions and grants. Never
 * shared with callees (each agent has its own gate).
 */
export class AgentGate {
  /** Worker names from the top-level agent down to this one. */
  readonly chain: string[];
  readonly #o: GateOptions;
  /** The agent's sandbox plus its session grants. */
  #effective: Sandbox;
  /** Session approvals: `operation` under `dir`. */
  readonly #session: SessionDecision[] = [];
  /** The confined sandboxes operations run on, cached per approval state. */
  readonly #runs = new RunSandboxes();
  /** This agent's line to the approver. */
  readonly #approver: ApproverQueue;
  /** Refusals whose `denial` line this gate wrote (the operation's report adds none). */
  readonly #denials = new WeakSet<object>();

  constructor(opts: GateOptions) {
    this.#o = opts;
    this.chain = opts.chain;
    this.#effective = opts.sandbox;
    this.#approver = new ApproverQueue(opts, (e, tool) => this.#audit(e, tool));
  }

  /** The agent's sandbox with its session grants (what `describe()` shows). */
  get effective(): Sandbox {
    return this.#effective;
  }

  /**
   * Asks whatever `targets` need and returns the sandbox to run the
   * operation with: the effective one plus a `once` grant, confined in the
   * mounts that ask approval to what this operation was approved for (a
   * link swapped after this check leads nowhere else: see run-sandbox.ts).
   * @throws ApprovalDeniedError when an approver said no, or none could be asked
   */
  async check(targets: readonly GateTarget[], tool?: string): Promise<Sandbox> {
    let sb = this.#effective;
    let treeRoots: string[] | undefined;
    const approved = noApprovals();
    for (const t of targets) approved.kinds[t.access].add(t.operation);
    for (const t of targets) {
      const v = normalizeQuietly(sb, t.path);
      if (v === undefined) continue; // the operation itself reports the bad path
      const allowed = t.access === "read" ? sb.canRead(v) : sb.canWrite(v);
      if (!allowed) {
        // A secret stays withheld whatever is granted: no one is asked.
        if (policyOf(sb).secrets.covers(v)) continue;
        const exp = this.#o.expansion;
        const dir = t.dir === "self" ? v : parentPath(v);
        if (!exp || !(t.access === "read" ? exp.bound.canRead(dir) : exp.bound.canWrite(dir)))
          continue; // outside any grant: the operation fails as usual
        const decision = await this.#approver.ask(
          { operation: "expand", path: dir, access: t.access },
          tool,
        );
        if (decision === "deny") throw this.#denied("expand", t.access, dir);
        const widened = (s: Sandbox) => widenSandbox(s, exp.bound, t.access, dir);
        sb = widened(sb);
        if (decision === "session") {
          this.#effective = widened(this.#effective);
          this.#session.push({ operation: t.operation, dir });
        } else approved.once.push({ access: t.access, path: dir });
        this.#o.onGrant?.({ worker: this.#o.worker, access: t.access, dir });
        this.#audit(
          { type: "grant", op: "expand", path: dir, access: t.access, outcome: decision },
          tool,
        );
        continue; // the grant is the approval for this access
      }
      // Where the path really leads (a link may lead into a flagged mount);
      // a listing or search through a folder link reads the folder it leads to.
      const real = anyFlag(sb, t.access) ? realLocation(sb, v, t.access) : undefined;
      await this.#approve(sb, t, v, real, tool, approved);
      if (t.tree !== undefined && t.access === "read") {
        const p = policyOf(sb);
        // The tree is the folder as typed and where it really is.
        const roots = real !== undefined && real !== v ? [v, real] : [v];
        const under = (m: { target: string }) => roots.some((r) => isWithin(m.target, r));
        // Each flagged mount below the searched folder is asked for by name.
        for (const m of p.table.mounts) {
          if (!m.readApproval || roots.includes(m.target) || !under(m)) continue;
          if (!p.reachesBelow(m.target, "read")) continue;
          await this.#approve(sb, { ...t, path: m.target }, m.target, undefined, tool, approved);
        }
        // A flagged area outside it is reachable only through a link, which
        // a search would read (a listing shows only the link's own name):
        // the search does not follow links out of the folder then, or asks.
        const outside =
          t.tree === "search"
            ? p.table.mounts.filter(
                (m) => m.readApproval && !under(m) && p.reachesBelow(m.target, "read"),
              )
            : [];
        if (this.#o.linksOut !== "ask") {
          if (outside.length > 0) treeRoots = roots;
        } else
          for (const m of outside)
            await this.#approve(sb, { ...t, path: m.target }, m.target, undefined, tool, approved);
      }
    }
    const run = this.#runs.confine(sb, this.#effective, this.#session, approved);
    return treeRoots === undefined ? run : readsOnlyUnder(run, treeRoots);
  }

  /**
   * Asks `t.operation` on `v` (and, when a link leads elsewhere, on its real
   * location `real`) unless neither needs approval or this agent's session
   * decisions cover each one that does. What a `once` answer approves is
   * added to `approved` (the operation runs confined to it).
   * @throws ApprovalDeniedError
   */
  async #approve(
    sb: Sandbox,
    t: GateTarget,
    v: string,
    real: string | undefined,
    tool: string | undefined,
    approved: OperationApprovals,
  ): Promise<void> {
    const { operation, access } = t;
    const moved = real !== undefined && real !== v;
    const flagged = (moved ? [v, real] : [v]).filter((l) => needsApproval(sb, l, access));
    const covered = () => flagged.every((l) => this.#covered(sb, operation, l));
    if (flagged.length === 0 || covered()) return;
    const decision = await this.#approver.ask(
      {
        operation,
        path: v,
        ...(moved ? { real } : {}),
        // A listing's or search's `session` covers reading every file below.
        ...(t.tree ? { via: t.tree } : {}),
      },
      tool,
      covered,
    );
    const shown = moved ? `${v} (\u2192 ${real})` : v;
    if (decision === "deny") throw this.#denied(operation, access, shown, v);
    // A session covers the file's folder, or the listed folder itself (as
    // typed and where it really is).
    if (decision === "session")
      for (const l of flagged)
        this.#session.push({ operation, dir: t.dir === "self" ? l : parentPath(l) });
    else for (const l of flagged) approved.once.push({ access, path: l });
  }

  /**
   * True if a session decision for `operation` covers `v`: under its
   * directory and in the same mount (a nested mount asks on its own).
   */
  #covered(sb: Sandbox, operation: string, v: string): boolean {
    const table = policyOf(sb).table;
    const m = table.lookup(v);
    return this.#session.some(
      (s) => s.operation === operation && isWithin(v, s.dir) && table.lookup(s.dir) === m,
    );
  }

  /**
   * Writes the audit line of a finished operation — after a `denial` line
   * when `error` is the refusal itself (a SandboxError with a refusal code;
   * a plain `{ code }` only reports the outcome), unless this gate's
   * approver refused it and wrote that line already. `path` is virtual (the
   * caller normalized it, or left it out).
   */
  audit(
    op: string,
    path: string | undefined,
    error: { code: string } | undefined,
    /** It did not complete because the agent stopped (outcome `aborted`). */
    aborted = false,
    /** The worker a `delegate` called. */
    callee?: string,
  ): void {
    const log = this.#o.audit;
    if (!log) return;
    const common = {
      agentId: this.#o.agentId,
      chain: this.#o.chain,
      op,
      ...(callee === undefined ? {} : { callee }),
      ...(path === undefined ? {} : { path }),
    };
    if (
      error instanceof SandboxError &&
      !aborted &&
      REFUSAL_CODES.has(error.code) &&
      !this.#denials.has(error)
    )
      log.write({ type: "denial", ...common, outcome: "denied", code: error.code });
    log.write({
      type: "operation",
      ...common,
      outcome: aborted ? "aborted" : error ? "error" : "ok",
      ...(error ? { code: error.code } : {}),
    });
  }

  /**
   * Approval for a shell command: asked when any area the agent can reach
   * needs approval (a command may read or write anywhere it can).
   */
  async checkShell(tool?: string): Promise<Sandbox> {
    const sb = this.#effective;
    const p = policyOf(sb);
    const flagged = p.table.mounts.some(
      (m) =>
        (m.readApproval && p.reachesBelow(m.target, "read")) ||
        (m.writeApproval && p.reachesBelow(m.target, "write")),
    );
    if (!flagged || this.#session.some((s) => s.operation === "shell")) return sb;
    const decision = await this.#approver.ask({ operation: "shell", path: "/" }, tool);
    if (decision === "deny") throw this.#denied("shell", "write", "/");
    if (decision === "session") this.#session.push({ operation: "shell", dir: "/" });
    return sb;
  }

  /**
   * Approval for a call of an MCP tool whose server asks it (`approval:
   * always`): asked unless a `session` answer covers this server's tool.
   * @throws ApprovalDeniedError
   */
  async checkMcp(server: string, tool: string, args: unknown): Promise<void> {
    const path = `mcp:${server}/${tool}`;
    const covered = () => this.#session.some((s) => s.operation === "mcp" && s.dir === path);
    if (covered()) return;
    // Each call asked on its own (a `once` answers one call, with its
    // arguments shown), unless a session answer covers it by its turn.
    const decision = await this.#approver.ask(
      { operation: "mcp", path, mcp: { server, tool, arguments: previewArguments(args) } },
      undefined,
      covered,
    );
    if (decision === "deny") throw this.#denied("mcp", "write", path);
    if (decision === "session") this.#session.push({ operation: "mcp", dir: path });
  }

  #denied(
    operation: ApprovalOperation,
    access: GrantAccess,
    path: string,
    /** The path the error names, when `path` says more (where a link leads). */
    errorPath = path,
  ): ApprovalDeniedError {
    const p = escapeControl(path);
    const what =
      operation === "expand"
        ? `${access} access to '${p}' is outside this agent's sandbox, and widening it`
        : operation === "shell"
          ? "running a shell command here"
          : operation === "mcp"
            ? `calling the MCP tool '${p}'`
            : `${operation === "read" ? "reading" : operation === "write" ? "writing" : operation === "delete" ? "deleting" : "moving"} '${p}'`;
    const message = this.#approver.noApprover
      ? `Access denied: ${what} needs approval, ${this.#o.noApproverText?.(operation) ?? "and no approver is configured to give it. Choose a path that needs no approval, or report that you could not do this."}`
      : `Access denied: ${what} was not approved. Do not retry the same request; choose another path or report that you could not do this.`;
    const err = new ApprovalDeniedError(
      message,
      operation === "shell" || operation === "mcp" ? undefined : escapeControl(errorPath),
    );
    this.#denials.add(err);
    this.#audit({
      type: "denial",
      op: operation,
      ...(operation === "shell" ? {} : { path }),
      ...(operation === "expand" ? { access } : {}),
      outcome: "denied",
      code: err.code,
    });
    return err;
  }

  #audit(e: GateAuditLine, tool?: string): void {
    this.#o.audit?.write({
      ...e,
      agentId: this.#o.agentId,
      chain: this.#o.chain,
      ...(tool ? { tool } : {}),
    });
  }
}

/** Longest preview of an MCP call's arguments an approver is shown. */
const MAX_ARGUMENTS_PREVIEW = 500;

/** An MCP call's arguments as compact JSON, cut, every control character escaped. */
function previewArguments(args: unknown): string {
  let text: string;
  try {
    text = JSON.stringify(args) ?? "null";
  } catch {
    text = "(not JSON)";
  }
  return escapeControl(
    text.length > MAX_ARGUMENTS_PREVIEW ? `${text.slice(0, MAX_ARGUMENTS_PREVIEW)}…` : text,
  );
}
