/**
 * Approvals and dynamic expansion, decided by the host (issue 13). Every
 * agent gets one {@link AgentGate}; the port server calls it before each
 * sandbox operation, the tool layer before each tool call. The request the
 * approver sees is built here from the operation kind and the normalized
 * virtual path — never from text the worker sent — so a worker cannot put
 * words in front of the approver.
 */
import { ApprovalDeniedError, escapeControl } from "../errors.js";
import { policyOf, type Sandbox } from "../sandbox/sandbox.js";
import { isWithin, parentPath } from "../sandbox/virtual-path.js";
import type { AuditLog } from "./audit-log.js";
import { type GrantAccess, widenSandbox } from "./expansion.js";

/** What an approval is asked for. */
export type ApprovalOperation = "read" | "write" | "delete" | "move" | "shell" | "expand";

/** An approver's answer: this operation, the rest of this agent's run, or no. */
export type ApprovalDecision = "once" | "session" | "deny";

/** What the approver is shown; every string is built by the host. */
export interface ApprovalRequest {
  /** The asking agent (`a1`, `a2`, …). */
  agentId: string;
  /** Its worker's name. */
  worker: string;
  /** Worker names from the top-level agent down to this one. */
  chain: string[];
  operation: ApprovalOperation;
  /**
   * Normalized virtual path (control characters escaped): the file for an
   * operation, the directory for `expand`, `/` for `shell`.
   */
  path: string;
  /** For `expand`: the access asked for. */
  access?: GrantAccess;
  /** The tool, when the call came through the in-process tool layer. */
  tool?: string;
}

/** `createHost({ onApproval })`, `createToolDefinitions(sb, { onApproval })`. */
export type OnApproval = (request: ApprovalRequest) => ApprovalDecision | Promise<ApprovalDecision>;

/** One path an operation touches, and how. */
export interface GateTarget {
  operation: Exclude<ApprovalOperation, "expand">;
  access: GrantAccess;
  /** The path as given (normalized here). */
  path: string;
  /** The directory an expansion asks for: the path itself (a listing) or its parent. */
  dir: "self" | "parent";
}

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
  readonly #session: { operation: string; dir: string }[] = [];

  constructor(opts: GateOptions) {
    this.#o = opts;
    this.chain = opts.chain;
    this.#effective = opts.sandbox;
  }

  /** The agent's sandbox with its session grants (what `describe()` shows). */
  get effective(): Sandbox {
    return this.#effective;
  }

  /**
   * Asks whatever `targets` need and returns the sandbox to run the
   * operation with (the effective one, plus a `once` grant).
   * @throws ApprovalDeniedError when an approver said no, or none could be asked
   */
  async check(targets: readonly GateTarget[], tool?: string): Promise<Sandbox> {
    let sb = this.#effective;
    for (const t of targets) {
      const v = normalizeQuietly(sb, t.path);
      if (v === undefined) continue; // the operation itself reports the bad path
      const allowed = t.access === "read" ? sb.canRead(v) : sb.canWrite(v);
      if (!allowed) {
        const exp = this.#o.expansion;
        const dir = t.dir === "self" ? v : parentPath(v);
        if (!exp || !(t.access === "read" ? exp.bound.canRead(dir) : exp.bound.canWrite(dir)))
          continue; // outside any grant: the operation fails as usual
        const decision = await this.#ask(
          { operation: "expand", path: dir, access: t.access },
          tool,
        );
        if (decision === "deny") throw this.#denied("expand", t.access, dir);
        const widened = (s: Sandbox) => widenSandbox(s, exp.bound, t.access, dir);
        sb = widened(sb);
        if (decision === "session") {
          this.#effective = widened(this.#effective);
          this.#session.push({ operation: t.operation, dir });
        }
        this.#o.onGrant?.({ worker: this.#o.worker, access: t.access, dir });
        this.#audit(
          { type: "grant", op: "expand", path: dir, access: t.access, outcome: decision },
          tool,
        );
        continue; // the grant is the approval for this access
      }
      if (!needsApproval(sb, v, t.access)) continue;
      if (this.#session.some((s) => s.operation === t.operation && isWithin(v, s.dir))) continue;
      const decision = await this.#ask({ operation: t.operation, path: v }, tool);
      if (decision === "deny") throw this.#denied(t.operation, t.access, v);
      if (decision === "session")
        this.#session.push({ operation: t.operation, dir: t.dir === "self" ? v : parentPath(v) });
    }
    return sb;
  }

  /**
   * Writes the audit line of a finished operation. `path` is virtual (the
   * caller normalized it, or left it out); the error contributes its code.
   */
  audit(op: string, path: string | undefined, error: { code: string } | undefined): void {
    this.#o.audit?.write({
      type: "operation",
      agentId: this.#o.agentId,
      chain: this.#o.chain,
      op,
      ...(path === undefined ? {} : { path }),
      outcome: error ? "error" : "ok",
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
    const decision = await this.#ask({ operation: "shell", path: "/" }, tool);
    if (decision === "deny") throw this.#denied("shell", "write", "/");
    if (decision === "session") this.#session.push({ operation: "shell", dir: "/" });
    return sb;
  }

  async #ask(
    what: { operation: ApprovalOperation; path: string; access?: GrantAccess },
    tool?: string,
  ): Promise<ApprovalDecision> {
    const o = this.#o;
    const request: ApprovalRequest = {
      agentId: o.agentId,
      worker: o.worker,
      chain: [...o.chain],
      operation: what.operation,
      path: escapeControl(what.path),
      ...(what.access ? { access: what.access } : {}),
      ...(tool ? { tool } : {}),
    };
    const line = {
      op: what.operation,
      path: what.path,
      ...(what.access ? { access: what.access } : {}),
    };
    this.#audit({ type: "approval_request", ...line, outcome: "asked" }, tool);
    let decision: ApprovalDecision = "deny";
    let code: string | undefined;
    if (o.onApproval) {
      try {
        const d = await o.onApproval(request);
        // Anything but the three answers is a no: fail closed.
        if (d === "once" || d === "session" || d === "deny") decision = d;
        else code = "invalid_decision";
      } catch {
        code = "approver_failed";
      }
    } else code = "no_approver";
    this.#audit(
      { type: "approval_decision", ...line, outcome: decision, ...(code ? { code } : {}) },
      tool,
    );
    if (decision === "deny") this.#noApprover = code === "no_approver";
    return decision;
  }

  /** Set by the last denial: nobody could be asked. */
  #noApprover = false;

  #denied(operation: ApprovalOperation, access: GrantAccess, path: string): ApprovalDeniedError {
    const p = escapeControl(path);
    const what =
      operation === "expand"
        ? `${access} access to '${p}' is outside this agent's sandbox, and widening it`
        : operation === "shell"
          ? "running a shell command here"
          : `${operation === "read" ? "reading" : operation === "write" ? "writing" : operation === "delete" ? "deleting" : "moving"} '${p}'`;
    const message = this.#noApprover
      ? `Access denied: ${what} needs approval, and no approver is configured to give it. Choose a path that needs no approval, or report that you could not do this.`
      : `Access denied: ${what} was not approved. Do not retry the same request; choose another path or report that you could not do this.`;
    const err = new ApprovalDeniedError(message, operation === "shell" ? undefined : p);
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

  #audit(
    e: {
      type: "approval_request" | "approval_decision" | "grant" | "denial";
      op: string;
      path?: string;
      access?: GrantAccess;
      outcome: string;
      code?: string;
    },
    tool?: string,
  ): void {
    this.#o.audit?.write({
      ...e,
      agentId: this.#o.agentId,
      chain: this.#o.chain,
      ...(tool ? { tool } : {}),
    });
  }
}

/** True if the mount of canonical path `v` asks approval for `access`. */
function needsApproval(sb: Sandbox, v: string, access: GrantAccess): boolean {
  const m = policyOf(sb).table.lookup(v);
  return m !== undefined && (access === "read" ? m.readApproval : m.writeApproval);
}

/** The canonical virtual path, or undefined where the operation will fail anyway. */
function normalizeQuietly(sb: Sandbox, path: string): string | undefined {
  try {
    return policyOf(sb).normalize(path) ?? undefined;
  } catch {
    return undefined;
  }
}

const readTarget = (path: unknown, dir: "self" | "parent" = "parent"): GateTarget[] =>
  typeof path === "string" ? [{ operation: "read", access: "read", path, dir }] : [];
const writeTarget = (
  path: unknown,
  operation: "write" | "delete" | "move" = "write",
): GateTarget[] =>
  typeof path === "string" ? [{ operation, access: "write", path, dir: "parent" }] : [];

/**
 * The targets of a port operation (arguments already checked by the port
 * server). Operations that reveal nothing of a file's contents or names
 * (`canRead`, `describe`, …) need no approval.
 */
export function portTargets(op: string, args: readonly unknown[]): GateTarget[] {
  switch (op) {
    case "readFile":
    case "readBytes":
    case "stat":
    case "exists":
      return readTarget(args[0]);
    case "listFiles":
      return readTarget(args[0] ?? "/", "self");
    case "grep": {
      // One options object; its `path` is where the search reads.
      const o = args[0];
      const path = typeof o === "object" && o !== null ? (o as { path?: unknown }).path : undefined;
      return readTarget(path ?? "/", "self");
    }
    case "writeFile":
    case "editFile":
    case "mkdir":
      return writeTarget(args[0]);
    case "remove":
      return writeTarget(args[0], "delete");
    case "move":
      return [...writeTarget(args[0], "move"), ...writeTarget(args[1], "move")];
    default:
      return [];
  }
}

/**
 * The targets of an in-process tool call, from its (already parsed) input.
 * The tool name comes from the tool layer, never from the model.
 */
export function toolTargets(tool: string, input: Record<string, unknown>): GateTarget[] {
  switch (tool) {
    case "read_file":
    case "get_file_info":
      return readTarget(input.path);
    case "read_multiple_files":
      return Array.isArray(input.paths) ? input.paths.flatMap((p) => readTarget(p)) : [];
    case "list_files":
    case "grep":
      return readTarget(input.path ?? "/", "self");
    case "write_file":
    case "edit_file":
    case "create_directory":
      return writeTarget(input.path);
    case "delete_file":
      return writeTarget(input.path, "delete");
    case "move_file":
      return [...writeTarget(input.source, "move"), ...writeTarget(input.destination, "move")];
    default:
      return [];
  }
}
