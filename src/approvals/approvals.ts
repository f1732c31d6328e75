/**
 * Approvals and dynamic expansion, decided by the host (issue 13). Every
 * agent gets one {@link AgentGate}; the port server calls it before each
 * sandbox operation, the tool layer before each tool call. The request the
 * approver sees is built here from the operation kind and the normalized
 * virtual path — never from text the worker sent — so a worker cannot put
 * words in front of the approver.
 */
import { ApprovalDeniedError, escapeControl } from "../errors/index.js";
import type { AuditLog } from "../host/audit-log.js";
import { intersect } from "../sandbox/areas.js";
import { Policy } from "../sandbox/policy.js";
import { policyOf, Sandbox } from "../sandbox/sandbox.js";
import { isWithin, parentPath } from "../sandbox/virtual-path.js";
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
  /**
   * A listing or search of the tree under `path` (listFiles, grep): each
   * mount with `read_approval` below it is asked for too. A search reads
   * files through links, so it does not follow links out of the folder
   * while a flagged area lies outside it (a listing shows only the link's
   * own name, in the folder).
   */
  tree?: "list" | "search";
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
  /**
   * A search whose folder has flagged areas outside it (reachable only
   * through links): `restrict` (default) runs it on a sandbox that reads
   * only under the folder; `ask` asks read for each such area instead (the
   * in-process tools, which run on the sandbox they were made with).
   */
  linksOut?: "restrict" | "ask";
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
    let treeRoot: string | undefined;
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
      // Where the path really leads (a link may lead into a flagged mount).
      const real = t.tree || !anyFlag(sb, t.access) ? undefined : realLocation(sb, v, t.access);
      await this.#approve(sb, t.operation, t.access, v, real, t.dir, tool);
      if (t.tree !== undefined && t.access === "read") {
        const p = policyOf(sb);
        // Each flagged mount below the searched folder is asked for by name.
        for (const m of p.table.mounts) {
          if (!m.readApproval || m.target === v || !isWithin(m.target, v)) continue;
          if (!p.reachesBelow(m.target, "read")) continue;
          await this.#approve(sb, "read", "read", m.target, undefined, "self", tool);
        }
        // A flagged area outside it is reachable only through a link, which
        // a search would read (a listing shows only the link's own name):
        // the search does not follow links out of the folder then, or asks.
        const outside =
          t.tree === "search"
            ? p.table.mounts.filter(
                (m) => m.readApproval && !isWithin(m.target, v) && p.reachesBelow(m.target, "read"),
              )
            : [];
        if (this.#o.linksOut !== "ask") {
          if (outside.length > 0) treeRoot = v;
        } else
          for (const m of outside)
            await this.#approve(sb, "read", "read", m.target, undefined, "self", tool);
      }
    }
    return treeRoot === undefined ? sb : readsOnlyUnder(sb, treeRoot);
  }

  /**
   * Asks `operation` on `v` (and, when a link leads elsewhere, on its real
   * location `real`) unless neither needs approval or this agent's session
   * decisions cover each one that does.
   * @throws ApprovalDeniedError
   */
  async #approve(
    sb: Sandbox,
    operation: GateTarget["operation"],
    access: GrantAccess,
    v: string,
    real: string | undefined,
    dir: "self" | "parent",
    tool: string | undefined,
  ): Promise<void> {
    const moved = real !== undefined && real !== v;
    const flagged = (moved ? [v, real] : [v]).filter((l) => needsApproval(sb, l, access));
    const covered = () => flagged.every((l) => this.#covered(sb, operation, l));
    if (flagged.length === 0 || covered()) return;
    const shown = moved ? `${v} (\u2192 ${real})` : v;
    const decision = await this.#ask({ operation, path: shown }, tool, covered);
    if (decision === "deny") throw this.#denied(operation, access, shown, v);
    if (decision === "session")
      for (const l of flagged)
        this.#session.push({ operation, dir: dir === "self" && l === v ? v : parentPath(l) });
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

  /** Requests of this agent waiting for an answer, by what they ask. */
  readonly #pending = new Map<string, Promise<ApprovalDecision>>();
  /** The last request in line: one request of an agent before the approver at a time. */
  #queue: Promise<unknown> = Promise.resolve();

  /**
   * Asks the approver, one request of this agent at a time (the rest wait
   * in line); an identical request already pending shares its answer.
   * `covered`, checked when the request's turn comes, skips asking when a
   * session decision given meanwhile covers it.
   */
  #ask(
    what: { operation: ApprovalOperation; path: string; access?: GrantAccess },
    tool?: string,
    covered?: () => boolean,
  ): Promise<ApprovalDecision> {
    const key = `${what.operation}\0${what.access ?? ""}\0${what.path}`;
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

  async #askNow(
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
          : `${operation === "read" ? "reading" : operation === "write" ? "writing" : operation === "delete" ? "deleting" : "moving"} '${p}'`;
    const message = this.#noApprover
      ? `Access denied: ${what} needs approval, and no approver is configured to give it. Choose a path that needs no approval, or report that you could not do this.`
      : `Access denied: ${what} was not approved. Do not retry the same request; choose another path or report that you could not do this.`;
    const err = new ApprovalDeniedError(
      message,
      operation === "shell" ? undefined : escapeControl(errorPath),
    );
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

/** True if any mount asks approval for `access` (else no path can need it). */
function anyFlag(sb: Sandbox, access: GrantAccess): boolean {
  return policyOf(sb).table.mounts.some((m) =>
    access === "read" ? m.readApproval : m.writeApproval,
  );
}

/**
 * The virtual location `v` really leads to (through links), or undefined
 * when it cannot be resolved (the operation reports why).
 */
function realLocation(sb: Sandbox, v: string, access: GrantAccess): string | undefined {
  try {
    const p = policyOf(sb);
    return p.table.mapBack(p.resolveVirtual(v, access, false).real);
  } catch {
    return undefined;
  }
}

/** `sb` with reads cut to the tree under `v` (writes unchanged). */
function readsOnlyUnder(sb: Sandbox, v: string): Sandbox {
  const p = policyOf(sb);
  return new Sandbox(new Policy(p.table, intersect(p.read, [{ path: v, exact: false }]), p.write));
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
/** A listing or search of the tree under `path`. */
const treeTarget = (path: unknown, tree: "list" | "search"): GateTarget[] =>
  typeof path === "string" ? [{ operation: "read", access: "read", path, dir: "self", tree }] : [];
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
      return treeTarget(args[0] ?? "/", "list");
    case "grep": {
      // One options object; its `path` is where the search reads.
      const o = args[0];
      const path = typeof o === "object" && o !== null ? (o as { path?: unknown }).path : undefined;
      return treeTarget(path ?? "/", "search");
    }
    // Write first: a write grant also lets the agent read there.
    case "editFile":
      return [...writeTarget(args[0]), ...readTarget(args[0])];
    case "writeFile":
    case "mkdir":
      return writeTarget(args[0]);
    case "remove":
      return writeTarget(args[0], "delete");
    case "move":
      // Moving a file out reads it: the source asks read too.
      return [
        ...writeTarget(args[0], "move"),
        ...writeTarget(args[1], "move"),
        ...readTarget(args[0]),
      ];
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
      return treeTarget(input.path ?? "/", "list");
    case "grep":
      return treeTarget(input.path ?? "/", "search");
    case "edit_file":
      return [...writeTarget(input.path), ...readTarget(input.path)];
    case "write_file":
    case "create_directory":
      return writeTarget(input.path);
    case "delete_file":
      return writeTarget(input.path, "delete");
    case "move_file":
      return [
        ...writeTarget(input.source, "move"),
        ...writeTarget(input.destination, "move"),
        ...readTarget(input.source),
      ];
    default:
      return [];
  }
}
