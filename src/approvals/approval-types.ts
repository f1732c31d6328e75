/**
 * What an approver is asked and answers (issue 13): the request the host
 * shows (built by the host, never from text the worker sent) and the three
 * decisions. `createHost({ onApproval })` and
 * `createToolDefinitions(sb, { onApproval })` take an {@link OnApproval}.
 */
import type { GrantAccess } from "./expansion.js";

/** What an approval is asked for. */
export type ApprovalOperation = "read" | "write" | "delete" | "move" | "shell" | "expand" | "mcp";

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
   * Normalized virtual path, whole, with every control, format, private-use,
   * unassigned and invisible character escaped (`\u00ad`, `\u{e0041}`): the
   * file for an operation, the directory for `expand`, `/` for `shell`. A
   * link names where it leads too: `/pub/x.txt (→ /secret/s.txt)`.
   */
  path: string;
  /**
   * Only when `path` is long (a part over 200 characters): `path` with each
   * part cut in the middle (`…`) so that its end — the name it reaches —
   * stays visible. Show this one where space is short; `path` is the whole.
   */
  displayPath?: string;
  /**
   * For a `read` asked by a listing (`list`) or a search (`search`) of the
   * folder `path`: a `session` answer then covers reading every file under
   * that folder, in its mount, for the rest of the agent's run.
   */
  via?: "list" | "search";
  /** For `expand`: the access asked for. */
  access?: GrantAccess;
  /**
   * For `mcp`: the server (its name in `mcpServers`), the tool, as the
   * server listed it (`path` is then `mcp:SERVER/TOOL`), and the call's
   * arguments as compact JSON, cut to 500 characters, control characters
   * escaped. A `session` answer covers the tool with any arguments.
   */
  mcp?: { server: string; tool: string; arguments: string };
  /** The tool, when the call came through the in-process tool layer. */
  tool?: string;
}

/** `createHost({ onApproval })`, `createToolDefinitions(sb, { onApproval })`. */
export type OnApproval = (request: ApprovalRequest) => ApprovalDecision | Promise<ApprovalDecision>;
