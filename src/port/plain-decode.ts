/**
 * The host's decoder of an agent process's messages (see `plain-format.ts`):
 * every value priced as it is built — weighted values, estimated heap,
 * nesting — so a message is refused with a CodecError before it can cost
 * the host more than its budgets.
 */
import {
  CodecError,
  ERRORS,
  MAX_BIGINT_BYTES,
  MAX_DECODED_HEAP,
  MAX_DECODED_VALUES,
  MAX_DEPTH,
  T,
  TYPED,
} from "./plain-format.js";

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
