/**
 * What each operation asks approval for (issue 13): the paths a port
 * operation or an in-process tool call touches, and how. The
 * {@link GateTarget}s are built from the operation's (already checked)
 * arguments; the agent's gate decides what they need.
 */
import type { ApprovalOperation } from "./approval-types.js";
import type { GrantAccess } from "./expansion.js";

/** One path an operation touches, and how. */
export interface GateTarget {
  operation: Exclude<ApprovalOperation, "expand">;
  access: GrantAccess;
  /** The path as given (the gate normalizes it). */
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
