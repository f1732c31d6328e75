/**
 * The encoder of an agent process's messages (see `plain-format.ts`): runs
 * in the process; throws a `DataCloneError` for what it cannot send.
 */
import { MAX_DEPTH, T, TYPED } from "./plain-format.js";

/** An error as `postMessage` throws for what it cannot clone. */
function notSent(what: string, instead?: string): TypeError {
  const e = new TypeError(
    `${what} could not be sent from an agent process${instead ? `: ${instead}` : ""}`,
  );
  e.name = "DataCloneError";
  return e;
}

/** True if `s` has no lone surrogate (UTF-8 keeps it exactly). */
function isWellFormed(s: string): boolean {
  return (s as unknown as { isWellFormed(): boolean }).isWellFormed();
}

/** Growing output buffer. */
class Writer {
  buf = Buffer.allocUnsafe(256);
  at = 0;
  room(n: number): void {
    if (this.at + n <= this.buf.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.at + n));
    this.buf.copy(next, 0, 0, this.at);
    this.buf = next;
  }
  byte(b: number): void {
    this.room(1);
    this.buf[this.at++] = b;
  }
  varint(n: number): void {
    this.room(10);
    while (n >= 0x80) {
      this.buf[this.at++] = (n % 0x80) | 0x80;
      n = Math.floor(n / 0x80);
    }
    this.buf[this.at++] = n;
  }
  raw(b: Uint8Array): void {
    this.varint(b.length);
    this.room(b.length);
    this.buf.set(b, this.at);
    this.at += b.length;
  }
  /** A string with its tag (UTF-8, or UTF-16 where it has lone surrogates). */
  taggedText(s: string): void {
    this.byte(isWellFormed(s) ? T.string : T.utf16);
    this.text(s);
  }
  text(s: string): void {
    if (isWellFormed(s)) {
      const n = Buffer.byteLength(s, "utf8");
      this.varint(n);
      this.room(n);
      this.at += this.buf.write(s, this.at, n, "utf8");
    } else {
      // Lone surrogates would become U+FFFD in UTF-8: keep them as they are.
      this.raw(Buffer.from(s, "utf16le"));
    }
  }
}

/**
 * Encodes `value` (see the module's comment for what is sent).
 * @throws TypeError (name `DataCloneError`) for a value that is not sent
 */
export function encode(value: unknown): Buffer {
  const w = new Writer();
  const open = new Set<object>();
  const put = (v: unknown, depth: number): unknown => {
    if (depth > MAX_DEPTH) throw notSent("A value nested this deeply");
    switch (typeof v) {
      case "undefined":
        return w.byte(T.undefined);
      case "boolean":
        return w.byte(v ? T.true : T.false);
      case "number":
        if (Number.isInteger(v) && Math.abs(v) < 2 ** 31 && !Object.is(v, -0)) {
          w.byte(T.int);
          w.varint(v >= 0 ? v * 2 : -v * 2 - 1);
        } else {
          w.byte(T.double);
          w.room(8);
          w.at = w.buf.writeDoubleLE(v, w.at);
        }
        return;
      case "string":
        return w.taggedText(v);
      case "bigint": {
        const neg = v < 0n;
        let hex = (neg ? -v : v).toString(16);
        if (hex.length % 2) hex = `0${hex}`;
        w.byte(T.bigint);
        w.byte(neg ? 1 : 0);
        w.raw(Buffer.from(hex, "hex"));
        return;
      }
      case "object":
        break;
      default:
        throw notSent(`A ${typeof v}`);
    }
    if (v === null) return w.byte(T.null);
    const o = v as object;
    if (open.has(o)) throw notSent("A value that contains itself");
    if (o instanceof Uint8Array && !(o instanceof Uint8ClampedArray)) {
      w.byte(T.bytes);
      return w.raw(o);
    }
    if (ArrayBuffer.isView(o)) {
      const code = TYPED.findIndex((C) => o instanceof C);
      if (code < 0) throw notSent(`A ${o.constructor.name}`);
      w.byte(T.typed);
      w.byte(code);
      return w.raw(new Uint8Array(o.buffer, o.byteOffset, o.byteLength));
    }
    if (o instanceof ArrayBuffer) {
      w.byte(T.buffer);
      return w.raw(new Uint8Array(o));
    }
    if (o instanceof Date) {
      w.byte(T.date);
      w.room(8);
      w.at = w.buf.writeDoubleLE(o.getTime(), w.at);
      return;
    }
    if (o instanceof Error) {
      w.byte(T.error);
      w.taggedText(String(o.name));
      w.taggedText(String(o.message));
      w.taggedText(String(o.stack ?? ""));
      return;
    }
    if (o instanceof Map || o instanceof Set || o instanceof RegExp)
      throw notSent(`A ${o.constructor.name}`, "send a plain object or an array instead");
    if (o instanceof SharedArrayBuffer || typeof (o as { then?: unknown }).then === "function")
      throw notSent(`A ${o.constructor?.name ?? "value"}`);
    open.add(o);
    if (Array.isArray(o)) {
      w.byte(T.array);
      w.varint(o.length);
      for (let i = 0; i < o.length; i++) {
        if (!(i in o)) w.byte(T.hole);
        else put(o[i], depth + 1);
      }
    } else {
      const keys = Object.keys(o);
      w.byte(T.object);
      w.varint(keys.length);
      for (const k of keys) {
        w.taggedText(k);
        put((o as Record<string, unknown>)[k], depth + 1);
      }
    }
    open.delete(o);
  };
  put(value, 0);
  return w.buf.subarray(0, w.at);
}
