/**
 * The price of a frame from an agent process, read before the host
 * deserializes it (found by an adversarial review: one 66 MB frame of empty
 * Maps exhausted the host's heap). Every value the runtime can send is
 * read to its end and priced; bombs, tags the runtime never writes, other
 * format versions and bytes V8 would read differently are refused without
 * being deserialized; and whatever the walk accepts, V8 reads without harm.
 */
import { deserialize, serialize } from "node:v8";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { checkFrame, MAX_FRAME_VALUES } from "../src/port/frame-check.js";

/** Values as structured clone has them (what a worker may send). */
const cloneable = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: "small" },
    fc.constantFrom(null, undefined, true, false, 0, -0, Number.NaN, 2 ** 40, -1.5),
    fc.integer(),
    fc.double(),
    fc.bigInt(),
    fc.string({ unit: "grapheme" }),
    fc.string({ unit: "binary" }),
    fc.date({ noInvalidDate: true }),
    fc.uint8Array(),
    fc.float64Array(),
    fc.int16Array(),
    fc.constant(Buffer.from("buf")),
    fc.constant(new ArrayBuffer(7)),
    fc.constant(/x+y/gi),
    fc.constant(new TypeError("boom")),
    fc.array(tie("value"), { maxLength: 5 }),
    fc.sparseArray(tie("value"), { maxLength: 6 }),
    fc.dictionary(fc.string(), tie("value"), { maxKeys: 5 }),
    fc.array(fc.tuple(tie("value"), tie("value")), { maxLength: 3 }).map((e) => new Map(e)),
    fc.array(tie("value"), { maxLength: 4 }).map((e) => new Set(e)),
  ),
})).value;

describe("a frame's price", () => {
  it("reads every value the runtime can send, to its end", () => {
    fc.assert(
      fc.property(cloneable, (v) => {
        const cost = checkFrame(serialize(v));
        expect(cost, JSON.stringify(serialize(v).toString("hex"))).toMatchObject({
          values: expect.any(Number),
          heap: expect.any(Number),
        });
      }),
      { numRuns: 2000 },
    );
  });

  it("shared references and cycles are read too", () => {
    const o: Record<string, unknown> = { a: [1, 2] };
    o.self = o;
    o.again = o.a;
    expect(checkFrame(serialize(o))).toMatchObject({ values: expect.any(Number) });
  });

  it("refuses a bomb without deserializing it: many empty Maps, or millions of values", () => {
    // 3 bytes per empty Map: ~74 bytes of heap each once deserialized.
    const maps = 2_100_000;
    const body = Buffer.alloc(2 + 1 + 5 + maps * 3 + 3);
    let at = body.writeUInt8(0xff, 0);
    at = body.writeUInt8(0x0f, at);
    at = body.writeUInt8(0x41, at); // A: dense array
    for (let n = maps; ; n >>>= 7) {
      // its length as a varint
      if (n < 0x80) {
        at = body.writeUInt8(n, at);
        break;
      }
      at = body.writeUInt8((n & 0x7f) | 0x80, at);
    }
    for (let i = 0; i < maps; i++) at += body.write(";:\x00", at, "latin1");
    // ~74 bytes of heap and ~0.75 µs each: a Map weighs 8 values.
    expect(checkFrame(body.subarray(0, at))).toBe(`more than ${MAX_FRAME_VALUES} values`);
    // Cheap values, but each one is time for the host.
    const many = serialize(new Array(MAX_FRAME_VALUES + 1).fill(null));
    expect(checkFrame(many)).toBe(`more than ${MAX_FRAME_VALUES} values`);
    // Few values, much heap: a dense array of 40 million holes is 8 bytes a slot.
    const holes = Buffer.alloc(2 + 1 + 4 + 40_000_000 + 3, 0x2d);
    holes.set([0xff, 0x0f, 0x41, 0x80, 0xb4, 0x89, 0x13], 0); // A, varint 40 000 000
    holes.set([0x24, 0x00, 0x00], holes.length - 3); // $, 0 properties, length (unchecked here)
    expect(checkFrame(holes)).toBe("more than 256 MiB of values");
  });

  it("refuses what V8 might read otherwise, or the runtime never writes", () => {
    const v = (hex: string) => checkFrame(Buffer.from(hex, "hex"));
    expect({
      noHeader: v("6f7b00"),
      version13: v("ff0d5f"),
      trailing: v("ff0f5f5f"),
      truncated: v("ff0f2205"),
      bigVarint: v("ff0f22ffffffff7f"),
      sharedBuffer: v("ff0f7500"),
      transfer: v("ff0f7400"),
      resizable: v("ff0f7e0001"),
      wasm: v("ff0f7700"),
      hole: v("ff0f2d"),
      errorSubtag: v("ff0f727a2e"),
    }).toMatchInlineSnapshot(`
      {
        "bigVarint": "bad varint",
        "errorSubtag": "error subtag 0x7a",
        "hole": "tag 0x2d",
        "noHeader": "no serialization header",
        "resizable": "tag 0x7e",
        "sharedBuffer": "tag 0x75",
        "trailing": "bytes after the value",
        "transfer": "tag 0x74",
        "truncated": "truncated",
        "version13": "format version 13",
        "wasm": "tag 0x77",
      }
    `);
  });

  it("refuses nesting deeper than it reads", () => {
    let v: unknown = 1;
    for (let i = 0; i < 3000; i++) v = [v];
    expect(checkFrame(serialize(v))).toBe("nested too deeply");
  });

  it("whatever it accepts, V8 reads without harm (mutated frames)", () => {
    fc.assert(
      fc.property(
        cloneable,
        fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { maxLength: 4 }),
        (value, edits) => {
          const bytes = Buffer.from(serialize(value));
          for (const [at, b] of edits)
            if (bytes.length > 2) bytes[2 + (at % (bytes.length - 2))] = b;
          const cost = checkFrame(bytes);
          if (typeof cost === "string") return;
          try {
            deserialize(bytes);
          } catch {
            // refused by V8 itself: the host stops the agent
          }
          expect(cost.values).toBeLessThanOrEqual(MAX_FRAME_VALUES);
        },
      ),
      { numRuns: 3000 },
    );
  });
});
