/** Tolerant edit matching: exact, line endings, whitespace; never ambiguous. */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { EditFailedError } from "../../src/index.js";
import { resolveEdits } from "../../src/tools/edit-match.js";

/** Applies exact edits as the sandbox does: each oldText must occur exactly once. */
function applyExact(text: string, edits: { oldText: string; newText: string }[]): string {
  let out = text;
  for (const e of edits) {
    const first = out.indexOf(e.oldText);
    expect(first).toBeGreaterThanOrEqual(0);
    expect(out.indexOf(e.oldText, first + 1)).toBe(-1);
    out = out.slice(0, first) + e.newText + out.slice(first + e.oldText.length);
  }
  return out;
}

function failure(fn: () => unknown): EditFailedError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(EditFailedError);
    return err as EditFailedError;
  }
  throw new Error("expected an EditFailedError");
}

describe("resolveEdits", () => {
  it("passes an exact unique match through unchanged", () => {
    const r = resolveEdits("/f", "one\ntwo\n", [{ oldText: "two", newText: "2" }]);
    expect(r).toEqual({ edits: [{ oldText: "two", newText: "2" }], kinds: ["exact"] });
  });

  it("matches LF text in a CRLF file and writes CRLF", () => {
    const text = "a\r\nb\r\nc\r\n";
    const r = resolveEdits("/f", text, [{ oldText: "a\nb\n", newText: "x\ny\n" }]);
    expect(r.kinds).toEqual(["line_endings"]);
    expect(r.edits).toEqual([{ oldText: "a\r\nb\r\n", newText: "x\r\ny\r\n" }]);
    expect(applyExact(text, r.edits)).toBe("x\r\ny\r\nc\r\n");
  });

  it("matches CRLF text in an LF file, and keeps a mixed file's own breaks", () => {
    const lf = resolveEdits("/f", "a\nb\n", [{ oldText: "a\r\nb", newText: "z" }]);
    expect(lf.edits).toEqual([{ oldText: "a\nb", newText: "z" }]);
    const mixed = resolveEdits("/f", "a\r\nb\nc", [{ oldText: "a\nb\nc", newText: "q\nr" }]);
    expect(mixed.edits).toEqual([{ oldText: "a\r\nb\nc", newText: "q\nr" }]);
  });

  it("matches ignoring indentation and re-indents the new lines", () => {
    const text = "\tif (a) {\n\t\tgo();\n\t}\n";
    const r = resolveEdits("/f", text, [
      { oldText: "if (a) {\n    go();\n}", newText: "if (b) {\n    stop();\n}" },
    ]);
    expect(r.kinds).toEqual(["whitespace"]);
    expect(applyExact(text, r.edits)).toBe("\tif (b) {\n\t    stop();\n\t}\n");
  });

  it("applies edits in order, each to the previous result", () => {
    const text = "x = 1\ny = 2\n";
    const r = resolveEdits("/f", text, [
      { oldText: "x = 1", newText: "x = 3" },
      { oldText: "x = 3\ny", newText: "x = 4\nz" },
    ]);
    expect(applyExact(text, r.edits)).toBe("x = 4\nz = 2\n");
  });

  it("refuses empty, missing and ambiguous text at every stage, saying how often it was found", () => {
    expect(
      failure(() => resolveEdits("/f", "a", [{ oldText: "", newText: "b" }])).message,
    ).toContain("found 2 times");
    const missing = failure(() => resolveEdits("/f", "abc", [{ oldText: "zzz", newText: "" }]));
    expect(missing.message).toContain("Edit #1 on '/f' failed: oldText was not found.");
    const exact = failure(() => resolveEdits("/f", "ab ab ab", [{ oldText: "ab", newText: "" }]));
    expect(exact.message).toContain("found 3 times");
    const eol = failure(() =>
      resolveEdits("/f", "a\r\nb\na\r\nb", [{ oldText: "a\nb", newText: "" }]),
    );
    expect(eol.message).toContain("found 2 times");
    const ws = failure(() => resolveEdits("/f", "  k\n\tk\n", [{ oldText: "k ", newText: "" }]));
    expect(ws.message).toContain("found 2 times");
    const second = failure(() =>
      resolveEdits("/f", "a b", [
        { oldText: "a", newText: "b" },
        { oldText: "b", newText: "c" },
      ]),
    );
    expect(second.message).toContain("Edit #2 on '/f' failed: oldText was found 2 times");
  });

  it("always hands the sandbox edits whose oldText occurs exactly once (property)", () => {
    const piece = fc.constantFrom("a", "b", " ", "\t", "\n", "\r\n", "ab");
    const text = fc.array(piece, { maxLength: 30 }).map((p) => p.join(""));
    fc.assert(
      fc.property(
        text,
        fc.array(fc.tuple(text, text), { minLength: 1, maxLength: 3 }),
        (t, raw) => {
          const edits = raw.map(([oldText, newText]) => ({ oldText, newText }));
          let resolved: ReturnType<typeof resolveEdits>;
          try {
            resolved = resolveEdits("/f", t, edits);
          } catch (err) {
            expect(err).toBeInstanceOf(EditFailedError);
            return;
          }
          applyExact(t, resolved.edits);
        },
      ),
      { numRuns: 2000 },
    );
  });
});
