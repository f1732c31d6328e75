/**
 * Message ports over one byte stream: the transport of a process agent
 * (its channel to the host is a socket, not a `MessagePort`). Each message
 * is a frame — a 4-byte big-endian length, a 1-byte lane, then the value,
 * encoded as each side says: the host writes `node:v8`'s format (the
 * structured clone algorithm, as `postMessage` uses), a process writes
 * plain data (`plain-codec.ts`), which the host reads with its own bounded
 * decoder — so several ports (the agent's control messages and its sandbox
 * requests) share the stream, and the port server and the sandbox client
 * work on either transport unchanged.
 *
 * Used on both sides: it imports nothing but Node's own modules. The
 * receiving side bounds every frame before buffering it: a frame longer
 * than `maxFrameBytes` is never read (see {@link FramedPortsOptions}).
 */
import { EventEmitter } from "node:events";
import type { Duplex } from "node:stream";
import { deserialize, serialize } from "node:v8";

/**
 * What the port server and the sandbox client use of a port: a
 * `MessagePort` of `node:worker_threads` is one, and so is a {@link FramedPort}.
 */
export interface PortLike {
  postMessage(value: unknown): void;
  on(event: "message", listener: (value: unknown) => void): unknown;
  on(event: "messageerror", listener: (error: Error) => void): unknown;
  off(event: "message", listener: (value: unknown) => void): unknown;
  off(event: "messageerror", listener: (error: Error) => void): unknown;
  close(): void;
  ref(): void;
  unref(): void;
}

/** Options of {@link openFramedPorts}. */
export interface FramedPortsOptions {
  /** How many ports share the stream (lanes 0 … lanes − 1). */
  lanes: number;
  /** Longest frame accepted from the other side, in bytes. */
  maxFrameBytes: number;
  /**
   * Called once when the other side announces a longer frame, or sends a
   * frame for no lane: nothing more is read, and the stream is destroyed.
   */
  onViolation?: (violation: FrameViolation) => void;
  /**
   * Stop reading the other side's frames while more than a few MiB sent to
   * it are not yet taken (the host's side: replies never pile up in the
   * host for a process that does not read them). Only one side may do
   * this: two sides that both stopped reading while they wait for the
   * other to read would wait forever.
   */
  pauseWhenBacklogged?: boolean;
  /** How this side writes a value. Default: `node:v8`'s `serialize`. */
  encode?: (value: unknown) => Uint8Array;
  /** How this side reads a frame's body. Default: `node:v8`'s `deserialize`. */
  decode?: (body: Uint8Array) => unknown;
  /**
   * The receiving side's own guard (the host's, of a process it does not
   * trust): a frame is refused as soon as its header arrives while
   * `accepts()` is false (a warm spare must say nothing before it is
   * booted), or when it is not complete `maxFrameMs` after its header (a
   * half frame must not hold memory); and a body `decode` throws on is a
   * violation (`reason`: the error's message), not a `messageerror`.
   */
  guard?: {
    accepts(): boolean;
    maxFrameMs: number;
  };
}

/** A frame the other side should not have sent. */
export interface FrameViolation {
  /**
   * `oversize`: longer than allowed; `no_lane`: for no port; `unexpected`:
   * sent while not accepted; `stalled`: not complete in time; `refused`:
   * its body could not be decoded (`reason` says why).
   */
  kind: "oversize" | "no_lane" | "unexpected" | "stalled" | "refused";
  /** The frame's announced length. */
  bytes: number;
  reason?: string;
}

const HEADER = 5;
/** Bytes sent and not yet taken by the other side above which its frames are not read. */
const HIGH_WATER = 4 * 1024 * 1024;

/** One port of a stream: messages posted here arrive on the same lane on the other side. */
export class FramedPort extends EventEmitter {
  readonly #send: (value: unknown) => void;
  readonly #onClose: () => void;
  #closed = false;
  #refed = true;

  /** @internal made by {@link openFramedPorts} */
  constructor(
    send: (value: unknown) => void,
    onClose: () => void,
    private readonly refs: Refs,
  ) {
    super();
    this.#send = send;
    this.#onClose = onClose;
  }

  /**
   * Serializes and sends `value`.
   * @throws DataCloneError (as `postMessage`) for a value that cannot be cloned
   */
  postMessage(value: unknown): void {
    if (this.#closed) return;
    this.#send(value);
  }

  /** Stops this port: nothing more is delivered or sent. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.unref();
    this.removeAllListeners("message");
    this.#onClose();
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** Keeps the process alive while this port is open (the default). */
  ref(): void {
    if (this.#refed || this.#closed) return;
    this.#refed = true;
    this.refs.change(1);
  }

  /** Lets the process exit even though this port is open. */
  unref(): void {
    if (!this.#refed) return;
    this.#refed = false;
    this.refs.change(-1);
  }
}

/** Counts the ports that keep the stream referenced. */
class Refs {
  #count: number;
  constructor(
    count: number,
    private readonly stream: Duplex,
  ) {
    this.#count = count;
  }
  change(by: number): void {
    const before = this.#count;
    this.#count += by;
    const handle = this.stream as unknown as { ref?: () => void; unref?: () => void };
    if (before > 0 && this.#count === 0) handle.unref?.();
    else if (before === 0 && this.#count > 0) handle.ref?.();
  }
}

/**
 * Opens `lanes` ports over `stream`. The stream ends when every port is
 * closed; a port's `messageerror` fires for a frame that cannot be
 * deserialized.
 */
export function openFramedPorts(stream: Duplex, opts: FramedPortsOptions): FramedPort[] {
  const encode = opts.encode ?? serialize;
  const decode = opts.decode ?? deserialize;
  let open = opts.lanes;
  let failed = false;
  let paused = false;
  let corked = false;
  const refs = new Refs(opts.lanes, stream);
  const ports: FramedPort[] = [];
  for (let lane = 0; lane < opts.lanes; lane++) {
    ports.push(
      new FramedPort(
        (value) => {
          const body = encode(value);
          const head = Buffer.allocUnsafe(HEADER);
          head.writeUInt32BE(body.length + 1, 0);
          head.writeUInt8(lane, 4);
          if (stream.destroyed || !stream.writable) return;
          // Frames posted in one turn leave in one write (64 reads sent at
          // once are one system call, not 128).
          if (!corked) {
            corked = true;
            stream.cork();
            process.nextTick(() => {
              corked = false;
              stream.uncork();
            });
          }
          stream.write(head);
          stream.write(body);
          // The other side is not reading: stop reading its requests until
          // it has taken what was sent, so replies never pile up here.
          if (opts.pauseWhenBacklogged && stream.writableLength > HIGH_WATER && !paused) {
            paused = true;
            stream.pause();
            stream.once("drain", () => {
              paused = false;
              stream.resume();
            });
          }
        },
        () => {
          if (--open === 0) stream.end();
        },
        refs,
      ),
    );
  }
  const violate = (kind: FrameViolation["kind"], bytes: number, reason?: string): void => {
    if (failed) return;
    failed = true;
    frame = undefined;
    clearTimeout(stallTimer);
    stream.destroy();
    opts.onViolation?.(reason === undefined ? { kind, bytes } : { kind, bytes, reason });
  };
  const guard = opts.guard;

  /** The frame being read: its header so far, then its body (lane byte first). */
  const header = Buffer.alloc(4);
  let headerAt = 0;
  let frame: Buffer | undefined;
  let frameAt = 0;
  let stallTimer: NodeJS.Timeout | undefined;
  const deliver = (body: Buffer): void => {
    const port = ports[body[0]!];
    if (port === undefined) {
      violate("no_lane", body.length);
      return;
    }
    if (port.closed) return;
    let value: unknown;
    try {
      value = decode(body.subarray(1));
    } catch (err) {
      if (guard) {
        violate("refused", body.length - 1, err instanceof Error ? err.message : "unreadable");
        return;
      }
      port.emit("messageerror", err instanceof Error ? err : new Error(String(err)));
      return;
    }
    port.emit("message", value);
  };
  stream.on("data", (chunk: Buffer) => {
    let at = 0;
    while (at < chunk.length && !failed) {
      if (frame === undefined) {
        const k = Math.min(4 - headerAt, chunk.length - at);
        chunk.copy(header, headerAt, at, at + k);
        headerAt += k;
        at += k;
        if (headerAt < 4) return;
        headerAt = 0;
        const need = header.readUInt32BE(0);
        if (need < 1 || need - 1 > opts.maxFrameBytes) return violate("oversize", need - 1);
        if (guard && !guard.accepts()) return violate("unexpected", need - 1);
        // A fresh buffer per frame, filled as the bytes come (never held
        // twice): a deserialized typed array is a view of it, and must not
        // share memory with anything else.
        frame = Buffer.alloc(need);
        frameAt = 0;
        if (guard)
          stallTimer = setTimeout(() => violate("stalled", need - 1), guard.maxFrameMs).unref();
      }
      const k = Math.min(frame.length - frameAt, chunk.length - at);
      chunk.copy(frame, frameAt, at, at + k);
      frameAt += k;
      at += k;
      if (frameAt < frame.length) return;
      const body = frame;
      frame = undefined;
      clearTimeout(stallTimer);
      deliver(body);
    }
  });
  stream.on("error", () => {});
  stream.on("close", () => {
    frame = undefined;
    clearTimeout(stallTimer);
    for (const p of ports) if (!p.closed) p.emit("close");
  });
  return ports;
}
