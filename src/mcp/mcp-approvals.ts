/**
 * Approvals in `mountbox mcp` (issue 23): a sandbox whose mounts set
 * `read_approval` / `write_approval`, or whose program turns on dynamic
 * expansion, is served through the host's own {@link AgentGate} — one per
 * MCP session, so a `session` answer lasts until that client disconnects
 * and covers what it covers for an agent. Who answers is `--approve`:
 * `ask` (default) asks the user through MCP elicitation when the client
 * supports it, and otherwise refuses with a message saying how to allow it;
 * `all` approves everything; `none` refuses everything. The question the
 * user reads is built here from the operation, the tool and the normalized,
 * escaped virtual path — never from text the client sent.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { RequestId } from "@modelcontextprotocol/sdk/types.js";
import { AgentGate } from "../approvals/agent-gate.js";
import type {
  ApprovalDecision,
  ApprovalOperation,
  ApprovalRequest,
  OnApproval,
} from "../approvals/approval-types.js";
import { type GateTarget, toolTargets } from "../approvals/gate-targets.js";
import { ioError } from "../errors/index.js";
import type { AuditLog } from "../host/audit-log.js";
import { policyOf, type Sandbox } from "../sandbox/sandbox.js";
import { errorResult } from "./mcp-format.js";

/** The values of `--approve`. */
export const MCP_APPROVE_POLICIES = ["ask", "all", "none"] as const;

/** Who answers approvals: the user through elicitation, always yes, always no. */
export type McpApprovePolicy = (typeof MCP_APPROVE_POLICIES)[number];

/** How one served sandbox is approved. */
export interface McpApprovalOptions {
  policy: McpApprovePolicy;
  /** The worker whose sandbox is served (audit lines' `chain`). */
  worker: string;
  /** Dynamic expansion's ceiling, when the program turns expansion on. */
  ceiling?: Sandbox | undefined;
  /** Where approval requests, decisions, grants and denials are written. */
  audit?: AuditLog | undefined;
}

/** How long a user has to answer one question; then it is a denial. */
const ELICIT_TIMEOUT_MS = 10 * 60_000;

/** The form the client shows: one choice. */
const DECISION_SCHEMA = {
  type: "object" as const,
  properties: {
    decision: {
      type: "string" as const,
      title: "Decision",
      oneOf: [
        { const: "once", title: "Allow once" },
        { const: "session", title: "Allow for this session" },
        { const: "deny", title: "Deny" },
      ],
    },
  },
  required: ["decision"],
};

/** The MCP tools whose paths are those of a tool layer tool (same targets). */
const SAME_TARGETS = new Map([
  ["read_text_file", "read_file"],
  ["read_media_file", "read_file"],
  ["directory_tree", "list_files"],
  ["search_files", "grep"],
]);

/** The paths an MCP tool call touches, and how (its arguments already validated). */
export function listMcpTargets(tool: string, args: Record<string, unknown>): GateTarget[] {
  // One level of a folder shows names in that folder only (a mount below
  // shows as its own name): reading the folder itself is what is asked.
  if (
    (tool === "list_directory" || tool === "list_directory_with_sizes") &&
    typeof args.path === "string"
  )
    return [{ operation: "read", access: "read", path: args.path, dir: "self" }];
  return toolTargets(SAME_TARGETS.get(tool) ?? tool, args);
}

/** True if serving `sandbox` needs a gate: a mount asks approval, or expansion is on. */
export function needsGate(sandbox: Sandbox, opts: McpApprovalOptions): boolean {
  return (
    opts.ceiling !== undefined ||
    policyOf(sandbox).table.mounts.some((m) => m.readApproval || m.writeApproval)
  );
}

/**
 * True if an initialize request declares elicitation: over HTTP such a
 * session answers with event streams, on which a tool call's question can
 * travel before its result.
 */
export function declaresElicitation(initialize: unknown): boolean {
  const caps = (initialize as { params?: { capabilities?: { elicitation?: unknown } } })?.params
    ?.capabilities;
  return typeof caps?.elicitation === "object" && caps.elicitation !== null;
}

/** The request being served, as the SDK hands it to a tool or resource. */
export interface McpRequestExtra {
  requestId: RequestId;
  /** Aborted when the client cancels the request. */
  signal: AbortSignal;
}

/** What one request being served has: its own (a question is sent with it) and its sandbox. */
interface CallContext {
  extra: McpRequestExtra;
  /** The sandbox the call runs on, confined to what was approved for it. */
  sandbox?: Sandbox;
}

/** Sessions so far in this process (each gate's agent id). */
let sessions = 0;

/** One MCP session's approvals over a fixed sandbox. */
export class McpApprovals {
  readonly #server: McpServer;
  readonly #sandbox: Sandbox;
  readonly #o: McpApprovalOptions;
  readonly #calls = new AsyncLocalStorage<CallContext>();
  readonly #id = `mcp${++sessions}`;
  /** Made at the first call: the client's capabilities are known by then. */
  #gate: AgentGate | undefined;

  constructor(server: McpServer, sandbox: Sandbox, opts: McpApprovalOptions) {
    this.#server = server;
    this.#sandbox = sandbox;
    this.#o = opts;
  }

  /**
   * The sandbox the running call may use: confined to what was approved
   * for it; outside a gated call, the session's (its grants included).
   */
  readonly current = (): Sandbox =>
    this.#calls.getStore()?.sandbox ?? this.#gate?.effective ?? this.#sandbox;

  /**
   * Makes every tool registered on the server from now on ask what its
   * call needs first; a refusal is the call's `isError` result.
   */
  gateTools(): void {
    const server = this.#server;
    const register = server.registerTool.bind(server) as (...a: unknown[]) => unknown;
    (server as { registerTool: unknown }).registerTool = (
      name: string,
      config: unknown,
      cb: (args: Record<string, unknown>, extra: McpRequestExtra) => unknown,
    ) =>
      register(name, config, async (args: Record<string, unknown>, extra: McpRequestExtra) => {
        const targets = listMcpTargets(name, args ?? {});
        if (targets.length === 0) return cb(args, extra);
        try {
          return await this.run(targets, name, extra, () => cb(args, extra));
        } catch (err) {
          const path = args?.path ?? args?.source;
          return errorResult(name, typeof path === "string" ? path : undefined, err);
        }
      });
  }

  /**
   * Asks what `targets` need (as `tool`, for the request `extra`), then
   * runs `body` with {@link current} giving the approved sandbox — unless
   * the client cancelled the request meanwhile.
   * @throws ApprovalDeniedError when refused
   */
  run<T>(
    targets: GateTarget[],
    tool: string,
    extra: McpRequestExtra,
    body: () => T | Promise<T>,
  ): Promise<T> {
    const call: CallContext = { extra };
    return this.#calls.run(call, async () => {
      call.sandbox = await this.#gateNow().check(targets, tool);
      // An answer that came after the client gave up does nothing.
      if (extra.signal.aborted) throw cancelled(tool);
      return await body();
    });
  }

  /** True if a resource listing may name `path` (its mount does not ask approval to read). */
  listable(path: string): boolean {
    const m = policyOf(this.current()).table.lookup(path);
    return m === undefined || !m.readApproval;
  }

  #gateNow(): AgentGate {
    this.#gate ??= new AgentGate({
      agentId: this.#id,
      worker: this.#o.worker,
      chain: [this.#o.worker],
      sandbox: this.#sandbox,
      onApproval: this.#approver(),
      expansion: this.#o.ceiling === undefined ? undefined : { bound: this.#o.ceiling },
      audit: this.#o.audit,
      noApproverText: (operation) => this.#noApproverText(operation),
    });
    return this.#gate;
  }

  /** Who answers, by `--approve` and what the client can do; undefined: nobody. */
  #approver(): OnApproval | undefined {
    if (this.#o.policy === "all") return () => "once";
    if (this.#o.policy === "none" || !this.#canElicit()) return undefined;
    return (request) => this.#elicit(request);
  }

  #canElicit(): boolean {
    return this.#server.server.getClientCapabilities()?.elicitation?.form !== undefined;
  }

  async #elicit(request: ApprovalRequest): Promise<ApprovalDecision> {
    // Sent with the tool call it is about: over HTTP it travels on that
    // call's event stream (a session declaring elicitation gets one).
    // A question whose call the client cancels is withdrawn (a denial).
    const extra = this.#calls.getStore()?.extra;
    const result = await this.#server.server.elicitInput(
      { mode: "form", message: describeApproval(request), requestedSchema: DECISION_SCHEMA },
      {
        timeout: ELICIT_TIMEOUT_MS,
        ...(extra === undefined ? {} : { relatedRequestId: extra.requestId, signal: extra.signal }),
      },
    );
    if (result.action !== "accept") return "deny";
    // Anything but the three answers is refused by the gate (fail closed).
    return result.content?.decision as ApprovalDecision;
  }

  /** The end of a refusal nobody could be asked about: how the user can allow it. */
  #noApproverText(operation: ApprovalOperation): string {
    const meanwhile = "Meanwhile choose a path that needs no approval, or report what is needed.";
    if (this.#o.policy === "none")
      return `and mountbox mcp runs with --approve none, which refuses every such request. Tell the user: to allow it, restart mountbox mcp with --approve ask (a client that supports elicitation then asks them) or --approve all. ${meanwhile}`;
    const flag =
      operation === "expand"
        ? "give that folder to the served worker in the program's sandbox config"
        : `remove ${operation === "read" ? "read_approval" : "write_approval"} from that area in the program's sandbox config`;
    return `and this MCP client cannot ask its user (it does not support elicitation), so mountbox refused it. Tell the user: to allow such requests, restart mountbox mcp with --approve all, or ${flag}. ${meanwhile}`;
  }
}

/**
 * The question an approver reads, built from the host's request only (its
 * path normalized and escaped by the gate; the tool is the server's own
 * name for it).
 */
export function describeApproval(r: ApprovalRequest): string {
  const path = `'${r.displayPath ?? r.path}'`;
  const tool = r.tool ?? "a tool";
  if (r.operation === "expand")
    return `mountbox: the MCP client's call of ${tool} needs ${r.access ?? "read"} access to the folder ${path}, which is outside its sandbox (the program allows widening it up to its ceiling).

Allow once: for this call only. Allow for this session: keep that access until the client disconnects. Deny: refuse it.`;
  const what =
    r.operation === "read"
      ? r.via === "list"
        ? `list the folder ${path}`
        : r.via === "search"
          ? `search the folder ${path}`
          : `read ${path}`
      : `${r.operation} ${path}`;
  const kind = r.operation === "read" ? "reads" : "writes";
  const later =
    r.via === undefined
      ? `also later ${r.operation}s in that folder and below (same area)`
      : "also reading every file below that folder (same area)";
  return `mountbox: the MCP client's call of ${tool} wants to ${what}, in an area where ${kind} need your approval.

Allow once: this call only. Allow for this session: ${later}, until the client disconnects. Deny: refuse it.`;
}

/** The error of a call its client cancelled while its approval was asked. */
function cancelled(tool: string) {
  return ioError("approval", undefined, `the client cancelled this ${tool} call; nothing was done`);
}
