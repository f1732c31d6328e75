/**
 * The encoding of what an agent process sends its host: plain data only,
 * read by a small decoder that prices every value as it builds it. A
 * process writes raw bytes, and V8's own format lets a few of them cost the
 * host gigabytes of heap or minutes of time (empty Maps, sparse array
 * lengths, RegExps compiled on arrival, hash collisions among numeric Map
 * keys, reads that fall out of step with a checker: found by two
 * adversarial reviews) — so `v8.deserialize` never sees an agent's bytes.
 * The host's own messages to a process stay in V8's format (the host is
 * trusted there).
 *
 * Values: `undefined`, `null`, booleans, numbers, strings (lone surrogates
 * kept), BigInts, Dates, `Uint8Array`/`Buffer` (as `Uint8Array`), the other
 * typed arrays, `ArrayBuffer`s, Errors (name, message, stack), arrays (holes
 * kept) and objects (own enumerable string keys, as structured clone takes
 * them). Not sent: functions, symbols, Maps, Sets, RegExps, values that
 * contain themselves — `encode` throws a `DataCloneError`-like TypeError,
 * as `postMessage` does for what it cannot clone.
 *
 * Used on both sides: it imports nothing but Node's own modules.
 */

/**
 * Most work one message may cost the host to decode, in weighted values
 * (≈ 0.5 s of the host's time at worst, measured: objects of many keys are
 * the slowest per value).
 */
export const MAX_DECODED_VALUES = 1_000_000;
/** Most estimated heap one decoded message may take. */
export const MAX_DECODED_HEAP = 256 * 1024 * 1024;
/** Deepest nesting sent or read. */
export const MAX_DEPTH = 1000;
/** Longest BigInt, in bytes of magnitude. */
const MAX_BIGINT_BYTES = 64 * 1024;

const T = {
  undefined: 0,
  null: 1,
  false: 2,
  true: 3,
  int: 4,
  double: 5,
  string: 6,
  utf16: 7,
  bytes: 8,
  typed: 9,
  buffer: 10,
  array: 11,
  object: 12,
  date: 13,
  bigint: 14,
  hole: 15,
  error: 16,
} as const;

/** The typed arrays, by their code (Uint8Array is `bytes`). */
const TYPED = [
  Int8Array,
  Uint8ClampedArray,
  Int16Array,
  Uint16Array,
  Int32Array,
  Uint32Array,
  Float32Array,
  Float64Array,
  BigInt64Array,
  BigUint64Array,
] as const;

/** The errors structured clone keeps by name (a null prototype: no `constructor`, no `toString`). */
const ERRORS: Record<string, ErrorConstructor> = {
  __proto__: null as never,
  Error,
  EvalError,
  RangeError,
  ReferenceError,
  SyntaxError,
  TypeError,
  URIError,
};

/** Thrown by {@link decode} for a message that is refused; its text says why. */
export class CodecError extends Error {}

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

/** Prices of decoded values, in estimated bytes of heap. */
const COST = {
  value: 16,
  string: 24,
  array: 32,
  slot: 8,
  object: 48,
  property: 32,
  buffer: 96,
  error: 1024,
};
/** Weights of values in {@link MAX_DECODED_VALUES}. */
const WEIGHT = { plain: 1, object: 3, error: 50 };

/**
 * Decodes what {@link encode} wrote, refusing (with a {@link CodecError})
 * anything else, and anything over the budgets. `values` is the message's
 * weighted count (for a budget over time).
 */
export function decode(data: Uint8Array): { value: unknown; values: number } {
  const r = new Reader(data);
  const value = r.value(0);
  if (r.at !== data.length) throw new CodecError("bytes after the value");
  return { value, values: r.values };
}

class Reader {
  at = 0;
  values = 0;
  heap = 0;
  readonly d: Buffer;
  constructor(data: Uint8Array) {
    this.d = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  }

  byte(): number {
    if (this.at >= this.d.length) throw new CodecError("truncated");
    return this.d[this.at++]!;
  }

  varint(): number {
    let out = 0;
    let scale = 1;
    for (let i = 0; i < 8; i++) {
      const b = this.byte();
      out += (b & 0x7f) * scale;
      if ((b & 0x80) === 0) {
        if (out > Number.MAX_SAFE_INTEGER) break;
        return out;
      }
      scale *= 128;
    }
    throw new CodecError("bad length");
  }

  /** A length of at most the bytes left (each counted item takes one at least). */
  count(): number {
    const n = this.varint();
    if (n > this.d.length - this.at) throw new CodecError("length beyond the message");
    return n;
  }

  raw(): Buffer {
    const n = this.count();
    const out = Buffer.alloc(n);
    this.d.copy(out, 0, this.at, this.at + n);
    this.at += n;
    return out;
  }

  /** A string with its tag. */
  taggedText(): string {
    const tag = this.byte();
    if (tag !== T.string && tag !== T.utf16) throw new CodecError("expected a string");
    return this.text(tag === T.utf16);
  }

  text(utf16 = false): string {
    const n = this.count();
    const s = this.d.toString(utf16 ? "utf16le" : "utf8", this.at, this.at + n);
    this.at += n;
    this.charge(COST.string + 2 * n);
    return s;
  }

  charge(heap: number, weight: number = WEIGHT.plain): void {
    this.values += weight;
    this.heap += heap;
    if (this.values > MAX_DECODED_VALUES)
      throw new CodecError(`more than ${MAX_DECODED_VALUES} values`);
    if (this.heap > MAX_DECODED_HEAP)
      throw new CodecError(`more than ${MAX_DECODED_HEAP / 2 ** 20} MiB of values`);
  }

  value(depth: number): unknown {
    if (depth > MAX_DEPTH) throw new CodecError("nested too deeply");
    const tag = this.byte();
    switch (tag) {
      case T.undefined:
        this.charge(0);
        return undefined;
      case T.null:
        this.charge(0);
        return null;
      case T.false:
      case T.true:
        this.charge(0);
        return tag === T.true;
      case T.int: {
        const z = this.varint();
        if (z >= 2 ** 32) throw new CodecError("bad integer");
        this.charge(COST.value);
        return z % 2 === 0 ? z / 2 : -(z + 1) / 2;
      }
      case T.double: {
        if (this.at + 8 > this.d.length) throw new CodecError("truncated");
        const n = this.d.readDoubleLE(this.at);
        this.at += 8;
        this.charge(COST.value);
        return n;
      }
      case T.string:
      case T.utf16:
        return this.text(tag === T.utf16);
      case T.bigint: {
        const neg = this.byte();
        if (neg > 1) throw new CodecError("bad bigint");
        const mag = this.raw();
        if (mag.length > MAX_BIGINT_BYTES) throw new CodecError("bigint too long");
        this.charge(COST.value + mag.length, WEIGHT.object);
        const n = mag.length === 0 ? 0n : BigInt(`0x${mag.toString("hex")}`);
        return neg ? -n : n;
      }
      case T.bytes: {
        const b = this.raw();
        this.charge(COST.buffer + b.length, WEIGHT.object);
        return new Uint8Array(b.buffer, b.byteOffset, b.length);
      }
      case T.typed: {
        const C = TYPED[this.byte()];
        if (C === undefined) throw new CodecError("bad typed array");
        const b = this.raw();
        if (b.length % C.BYTES_PER_ELEMENT !== 0) throw new CodecError("bad typed array");
        this.charge(COST.buffer + b.length, WEIGHT.object);
        // A fresh, aligned buffer of its own.
        const copy = new ArrayBuffer(b.length);
        new Uint8Array(copy).set(b);
        return new C(copy);
      }
      case T.buffer: {
        const b = this.raw();
        this.charge(COST.buffer + b.length, WEIGHT.object);
        const copy = new ArrayBuffer(b.length);
        new Uint8Array(copy).set(b);
        return copy;
      }
      case T.date: {
        if (this.at + 8 > this.d.length) throw new CodecError("truncated");
        const t = this.d.readDoubleLE(this.at);
        this.at += 8;
        this.charge(COST.object, WEIGHT.object);
        return new Date(t);
      }
      case T.error: {
        // An Error is dear to build (it captures a stack): it weighs 50.
        this.charge(COST.error, WEIGHT.error);
        const name = this.taggedText();
        const message = this.taggedText();
        const stack = this.taggedText();
        // As structured clone: a known name keeps its class, any other is an Error.
        const Ctor = (Object.hasOwn(ERRORS, name) ? ERRORS[name] : undefined) ?? Error;
        const limit = Error.stackTraceLimit;
        Error.stackTraceLimit = 0; // its own stack is the one sent
        let e: Error;
        try {
          e = new Ctor(message);
        } finally {
          Error.stackTraceLimit = limit;
        }
        Object.defineProperty(e, "stack", { value: stack, writable: true, configurable: true });
        return e;
      }
      case T.array: {
        const n = this.count();
        this.charge(COST.array + n * COST.slot, WEIGHT.object);
        const out: unknown[] = new Array(n);
        for (let i = 0; i < n; i++) {
          if (this.d[this.at] === T.hole) {
            this.at++;
            this.charge(0);
          } else out[i] = this.value(depth + 1);
        }
        return out;
      }
      case T.object: {
        const n = this.count();
        this.charge(COST.object, WEIGHT.object);
        const out: Record<string, unknown> = {};
        for (let i = 0; i < n; i++) {
          const key = this.taggedText();
          this.heap += COST.property;
          const v = this.value(depth + 1);
          // An own property named __proto__, as structured clone makes it.
          if (key === "__proto__")
            Object.defineProperty(out, key, {
              value: v,
              enumerable: true,
              writable: true,
              configurable: true,
            });
          else out[key] = v;
        }
        return out;
      }
      default:
        throw new CodecError(`unknown tag ${tag}`);
    }
  }
}
