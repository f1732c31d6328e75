/**
 * The host side of the port boundary: serves one `Sandbox` on one
 * `MessagePort`, to a worker that is assumed hostile.
 *
 * Only the operations in {@link SANDBOX_OPS} run, each with hand-written
 * argument checks (no zod on the hot path). Nothing the worker sends is ever
 * used as a property key on a live object: operations are looked up in a
 * null-prototype table, so `constructor`, `__proto__` or `then` are simply
 * unknown operations. Comlink messages (`{ type: "GET" | "APPLY" | … }`) have
 * no `op` and are refused like any other malformed request.
 */
import type { MessagePort } from "node:worker_threads";
import { escapeControl, ioError, SandboxError } from "../errors/index.js";
import { createModelRequestChecker, type ModelRequestChecker } from "../models/model-host.js";
import { searchSandbox } from "../pool/index.js";
import type { FileEdit, Sandbox } from "../sandbox/sandbox.js";
import { measureMessage } from "../threads/message-size.js";
import { defaultScheduler, type FairScheduler } from "./fair-scheduler.js";
import {
  ACK_OP,
  DELEGATE_OP,
  type GrepOptions,
  INVALID_REQUEST,
  MODEL_GENERATE_OP,
  MODEL_STREAM_OP,
  type PortReply,
  RUN_COMMAND_OP,
  type RunCommandReply,
  type RunCommandRequest,
  type WireError,
} from "./protocol.js";

/** Default cap on one message's payload (strings count 2 bytes per code unit). */
export const DEFAULT_MAX_MESSAGE_BYTES = 64 * 1024 * 1024;
/** Default cap on requests one worker may have in flight at once. */
export const DEFAULT_MAX_IN_FLIGHT = 256;
/**
 * Default budget of bytes one worker may have in flight: requests received
 * and not yet answered, plus big replies not yet acknowledged.
 */
export const DEFAULT_MAX_BYTES_IN_FLIGHT = 128 * 1024 * 1024;
/** Operations of one worker running at once; the rest wait in order. */
const MAX_RUNNING = 4;
/** Replies at least this big are counted until the thread acknowledges them. */
const ACK_THRESHOLD = 64 * 1024;
/** Longest operation name accepted. */
const MAX_OP_CHARS = 64;
/** Longest path or glob string accepted; the sandbox itself rejects paths over 4096 bytes. */
const MAX_PATH_CHARS = 16 * 1024;
/** Most edits accepted in one `editFile` call. */
const MAX_EDITS = 10_000;
/** Longest grep pattern accepted. */
const MAX_PATTERN_CHARS = 16 * 1024;
/** Largest number accepted for a grep budget (the search caps each budget lower). */
const MAX_GREP_NUMBER = 2 ** 40;
/**
 * Longest time budget of a grep from a thread: a thread's search holds one
 * of the host's few pool threads for that long (plus a grace period).
 */
export const MAX_THREAD_GREP_BUDGET_MS = 10_000;

/** Why the server gave up on a worker (the owner should terminate it). */
export interface PortViolation {
  kind: "oversize";
  /** Lower bound of the message's size, in bytes. */
  bytes: number;
  limit: number;
}

/** Options of {@link serveSandbox}. */
export interface PortServerOptions {
  /** Payload cap per message; a bigger message is a violation. Default 64 MiB. */
  maxMessageBytes?: number;
  /** Requests in flight per worker; more are refused with an error. Default 256. */
  maxInFlight?: number;
  /**
   * Bytes in flight per worker: requests not yet answered plus replies of
   * 64 KiB or more not yet acknowledged by the thread. A request that would
   * exceed it is refused; no operation starts while it is exceeded. Default
   * 128 MiB; at least `maxMessageBytes` is used.
   */
  maxBytesInFlight?: number;
  /**
   * The scheduler that shares the host among agents: give every port server
   * of one host the same one ({@link createFairScheduler}). Default: one
   * scheduler shared by the whole process.
   */
  scheduler?: FairScheduler;
  /**
   * Called once for an oversized message, which is then dropped. A thread's
   * `resourceLimits` do not cover ArrayBuffers, so the owner should terminate
   * the sender. The server stops serving after a violation.
   */
  onViolation?: (violation: PortViolation) => void;
  /**
   * Called with any non-mountbox error an operation threw (a bug, or an fs
   * error the I/O layer did not wrap). The worker only ever sees a generic
   * `IoError`, because such errors may carry host paths.
   */
  onInternalError?: (error: unknown, op: string) => void;
  /**
   * Runtime II hook: serves `ctx.delegate(worker, input, opts)`. Without it
   * the `delegate` operation is refused like any unknown operation.
   */
  onDelegate?: (worker: string, input: unknown, opts: Record<string, unknown>) => Promise<unknown>;
  /**
   * Serves an LLM agent's model calls (`model.generate`, `model.stream`) with
   * the call options checked by `checkModelCallOptions`. Without it both
   * operations are refused like any unknown operation: only LLM workers get it.
   */
  onModel?: (kind: "generate" | "stream", options: Record<string, unknown>) => Promise<unknown>;
  /**
   * Serves `ctx.runCommand(command, opts)`. Without it `runCommand` is
   * refused like any unknown operation.
   */
  onRunCommand?: (command: string, opts: RunCommandRequest) => Promise<RunCommandReply>;
  /**
   * Called after each sandbox operation (not `delegate`, model calls or `runCommand`) with its outcome,
   * for events and audit. `path` is the worker's own (virtual) argument.
   */
  onOperation?: (op: string, path: string | undefined, error: SandboxError | undefined) => void;
  /**
   * Called before each sandbox operation (not `delegate`, model calls or
   * `runCommand`) with its checked arguments: it may wait (an approver),
   * reject (the operation fails with that error, unrun), or return the
   * sandbox to serve it with (the agent's sandbox widened by grants). While
   * it waits the operation holds no running slot and no scheduler turn, so a
   * slow approver stalls only this worker's gated operations.
   */
  beforeOperation?: (
    op: string,
    args: readonly unknown[],
  ) => Sandbox | undefined | Promise<Sandbox | undefined>;
}

/** A running server; see {@link serveSandbox}. */
export interface PortServer {
  /** Requests currently being served. */
  readonly inFlight: number;
  /**
   * Stops serving and closes the port. Queued operations never start;
   * running ones stop at their next safe point (a move or tree operation is
   * rolled back); replies still pending are dropped.
   */
  close(): void;
}

/** Arguments after validation, plus their payload size in bytes. */
interface Checked {
  args: unknown[];
  bytes: number;
}

type Handler = {
  check: (args: unknown[]) => Checked | string;
  run: (sandbox: Sandbox, args: unknown[], signal: AbortSignal) => unknown;
};

/**
 * Serves `sandbox` on `port` until {@link PortServer.close}. Every request is
 * answered, with a value or an error, unless it is oversized (see
 * {@link PortServerOptions.onViolation}) or the server is closed.
 */
export function serveSandbox(
  port: MessagePort,
  sandbox: Sandbox,
  opts: PortServerOptions = {},
): PortServer {
  const maxBytes = opts.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
  const maxInFlight = opts.maxInFlight ?? DEFAULT_MAX_IN_FLIGHT;
  const maxBytesInFlight = Math.max(maxBytes, opts.maxBytesInFlight ?? DEFAULT_MAX_BYTES_IN_FLIGHT);
  const lane = (opts.scheduler ?? defaultScheduler).openLane();
  const stop = new AbortController();
  const pending = new Set<number>();
  /** Big replies sent and not yet acknowledged, by request id. */
  const unacked = new Map<number, number>();
  /** Admitted operations waiting for a running slot, in arrival order. */
  const waiting: (() => void)[] = [];
  let running = 0;
  /** Bytes of requests admitted and not yet answered. */
  let requestBytes = 0;
  /** Bytes of big replies sent and not yet acknowledged. */
  let replyBytes = 0;
  let closed = false;
  /** This agent's model requests: checked, with the tools of its last call kept for reuse. */
  const checkModel = opts.onModel ? createModelRequestChecker() : undefined;

  const reply = (msg: PortReply): void => {
    if (closed) return;
    try {
      port.postMessage(msg);
    } catch {
      // A value that cannot be cloned (e.g. it holds a closed port) must not
      // take the host down: answer with an error instead.
      if (msg.ok) {
        const error = ioError("reply", undefined, "the result could not be sent across threads");
        port.postMessage({ id: msg.id, ok: false, error: error.toJSON() });
      }
    }
  };
  const refuse = (id: number | null, message: string): void =>
    reply({
      id,
      ok: false,
      error: { name: "InvalidRequestError", code: INVALID_REQUEST, message },
    });

  // A Comlink proxy waits for a reply in its own format; answer with a
  // Comlink "throw" so the hostile proxy rejects instead of hanging.
  const refuseComlink = (id: string): void => {
    if (closed) return;
    const message = "Comlink messages are not served; use ctx.sandbox.";
    port.postMessage({
      id,
      type: "HANDLER",
      name: "throw",
      value: {
        isError: true,
        value: { name: "InvalidRequestError", code: INVALID_REQUEST, message },
      },
    });
  };

  const violate = (bytes: number): void => {
    if (closed) return;
    server.close();
    opts.onViolation?.({ kind: "oversize", bytes, limit: maxBytes });
  };

  /**
   * Starts waiting operations while a slot is free and unacknowledged
   * replies are within budget: a thread that stops reading its port stops
   * getting work done, instead of piling replies up in the host.
   */
  const pump = (): void => {
    while (
      !closed &&
      waiting.length > 0 &&
      running < MAX_RUNNING &&
      replyBytes < maxBytesInFlight
    ) {
      running++;
      lane.submit(waiting.shift()!);
    }
  };

  const execute = (id: number, op: string, handler: Handler, checked: Checked): void => {
    const report =
      opts.onOperation && !AWAITING_OPS.has(op)
        ? (err: unknown) =>
            opts.onOperation?.(
              op,
              pathArgOf(op, checked.args),
              err === undefined
                ? undefined
                : err instanceof SandboxError
                  ? escapePathOf(err)
                  : ioError(op, undefined, "unexpected error"),
            )
        : undefined;
    // A delegation waits on another agent (a model call on the model, a
    // command on its process), not on the host: it takes no running slot
    // (maxAgents bounds it), so a caller may fan out.
    const takesSlot = !AWAITING_OPS.has(op);
    const settle = (ok: boolean, valueOrError: unknown, tookSlot = takesSlot): void => {
      if (tookSlot) running--;
      requestBytes -= checked.bytes;
      pending.delete(id);
      if (closed) return;
      report?.(ok ? undefined : valueOrError);
      if (!ok) reply({ id, ok: false, error: toWireError(valueOrError, op, checked.args, opts) });
      else {
        // Stops counting past the budget: the exact size of a huge reply does not matter.
        const size = measureMessage(valueOrError, maxBytesInFlight, 10_000_000);
        if (size >= ACK_THRESHOLD) {
          unacked.set(id, size);
          replyBytes += size;
          reply({ id, ok: true, value: valueOrError, ack: true });
        } else reply({ id, ok: true, value: valueOrError });
      }
      pump();
    };
    let served = sandbox;
    const task = (): void => {
      if (closed) return;
      let result: unknown;
      try {
        result = handler.run(served, checked.args, stop.signal);
      } catch (err) {
        settle(false, err);
        return;
      }
      Promise.resolve(result).then(
        (value) => settle(true, value),
        (err: unknown) => settle(false, err),
      );
    };
    if (!takesSlot) {
      lane.submit(task);
      return;
    }
    const gate = opts.beforeOperation;
    if (gate === undefined) {
      waiting.push(task);
      pump();
      return;
    }
    const admit = (chosen: Sandbox | undefined): void => {
      if (closed) return;
      served = chosen ?? sandbox;
      waiting.push(task);
      pump();
    };
    let decided: Sandbox | undefined | Promise<Sandbox | undefined>;
    try {
      decided = gate(op, checked.args);
    } catch (err) {
      settle(false, err, false);
      return;
    }
    if (decided instanceof Promise)
      decided.then(admit, (err: unknown) => settle(false, err, false));
    else admit(decided);
  };

  const onMessage = (data: unknown): void => {
    if (closed) return;
    const req = readRequest(data);
    if (typeof req === "string") {
      // Malformed: measure the whole thing (rare path), closing any port in it.
      const size = measureMessage(data, maxBytes);
      if (size > maxBytes) {
        violate(size);
        return;
      }
      const comlinkId = readComlinkId(data);
      if (comlinkId !== null) {
        refuseComlink(comlinkId);
        return;
      }
      refuse(readableId(data), req);
      return;
    }
    const { id, op, args } = req;
    if (op === ACK_OP && args.length === 0) {
      const size = unacked.get(id);
      if (size !== undefined) {
        unacked.delete(id);
        replyBytes -= size;
        pump();
      }
      return;
    }
    const handler = hookHandler(op, opts, checkModel) ?? HANDLERS[op];
    if (handler === undefined) {
      const size = measureMessage(args, maxBytes);
      if (size > maxBytes) {
        violate(size);
        return;
      }
      refuse(id, `Unknown operation ${JSON.stringify(op)}.`);
      return;
    }
    const checked = handler.check(args);
    if (typeof checked === "string") {
      const size = measureMessage(args, maxBytes);
      if (size > maxBytes) {
        violate(size);
        return;
      }
      refuse(id, `Invalid arguments for ${op}: ${checked}.`);
      return;
    }
    if (checked.bytes > maxBytes) {
      violate(checked.bytes);
      return;
    }
    if (pending.has(id)) {
      refuse(id, `Request id ${id} is already in flight.`);
      return;
    }
    if (pending.size >= maxInFlight) {
      refuse(id, `Too many requests in flight (at most ${maxInFlight}).`);
      return;
    }
    const inFlight = requestBytes + replyBytes;
    if (inFlight > 0 && inFlight + checked.bytes > maxBytesInFlight) {
      refuse(
        id,
        `Too many bytes in flight (at most ${maxBytesInFlight}); wait for earlier requests to finish.`,
      );
      return;
    }
    pending.add(id);
    requestBytes += checked.bytes;
    execute(id, op, handler, checked);
  };

  const onMessageError = (): void => {
    refuse(null, "The message could not be deserialized.");
  };

  port.on("message", onMessage);
  port.on("messageerror", onMessageError);

  const server: PortServer = {
    get inFlight() {
      return pending.size;
    },
    close() {
      if (closed) return;
      closed = true;
      waiting.length = 0;
      lane.close();
      stop.abort();
      port.off("message", onMessage);
      port.off("messageerror", onMessageError);
      port.close();
    },
  };
  return server;
}

/** Reads `{ id, op, args }` with exactly those own keys, or says what is wrong. */
function readRequest(data: unknown): { id: number; op: string; args: unknown[] } | string {
  if (!isPlainObject(data)) return "a request must be an object { id, op, args }";
  let keys = 0;
  for (const k in data) {
    if (k !== "id" && k !== "op" && k !== "args") return `unexpected key ${JSON.stringify(k)}`;
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

function readableId(data: unknown): number | null {
  if (isPlainObject(data) && Object.hasOwn(data, "id")) {
    const id = (data as { id: unknown }).id;
    if (isId(id)) return id;
  }
  return null;
}

/** The id of a message shaped like Comlink's `{ id: string, type: string, … }`, else null. */
function readComlinkId(data: unknown): string | null {
  if (!isPlainObject(data)) return null;
  const { id, type } = data as { id?: unknown; type?: unknown };
  return typeof id === "string" && id.length <= 200 && typeof type === "string" ? id : null;
}

function isId(v: unknown): v is number {
  return typeof v === "number" && Number.isSafeInteger(v) && v >= 0;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  if (typeof v !== "object" || v === null) return false;
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

// ---------------------------------------------------------------------------
// Argument checks. Each returns the arguments to call with (copies where the
// worker could still mutate them, e.g. shared memory) and their size.
// ---------------------------------------------------------------------------

function isPath(v: unknown): v is string {
  return typeof v === "string" && v.length <= MAX_PATH_CHARS;
}

function arity(args: unknown[], min: number, max: number): string | undefined {
  if (args.length < min || args.length > max)
    return min === max ? `expected ${min} argument(s)` : `expected ${min} to ${max} arguments`;
  return undefined;
}

/** Checks a strict options object of booleans; returns it normalized, or an error. */
function readOptions(
  v: unknown,
  allowed: readonly string[],
): Record<string, boolean> | string | undefined {
  if (v === undefined) return undefined;
  if (!isPlainObject(v)) return "options must be an object";
  const out: Record<string, boolean> = {};
  for (const k in v) {
    if (!allowed.includes(k)) return `unknown option ${JSON.stringify(k.slice(0, 64))}`;
    const value = v[k];
    if (value === undefined) continue;
    if (typeof value !== "boolean") return `option ${k} must be a boolean`;
    out[k] = value;
  }
  return out;
}

const pathsOnly =
  (n: number) =>
  (args: unknown[]): Checked | string => {
    const bad = arity(args, n, n);
    if (bad) return bad;
    let bytes = 0;
    for (const a of args) {
      if (!isPath(a)) return "a path must be a string";
      bytes += a.length * 2;
    }
    return { args, bytes };
  };

const withOptions =
  (paths: number, allowed: readonly string[]) =>
  (args: unknown[]): Checked | string => {
    const bad = arity(args, paths, paths + 1);
    if (bad) return bad;
    let bytes = 0;
    for (let i = 0; i < paths; i++) {
      const a = args[i];
      if (!isPath(a)) return "a path must be a string";
      bytes += a.length * 2;
    }
    const o = readOptions(args[paths], allowed);
    if (typeof o === "string") return o;
    return { args: [...args.slice(0, paths), o], bytes };
  };

function checkWrite(args: unknown[]): Checked | string {
  const bad = arity(args, 2, 2);
  if (bad) return bad;
  const [path, content] = args;
  if (!isPath(path)) return "a path must be a string";
  if (typeof content === "string") return { args, bytes: path.length * 2 + content.length * 2 };
  if (content instanceof Uint8Array) {
    // A view may sit on shared memory the worker can still change, or on a
    // bigger buffer: copy exactly the bytes meant.
    const bytes = content.buffer.byteLength + path.length * 2;
    return { args: [path, new Uint8Array(content)], bytes };
  }
  return "content must be a string or a Uint8Array";
}

function checkEdit(args: unknown[]): Checked | string {
  const bad = arity(args, 2, 3);
  if (bad) return bad;
  const [path, edits, options] = args;
  if (!isPath(path)) return "a path must be a string";
  if (!Array.isArray(edits) || edits.length > MAX_EDITS)
    return `edits must be an array of at most ${MAX_EDITS} { oldText, newText }`;
  let bytes = path.length * 2;
  const clean: FileEdit[] = [];
  for (const e of edits) {
    if (!isPlainObject(e)) return "each edit must be an object { oldText, newText }";
    for (const k in e)
      if (k !== "oldText" && k !== "newText") return `unknown edit key ${JSON.stringify(k)}`;
    const { oldText, newText } = e;
    if (typeof oldText !== "string" || typeof newText !== "string")
      return "oldText and newText must be strings";
    bytes += (oldText.length + newText.length) * 2 + 16;
    clean.push({ oldText, newText });
  }
  const o = readOptions(options, ["dryRun"]);
  if (typeof o === "string") return o;
  return { args: [path, clean, o], bytes };
}

function checkList(args: unknown[]): Checked | string {
  const bad = arity(args, 0, 2);
  if (bad) return bad;
  let bytes = 0;
  for (const a of args) {
    if (a === undefined) continue;
    if (!isPath(a)) return "path and pattern must be strings";
    bytes += a.length * 2;
  }
  return { args, bytes };
}

const noArgs = (args: unknown[]): Checked | string => arity(args, 0, 0) ?? { args, bytes: 0 };

/** The string options of `grep` and their longest accepted length. */
const GREP_STRINGS: Record<string, number> = {
  pattern: MAX_PATTERN_CHARS,
  flags: 16,
  path: MAX_PATH_CHARS,
  glob: MAX_PATH_CHARS,
};
/** The numeric options of `grep` (budgets; the search checks and caps them further). */
const GREP_NUMBERS = ["maxMatches", "maxBytes", "maxFileBytes", "timeBudgetMs", "maxLineChars"];

/**
 * Checks `grep`'s one argument, a strict options object: known keys only,
 * strings capped, numbers non-negative integers within bounds. Returns a
 * fresh copy holding exactly the accepted keys.
 */
function checkGrep(args: unknown[]): Checked | string {
  const bad = arity(args, 1, 1);
  if (bad) return bad;
  const v = args[0];
  if (!isPlainObject(v)) return "options must be an object { pattern, path?, glob?, flags?, … }";
  const out: Record<string, string | number> = {};
  let bytes = 0;
  for (const k in v) {
    const value = v[k];
    const maxChars = Object.hasOwn(GREP_STRINGS, k) ? GREP_STRINGS[k] : undefined;
    if (maxChars !== undefined) {
      if (value === undefined) continue;
      if (typeof value !== "string" || value.length > maxChars)
        return `${k} must be a string of at most ${maxChars} characters`;
      out[k] = value;
      bytes += value.length * 2;
    } else if (GREP_NUMBERS.includes(k)) {
      if (value === undefined) continue;
      if (
        typeof value !== "number" ||
        !Number.isInteger(value) ||
        value < 0 ||
        value > MAX_GREP_NUMBER
      )
        return `${k} must be a non-negative integer of at most ${MAX_GREP_NUMBER}`;
      out[k] = k === "timeBudgetMs" ? Math.min(value, MAX_THREAD_GREP_BUDGET_MS) : value;
    } else return `unknown option ${JSON.stringify(k.slice(0, 64))}`;
  }
  if (typeof out.pattern !== "string") return "pattern must be a string";
  return { args: [out], bytes };
}

const s = (v: unknown): string => v as string;
const o = (v: unknown) => v as Record<string, boolean> | undefined;

/** The allowlist. A null prototype: no inherited key can ever name a handler. */
const HANDLERS: Record<string, Handler | undefined> = Object.assign(Object.create(null), {
  readFile: { check: pathsOnly(1), run: (sb, a) => sb.readFile(s(a[0])) },
  readBytes: {
    check: pathsOnly(1),
    // Node may hand back a view into a shared pool: cloning the view would
    // send the whole pool. Copy exactly the file's bytes.
    run: async (sb, a) => exactBytes(await sb.readBytes(s(a[0]))),
  },
  writeFile: {
    check: checkWrite,
    run: (sb, a) => sb.writeFile(s(a[0]), a[1] as string | Uint8Array),
  },
  editFile: {
    check: checkEdit,
    run: async (sb, a) => {
      const r = await sb.editFile(s(a[0]), a[1] as FileEdit[], o(a[2]));
      return { diff: r.diff };
    },
  },
  listFiles: {
    check: checkList,
    run: (sb, a, signal) =>
      sb.listFiles(a[0] as string | undefined, a[1] as string | undefined, { signal }),
  },
  stat: {
    check: pathsOnly(1),
    run: async (sb, a) => {
      const st = await sb.stat(s(a[0]));
      return { type: st.type, size: st.size, mtimeMs: st.mtimeMs };
    },
  },
  exists: { check: pathsOnly(1), run: (sb, a) => sb.exists(s(a[0])) },
  mkdir: { check: pathsOnly(1), run: (sb, a) => sb.mkdir(s(a[0])) },
  remove: {
    check: withOptions(1, ["recursive"]),
    run: (sb, a, signal) => sb.remove(s(a[0]), { ...o(a[1]), signal }),
  },
  move: {
    check: withOptions(2, ["overwrite"]),
    run: (sb, a, signal) => sb.move(s(a[0]), s(a[1]), { ...o(a[2]), signal }),
  },
  canRead: { check: pathsOnly(1), run: (sb, a) => sb.canRead(s(a[0])) },
  canWrite: { check: pathsOnly(1), run: (sb, a) => sb.canWrite(s(a[0])) },
  readableRoots: { check: noArgs, run: (sb) => sb.readableRoots },
  writableRoots: { check: noArgs, run: (sb) => sb.writableRoots },
  describe: { check: noArgs, run: (sb) => sb.describe() },
  grep: {
    check: checkGrep,
    // In the pool of trusted host threads (a search never holds this loop),
    // with this agent's policy; closing the server stops it.
    run: (sb, a, signal) => searchSandbox(sb, a[0] as GrepOptions, { signal }),
  },
} satisfies Record<string, Handler>);

/** Operations served by a hook, each waiting on something other than the host's loop. */
const AWAITING_OPS = new Set([DELEGATE_OP, MODEL_GENERATE_OP, MODEL_STREAM_OP, RUN_COMMAND_OP]);

/** Longest command `runCommand` accepts. */
const MAX_COMMAND_CHARS = 64 * 1024;

/** The handler of a hook operation whose hook the owner gave, else undefined. */
function hookHandler(
  op: string,
  opts: PortServerOptions,
  checkModel: ModelRequestChecker | undefined,
): Handler | undefined {
  if (op === DELEGATE_OP && opts.onDelegate) return delegateHandler(opts);
  if ((op === MODEL_GENERATE_OP || op === MODEL_STREAM_OP) && opts.onModel && checkModel)
    return modelHandler(op === MODEL_GENERATE_OP ? "generate" : "stream", opts.onModel, checkModel);
  if (op === RUN_COMMAND_OP && opts.onRunCommand) return runCommandHandler(opts.onRunCommand);
  return undefined;
}

function modelHandler(
  kind: "generate" | "stream",
  onModel: NonNullable<PortServerOptions["onModel"]>,
  checkModel: ModelRequestChecker,
): Handler {
  return {
    check(args) {
      const bad = arity(args, 1, 1);
      if (bad) return bad;
      // Every field checked: the host passes only the accepted ones on.
      const checked = checkModel(args[0]);
      if (typeof checked === "string") return checked;
      return { args: [checked.options], bytes: checked.bytes };
    },
    run: (_sb, a) => onModel(kind, a[0] as Record<string, unknown>),
  };
}

function runCommandHandler(onRunCommand: NonNullable<PortServerOptions["onRunCommand"]>): Handler {
  return {
    check(args) {
      const bad = arity(args, 1, 2);
      if (bad) return bad;
      const [command, options] = args;
      if (typeof command !== "string" || command === "" || command.length > MAX_COMMAND_CHARS)
        return `command must be a non-empty string of at most ${MAX_COMMAND_CHARS} characters`;
      const out: RunCommandRequest = {};
      if (options !== undefined) {
        if (!isPlainObject(options)) return "options must be an object";
        for (const k in options) {
          if (k !== "timeoutMs") return `unknown option ${JSON.stringify(k.slice(0, 64))}`;
          const t = options[k];
          if (t === undefined) continue;
          if (typeof t !== "number" || !Number.isInteger(t) || t < 1)
            return "timeoutMs must be a positive integer";
          out.timeoutMs = t;
        }
      }
      return { args: [command, out], bytes: command.length * 2 };
    },
    run: (_sb, a) => onRunCommand(s(a[0]), a[1] as RunCommandRequest),
  };
}

function delegateHandler(opts: PortServerOptions): Handler {
  return {
    check(args) {
      const bad = arity(args, 2, 3);
      if (bad) return bad;
      const [worker, input, options] = args;
      if (typeof worker !== "string" || worker.length > 256) return "worker must be a name";
      if (options !== undefined && !isPlainObject(options)) return "options must be an object";
      // Validated in full by the host's delegate handler; sized here. A port
      // in the input could not be passed on to the callee's thread.
      let hasPort = false;
      const flag = () => {
        hasPort = true;
      };
      const bytes =
        measureMessage(input, Number.MAX_SAFE_INTEGER, undefined, flag) +
        measureMessage(options, 1 << 20, undefined, flag);
      if (hasPort) return "input and options must not contain message ports";
      return { args, bytes };
    },
    run: (_sb, a) =>
      opts.onDelegate?.(s(a[0]), a[1], (a[2] as Record<string, unknown> | undefined) ?? {}),
  };
}

/** The virtual path an operation is about, for its event: its first argument, or grep's `path`. */
function pathArgOf(op: string, args: unknown[]): string | undefined {
  const first = op === "grep" ? ((args[0] as GrepOptions).path ?? "/") : args[0];
  return typeof first === "string" ? escapeControl(first) : undefined;
}

/** `err`, or a copy whose `path` has its control characters escaped (events show it). */
function escapePathOf(err: SandboxError): SandboxError {
  if (err.path === undefined) return err;
  const path = escapeControl(err.path);
  return path === err.path ? err : SandboxError.fromJSON({ ...err.toJSON(), path });
}

function exactBytes(b: Uint8Array): Uint8Array {
  const whole =
    b.byteOffset === 0 && b.byteLength === b.buffer.byteLength && b.buffer instanceof ArrayBuffer;
  return whole && Object.getPrototypeOf(b) === Uint8Array.prototype ? b : new Uint8Array(b);
}

/**
 * The wire form of an error. Only mountbox errors keep their message: any
 * other error (Node's fs errors, bugs) may name host paths, so the worker
 * gets a generic `IoError` naming the operation and the virtual path.
 */
function toWireError(
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
