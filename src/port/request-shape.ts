/**
 * The shape of what crosses the port: reading a request (and what a
 * malformed one says about itself), the path an operation's event names,
 * and the wire form of an error.
 */
import { ioError, SandboxError } from "../errors/index.js";
import type { GrepOptions } from "../sandbox/types.js";
import { isId, isPlainObject, quoteKey } from "./arg-checks.js";
import { AWAITING_OPS } from "./operations.js";
import type { PortServerOptions } from "./port-options.js";
import type { WireError } from "./protocol.js";

/** Longest operation name accepted. */
const MAX_OP_CHARS = 64;

/** Reads `{ id, op, args }` with exactly those own keys, or says what is wrong. */
export function readRequest(data: unknown): { id: number; op: string; args: unknown[] } | string {
  if (!isPlainObject(data)) return "a request must be an object { id, op, args }";
  let keys = 0;
  for (const k in data) {
    if (k !== "id" && k !== "op" && k !== "args") return `unexpected key ${quoteKey(k)}`;
    keys++;
  }
  if (keys !== 3 || !Object.hasOwn(data, "id") || !Object.hasOwn(data, "op"))
    return "a request must be an object { id, op, args }";
  const { id, op, args } = data as { id: unknown; op: unknown; args: unknown };
  if (!isId(id)) return "id must be a non-negative integer";
  if (typeof op !== "string" || op.length > MAX_OP_CHARS)
    return `op must be an operation name of at most ${MAX_OP_CHARS} characters`;
  if (!Array.isArray(args) || Object.getPrototypeOf(args) !== Array.prototype)
    return "args must be an array";
  if (args.length > 8) return "too many arguments";
  return { id, op, args };
}

/** The id of a malformed request, when it has a usable one. */
export function readableId(data: unknown): number | null {
  if (isPlainObject(data) && Object.hasOwn(data, "id")) {
    const id = (data as { id: unknown }).id;
    if (isId(id)) return id;
  }
  return null;
}

/** The id of a message shaped like Comlink's `{ id: string, type: string, … }`, else null. */
export function readComlinkId(data: unknown): string | null {
  if (!isPlainObject(data)) return null;
  const { id, type } = data as { id?: unknown; type?: unknown };
  return typeof id === "string" && id.length <= 200 && typeof type === "string" ? id : null;
}

/**
 * The path an operation is about, as the worker sent it (its first argument,
 * or grep's `path`): the owner escapes it for events and normalizes it for
 * the audit log — escaping first would change the path the log names.
 */
export function pathArgOf(op: string, args: unknown[]): string | undefined {
  const first = op === "grep" ? ((args[0] as GrepOptions).path ?? "/") : args[0];
  return typeof first === "string" ? first : undefined;
}

/**
 * The wire form of an error. Only mountbox errors keep their message: any
 * other error (Node's fs errors, bugs) may name host paths, so the worker
 * gets a generic `IoError` naming the operation and the virtual path.
 */
export function toWireError(
  err: unknown,
  op: string,
  args: unknown[],
  opts: PortServerOptions,
): WireError {
  if (err instanceof SandboxError) return err.toJSON();
  opts.onInternalError?.(err, op);
  const path = typeof args[0] === "string" && !AWAITING_OPS.has(op) ? args[0] : undefined;
  return ioError(op, path, "unexpected error").toJSON();
}
