/**
 * The host side of the port boundary: serves one `Sandbox` on one port — a
 * thread's `MessagePort`, or a lane of a process agent's socket
 * (`frames.ts`) — to a worker that is assumed hostile.
 *
 * Only the operations in {@link SANDBOX_OPS} run, each with hand-written
 * argument checks (no zod on the hot path; see `operations.ts`). Nothing the worker sends is ever
 * used as a property key on a live object: operations are looked up in a
 * null-prototype table, so `constructor`, `__proto__` or `then` are simply
 * unknown operations. Comlink messages (`{ type: "GET" | "APPLY" | … }`) have
 * no `op` and are refused like any other malformed request.
 */
import { ioError, SandboxError } from "../errors/index.js";
import { createModelRequestChecker } from "../models/model-request-checks.js";
import type { Sandbox } from "../sandbox/sandbox.js";
import { measureMessage } from "../threads/message-size.js";
import type { Checked, Handler } from "./arg-checks.js";
import { defaultScheduler } from "./fair-scheduler.js";
import type { PortLike } from "./frames.js";
import { AWAITING_OPS, findHookHandler, HANDLERS } from "./operations.js";
import {
  DEFAULT_MAX_BYTES_IN_FLIGHT,
  DEFAULT_MAX_IN_FLIGHT,
  DEFAULT_MAX_MESSAGE_BYTES,
  type PortServer,
  type PortServerOptions,
} from "./port-options.js";
import { ACK_OP, INVALID_REQUEST, type PortReply } from "./protocol.js";
import { createReservations } from "./read-budget.js";
import { pathArgOf, readableId, readComlinkId, readRequest, toWireError } from "./request-shape.js";

/** A request accepted by the server, until it is reported. */
interface Accepted {
  /** Its operation has started (it is reported when it ends). */
  started: boolean;
  /** Reports it as stopped before it started. */
  abandon: () => void;
}

/** Operations of one worker running at once; the rest wait in order. */
const MAX_RUNNING = 4;
/** Replies at least this big are counted until the thread acknowledges them. */
const ACK_THRESHOLD = 64 * 1024;
/**
 * Serves `sandbox` on `port` until {@link PortServer.close}. Every request is
 * answered, with a value or an error, unless it is oversized (see
 * {@link PortServerOptions.onViolation}) or the server is closed.
 */
export function serveSandbox(
  port: PortLike,
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
  /** Reads' bytes about to load (see {@link createReservations}), counted before they load. */
  const reservations = createReservations(() => replyBytes, maxBytesInFlight);
  let closed = false;
  /** Requests accepted and not yet reported, by id. */
  const accepted = new Map<number, Accepted>();
  /** Operations started and not yet ended: close() waits for them. */
  const inProgress = new Set<Promise<void>>();
  let drained: Promise<void> | undefined;
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
    void server.close();
    opts.onViolation?.({ kind: "oversize", bytes, limit: maxBytes });
  };

  /**
   * Starts waiting operations while a slot is free and unacknowledged
   * replies are within budget: a thread that stops reading its port stops
   * getting work done, instead of piling replies up in the host.
   */
  const pump = (): void => {
    reservations.grant();
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
    // Exactly one report per accepted request: when it settles, or at
    // close() when it never started (issue 26: every operation's audit line
    // says how it ended, a stop included).
    let reported = false;
    const report = (err: unknown, aborted: boolean): void => {
      if (reported) return;
      reported = true;
      accepted.delete(id);
      if (!opts.onOperation || AWAITING_OPS.has(op)) return;
      opts.onOperation(
        op,
        pathArgOf(op, checked.args),
        err === undefined
          ? undefined
          : err instanceof SandboxError
            ? err
            : ioError(op, undefined, "unexpected error"),
        aborted,
      );
    };
    const entry: Accepted = {
      started: false,
      abandon: () =>
        report(
          ioError(op, undefined, "the agent stopped before it started; nothing was done"),
          true,
        ),
    };
    accepted.set(id, entry);
    // A delegation waits on another agent (a model call on the model, a
    // command on its process), not on the host: it takes no running slot
    // (maxAgents bounds it), so a caller may fan out.
    const takesSlot = !AWAITING_OPS.has(op);
    const settle = (ok: boolean, valueOrError: unknown, tookSlot = takesSlot): void => {
      if (tookSlot) running--;
      // From here the reply's own size is counted instead (if it is big).
      reservations.release(id);
      requestBytes -= checked.bytes;
      pending.delete(id);
      // One that failed after the stop did not complete because of it.
      report(ok ? undefined : valueOrError, !ok && closed);
      if (closed) return;
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
      entry.started = true;
      let result: unknown;
      try {
        result = handler.run(served, checked.args, stop.signal, (bytes) =>
          reservations.reserve(id, bytes),
        );
      } catch (err) {
        settle(false, err);
        return;
      }
      // close() waits for it: a stop returns once every started operation
      // has ended (done, or stopped at a safe point) and been reported.
      const ended: Promise<void> = Promise.resolve(result)
        .then(
          (value) => settle(true, value),
          (err: unknown) => settle(false, err),
        )
        .then(
          () => {
            inProgress.delete(ended);
          },
          (err: unknown) => {
            inProgress.delete(ended);
            opts.onInternalError?.(err, op);
          },
        );
      inProgress.add(ended);
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
    const handler = findHookHandler(op, opts, checkModel) ?? HANDLERS[op];
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
      if (drained) return drained;
      closed = true;
      waiting.length = 0;
      reservations.close();
      lane.close();
      stop.abort();
      port.off("message", onMessage);
      port.off("messageerror", onMessageError);
      port.close();
      // Queued, or waiting on an approval: they never start now.
      for (const entry of accepted.values()) if (!entry.started) entry.abandon();
      drained = Promise.all(inProgress).then(() => undefined);
      return drained;
    },
  };
  return server;
}
