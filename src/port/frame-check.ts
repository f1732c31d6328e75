/**
 * What a frame from an agent process would cost the host to deserialize,
 * read before `v8.deserialize` is called on it. A process writes raw bytes
 * on its channel: unlike a thread, it need not build a value in its own
 * heap before the host rebuilds it, and the V8 format makes a few bytes
 * grow large (an empty `Map` is 3 bytes on the wire and ~74 bytes of heap:
 * one 66 MB frame exhausted the host's heap — found by an adversarial
 * review). So the frame is walked as V8's `ValueDeserializer` reads it
 * (format version 15, which Node 20 to 26 write, with Node's host objects
 * for typed arrays), each
 * value priced at a conservative estimate of what it allocates; a frame
 * over the budget, or one that is not a value this walk can read exactly
 * to its end, is refused without being deserialized.
 *
 * Tags the runtime never writes (transferred or shared buffers, resizable
 * buffers, WebAssembly, shared objects, legacy host tags) are refused.
 */

/** Most estimated heap one frame may cost the host (a thread's default old space). */
export const MAX_FRAME_HEAP = 256 * 1024 * 1024;
/**
 * Most work one frame may hold, in values: each value is one, an object,
 * array, date, error or boxed primitive three, a Map or Set eight (what
 * they cost V8 to rebuild, measured: 2 million nulls ≈ 0.1 s, 2 million
 * empty Maps ≈ 1.5 s on this project's machine). At most ≈ 0.2 s of the
 * host's time.
 */
export const MAX_FRAME_VALUES = 2_000_000;
/** Weights of values in {@link MAX_FRAME_VALUES}. */
const WEIGHT = { plain: 1, object: 3, collection: 8 } as const;
/** Deepest nesting read (V8 itself would overflow its stack somewhere past this). */
const MAX_DEPTH = 2000;

/** Estimated heap cost of one frame. */
export interface FrameCost {
  values: number;
  heap: number;
}

/** Thrown inside the walk; becomes the refusal's text. */
class Refused extends Error {}

/**
 * Walks the serialized value in `data` (a whole frame body, header
 * included) and returns its cost, or why it is refused.
 */
export function checkFrame(data: Uint8Array): FrameCost | string {
  const r = new Reader(data);
  try {
    if (r.byte() !== 0xff) throw new Refused("no serialization header");
    // The version every Node from 20 to 26 writes; older ones read some
    // tags differently.
    const version = r.varint();
    if (version !== 15) throw new Refused(`format version ${version}`);
    r.value(0);
    r.skipPadding();
    if (r.at !== data.length) throw new Refused("bytes after the value");
    return { values: r.values, heap: r.heap };
  } catch (err) {
    if (err instanceof Refused) return err.message;
    throw err;
  }
}

/** Costs, in estimated bytes of host heap. */
const COST = {
  /** A number that is not a small integer (a HeapNumber), a boxed primitive. */
  number: 16,
  string: 24,
  object: 64,
  /** Per property or collection entry. */
  entry: 32,
  /** Per element slot of a dense array. */
  slot: 8,
  buffer: 96,
} as const;

class Reader {
  at = 0;
  values = 0;
  heap = 0;
  constructor(private readonly d: Uint8Array) {}

  byte(): number {
    if (this.at >= this.d.length) throw new Refused("truncated");
    return this.d[this.at++]!;
  }

  /**
   * A 32-bit varint, as V8 reads every one here. One that does not fit
   * (V8 would keep its low bits and read on) is refused: the walk must
   * read exactly what V8 reads.
   */
  varint(): number {
    let out = 0;
    let scale = 1;
    for (let i = 0; i < 5; i++) {
      const b = this.byte();
      out += (b & 0x7f) * scale;
      if ((b & 0x80) === 0) {
        if (out > 0xffffffff) break;
        return out;
      }
      scale *= 128;
    }
    throw new Refused("bad varint");
  }

  skip(n: number): void {
    if (n > this.d.length - this.at) throw new Refused("truncated");
    this.at += n;
  }

  skipPadding(): void {
    while (this.at < this.d.length && this.d[this.at] === 0) this.at++;
  }

  /** The next tag, padding skipped, without consuming it. */
  peek(): number {
    this.skipPadding();
    if (this.at >= this.d.length) throw new Refused("truncated");
    return this.d[this.at]!;
  }

  charge(heap: number, weight: number = WEIGHT.plain): void {
    this.values += weight;
    this.heap += heap;
    if (this.values > MAX_FRAME_VALUES) throw new Refused(`more than ${MAX_FRAME_VALUES} values`);
    if (this.heap > MAX_FRAME_HEAP)
      throw new Refused(`more than ${MAX_FRAME_HEAP / 2 ** 20} MiB of values`);
  }

  /** One value, as `ReadObject` reads it (a buffer and the view after it count as one). */
  value(depth: number): void {
    if (depth > MAX_DEPTH) throw new Refused("nested too deeply");
    const wasBuffer = this.valueInternal(depth);
    if (wasBuffer && this.at < this.d.length && this.peek() === 0x56 /* V */) {
      this.at++;
      this.byte(); // subtag
      this.varint(); // byte offset
      this.varint(); // byte length
      this.varint(); // flags (format ≥ 14)
      this.charge(COST.object, WEIGHT.object);
    }
  }

  /** @returns true if the value was an ArrayBuffer (a view may follow it). */
  valueInternal(depth: number): boolean {
    this.skipPadding();
    const tag = this.byte();
    switch (tag) {
      case 0x3f /* ? verify count */:
        this.varint();
        this.value(depth);
        return false;
      case 0x5f /* _ */:
      case 0x30 /* 0 */:
      case 0x54 /* T */:
      case 0x46 /* F */:
        this.charge(0);
        return false;
      case 0x49 /* I */:
      case 0x55 /* U */:
        this.varint();
        this.charge(COST.number);
        return false;
      case 0x4e /* N */:
        this.skip(8);
        this.charge(COST.number);
        return false;
      case 0x5a /* Z */:
        this.bigint();
        return false;
      case 0x53 /* S utf-8 */:
      case 0x22 /* " one-byte */:
      case 0x63 /* c two-byte */:
        {
          const n = this.varint();
          this.skip(n);
          // A UTF-8 string may become two bytes per character.
          this.charge(COST.string + (tag === 0x53 ? 2 * n : n));
          return false;
        }
      case 0x5e /* ^ reference */:
        this.varint();
        this.charge(0);
        return false;
      case 0x6f /* o object */:
        this.charge(COST.object, WEIGHT.object);
        this.properties(0x7b /* { */, depth);
        this.varint();
        return false;
      case 0x61 /* a sparse array */:
        this.varint();
        this.charge(COST.object, WEIGHT.object);
        this.properties(0x40 /* @ */, depth);
        this.varint();
        this.varint();
        return false;
      case 0x41 /* A dense array */:
        {
          const length = this.varint();
          // V8 refuses a length beyond the bytes left (each element is one at least).
          if (length > this.d.length - this.at) throw new Refused("array longer than its bytes");
          this.charge(COST.object + length * COST.slot, WEIGHT.object);
          for (let i = 0; i < length; i++) {
            if (this.peek() === 0x2d /* - hole */) this.at++;
            else this.value(depth + 1);
          }
          this.properties(0x24 /* $ */, depth);
          this.varint();
          this.varint();
          return false;
        }
      case 0x44 /* D date */:
      case 0x6e /* n number object */:
        this.skip(8);
        this.charge(COST.object, WEIGHT.object);
        return false;
      case 0x79 /* y */:
      case 0x78 /* x */:
        this.charge(COST.object, WEIGHT.object);
        return false;
      case 0x7a /* z bigint object */:
        this.bigint();
        this.charge(COST.object, WEIGHT.object);
        return false;
      case 0x73 /* s string object */:
        this.value(depth + 1);
        this.charge(COST.object, WEIGHT.object);
        return false;
      case 0x52 /* R regexp */:
        this.value(depth + 1);
        this.varint();
        this.charge(COST.object * 4, WEIGHT.collection);
        return false;
      case 0x3b /* ; map */:
        this.charge(COST.object * 2, WEIGHT.collection);
        this.entries(0x3a /* : */, depth);
        this.varint();
        return false;
      case 0x27 /* ' set */:
        this.charge(COST.object * 2, WEIGHT.collection);
        this.entries(0x2c /* , */, depth);
        this.varint();
        return false;
      case 0x42 /* B array buffer */:
        {
          const n = this.varint();
          this.skip(n);
          this.charge(COST.buffer + n, WEIGHT.object);
          return true;
        }
      case 0x72 /* r error */:
        this.error(depth);
        return false;
      case 0x5c /* \ host object: Node's typed arrays and Buffers */:
        {
          this.varint(); // type index
          const n = this.varint();
          this.skip(n);
          this.charge(COST.buffer + n, WEIGHT.object);
          return false;
        }
      default:
        throw new Refused(`tag 0x${tag.toString(16)}`);
    }
  }

  bigint(): void {
    const bitfield = this.varint();
    const bytes = Math.floor(bitfield / 2);
    this.skip(bytes);
    this.charge(COST.number + bytes);
  }

  /** Key/value pairs until `end` (objects and arrays). */
  properties(end: number, depth: number): void {
    while (this.peek() !== end) {
      this.value(depth + 1);
      this.value(depth + 1);
      this.heap += COST.entry;
    }
    this.at++;
  }

  /** Values until `end` (maps and sets). */
  entries(end: number, depth: number): void {
    while (this.peek() !== end) {
      this.value(depth + 1);
      this.heap += COST.entry;
    }
    this.at++;
  }

  error(depth: number): void {
    this.charge(COST.object * 2, WEIGHT.collection);
    for (;;) {
      const sub = this.byte();
      if (sub === 0x2e /* . */) return;
      if (sub === 0x6d /* m */ || sub === 0x73 /* s */ || sub === 0x63 /* c */)
        this.value(depth + 1);
      else if (!"ERFSTU".includes(String.fromCharCode(sub)))
        throw new Refused(`error subtag 0x${sub.toString(16)}`);
    }
  }
}
