/**
 * What an agent process sends its host is plain data, read by the host's
 * own bounded decoder — never by `v8.deserialize`, whose format lets a few
 * bytes cost the host gigabytes or minutes (found by two adversarial
 * reviews: empty Maps, sparse array lengths, RegExps compiled on arrival,
 * colliding numeric Map keys, a checker reading out of step with V8).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  CodecError,
  decode,
  encode,
  MAX_DECODED_HEAP,
  MAX_DECODED_VALUES,
  MAX_DEPTH,
} from "../src/port/plain-codec.js";

/** Plain values as a worker sends them. */
const plain = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: "small" },
    fc.constantFrom(null, undefined, true, false, 0, -0, Number.NaN, Infinity, 2 ** 40, -1.5),
    fc.integer(),
    fc.double(),
    fc.bigInt(),
    fc.string({ unit: "grapheme" }),
    fc.string({ unit: "binary" }),
    fc.date(),
    fc.uint8Array(),
    fc.float64Array(),
    fc.int16Array(),
    fc.bigInt64Array(),
    fc.array(tie("value"), { maxLength: 5 }),
    fc.sparseArray(tie("value"), { maxLength: 6 }),
    fc.dictionary(fc.string(), tie("value"), { maxKeys: 5, noNullPrototype: true }),
  ),
})).value;

const roundTrip = (v: unknown) => decode(encode(v)).value;

describe("the plain-data codec of an agent process", () => {
  it("carries every plain value exactly (strings with lone surrogates, holes, -0, NaN)", () => {
    fc.assert(
      fc.property(plain, (v) => {
        expect(roundTrip(v)).toStrictEqual(v);
      }),
      { numRuns: 3000 },
    );
  });

  it("keeps Buffers as Uint8Arrays, ArrayBuffers, Errors, and __proto__ as an own key", () => {
    const out = roundTrip({
      buf: Buffer.from("ab"),
      ab: new Uint8Array([1, 2, 3]).buffer,
      err: new RangeError("too far"),
      custom: Object.assign(new Error("x"), { name: "CustomError" }),
      ["__proto__"]: { polluted: true },
    }) as Record<string, unknown>;
    expect(out.buf).toStrictEqual(new Uint8Array([97, 98]));
    expect(new Uint8Array(out.ab as ArrayBuffer)).toStrictEqual(new Uint8Array([1, 2, 3]));
    expect(out.err).toBeInstanceOf(RangeError);
    expect((out.err as Error).message).toBe("too far");
    // As structured clone: an unknown name is an Error (its stack says what it was).
    expect((out.custom as Error).name).toBe("Error");
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(Object.hasOwn(out, "__proto__")).toBe(true);
    expect(({} as { polluted?: boolean }).polluted).toBeUndefined();
  });

  it("rebuilds an Error by a name it knows, any other as an Error, never from Object.prototype", () => {
    const sent = ["constructor", "toString", "__proto__", "CustomError", "RangeError"].map(
      (name) => {
        const e = new Error("m");
        e.name = name;
        e.stack = `${name}: m\n    at the agent`;
        return e;
      },
    );
    const out = roundTrip(sent) as Error[];
    // Found by an adversarial review: "constructor" made a String wrapper.
    expect(out.map((e) => [e instanceof Error, e.constructor.name, e.message, e.stack])).toEqual([
      [true, "Error", "m", "constructor: m\n    at the agent"],
      [true, "Error", "m", "toString: m\n    at the agent"],
      [true, "Error", "m", "__proto__: m\n    at the agent"],
      [true, "Error", "m", "CustomError: m\n    at the agent"],
      [true, "RangeError", "m", "RangeError: m\n    at the agent"],
    ]);
  });

  it("refuses to send what it does not carry, as postMessage refuses what it cannot clone", () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    const refused = [new Map(), new Set(), /x/, () => 1, Symbol("s"), cyclic].map((v) => {
      try {
        encode({ v });
        return "sent";
      } catch (e) {
        return `${(e as Error).name}: ${(e as Error).message}`;
      }
    });
    expect(refused).toMatchInlineSnapshot(`
      [
        "DataCloneError: A Map could not be sent from an agent process: send a plain object or an array instead",
        "DataCloneError: A Set could not be sent from an agent process: send a plain object or an array instead",
        "DataCloneError: A RegExp could not be sent from an agent process: send a plain object or an array instead",
        "DataCloneError: A function could not be sent from an agent process",
        "DataCloneError: A symbol could not be sent from an agent process",
        "DataCloneError: A value that contains itself could not be sent from an agent process",
      ]
    `);
  });

  it("refuses a message over its budgets, or malformed, without building it", () => {
    const refusal = (bytes: Uint8Array) => {
      try {
        decode(bytes);
        return "read";
      } catch (e) {
        expect(e).toBeInstanceOf(CodecError);
        return (e as Error).message;
      }
    };
    // Two million and one nulls.
    const nulls = Buffer.concat([Buffer.from([11, 0x81, 0x89, 0x7a]), Buffer.alloc(2_000_001, 1)]);
    // Empty objects: 2 bytes each, weighing 3.
    const objects = Buffer.concat([
      Buffer.from([11, 0xe0, 0xdc, 0x2a]), // 700 000
      Buffer.from(new Uint8Array(2 * 700_000).map((_, i) => (i % 2 === 0 ? 12 : 0))),
    ]);
    // Few values, much heap: 34 million holes are 8 bytes a slot.
    const holes = Buffer.concat([
      Buffer.from([11, 0x80, 0x99, 0x9b, 0x10]),
      Buffer.alloc(34_000_000, 15),
    ]);
    let deep = encode(1);
    for (let i = 0; i <= MAX_DEPTH; i++) deep = Buffer.concat([Buffer.from([11, 1]), deep]);
    expect({
      nulls: refusal(nulls),
      objects: refusal(objects),
      holes: refusal(holes),
      // An array claiming more elements than there are bytes left.
      longArray: refusal(Buffer.from([11, 0xff, 0xff, 0x03, 1])),
      deep: refusal(deep),
      trailing: refusal(Buffer.from([1, 1])),
      unknown: refusal(Buffer.from([99])),
      truncated: refusal(Buffer.from([6, 5, 97])),
      badLength: refusal(Buffer.from([8, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 1])),
    }).toMatchInlineSnapshot(`
      {
        "badLength": "bad length",
        "deep": "nested too deeply",
        "holes": "more than 256 MiB of values",
        "longArray": "length beyond the message",
        "nulls": "more than 1000000 values",
        "objects": "more than 1000000 values",
        "trailing": "bytes after the value",
        "truncated": "length beyond the message",
        "unknown": "unknown tag 99",
      }
    `);
    expect(MAX_DECODED_VALUES).toBe(1_000_000);
    expect(MAX_DECODED_HEAP).toBe(256 * 1024 * 1024);
  });

  it("random and mutated bytes: only a CodecError or a value, within the budgets", () => {
    fc.assert(
      fc.property(
        plain,
        fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { maxLength: 4 }),
        (value, edits) => {
          const bytes = Buffer.from(encode(value));
          for (const [at, b] of edits) if (bytes.length > 0) bytes[at % bytes.length] = b;
          try {
            const { values } = decode(bytes);
            expect(values).toBeLessThanOrEqual(MAX_DECODED_VALUES);
          } catch (e) {
            expect(e).toBeInstanceOf(CodecError);
          }
        },
      ),
      { numRuns: 5000 },
    );
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 200 }), (bytes) => {
        try {
          decode(bytes);
        } catch (e) {
          expect(e).toBeInstanceOf(CodecError);
        }
      }),
      { numRuns: 5000 },
    );
  });
});
