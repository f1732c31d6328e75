/**
 * Issue 10, finding 7: edit diffs take bounded time and stay valid unified
 * diffs, whether jsdiff finds the minimal diff or the single-hunk fallback
 * is used.
 */
import { applyPatch, parsePatch } from "diff";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { diffTexts, replaceMiddle } from "../../src/sandbox/unified-diff.js";

/** Generous bound for one diff (the ~50 ms event-loop bound, with room for a loaded machine). */
const BOUND_MS = 250;

const text = fc
  .array(fc.constantFrom("a", "b", "c", "", "a b", "\r"), { maxLength: 30 })
  .chain((lines) =>
    fc.boolean().map((finalNewline) => lines.join("\n") + (finalNewline ? "\n" : "")),
  );

/** CPU time of this process so far, in ms. */
function cpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

describe("edit diffs", () => {
  it("the single-hunk fallback is a valid diff of any change (fast-check)", () => {
    fc.assert(
      fc.property(text, text, (before, after) => {
        fc.pre(before !== after);
        const diff = replaceMiddle("/f.txt", before, after);
        expect(parsePatch(diff)).toHaveLength(1);
        expect(applyPatch(before, diff)).toBe(after);
      }),
      { numRuns: 3000 },
    );
  });

  it("diffTexts is valid and minimal-looking for small changes", () => {
    const before = "a\nb\nc\nd\ne\nf\ng\nh\n";
    const after = "a\nb\nc\nd\nE\nf\ng\nh\n";
    const diff = diffTexts("/f.txt", before, after);
    expect(diff).toBe("--- /f.txt\n+++ /f.txt\n@@ -2,7 +2,7 @@\n b\n c\n d\n-e\n+E\n f\n g\n h\n");
    expect(applyPatch(before, diff)).toBe(after);
  });

  it.each([
    [2_000, "every line replaced"],
    [16_000, "every line replaced"],
    [64_000, "every line replaced"],
  ])("%i lines, %s: bounded time, valid diff", (n) => {
    const before = Array.from({ length: n }, (_, i) => `old ${i}`).join("\n");
    const after = Array.from({ length: n }, (_, i) => `new ${i * 3}`).join("\n");
    const t0 = performance.now();
    const c0 = cpuMs();
    const diff = diffTexts("/big.txt", before, after);
    // Wall time, but no more than the CPU time spent: a loaded machine can
    // keep the process waiting for a core without the diff doing any work.
    const ms = Math.min(performance.now() - t0, cpuMs() - c0);
    expect(ms).toBeLessThan(BOUND_MS);
    expect(applyPatch(before, diff)).toBe(after);
  });

  it("interleaved changes in 16k lines: bounded time, valid diff", () => {
    const before = Array.from({ length: 16_000 }, (_, i) => `line ${i}`);
    const after = before.map((l, i) => (i % 3 === 0 ? `${l} changed` : l));
    const t0 = performance.now();
    const c0 = cpuMs();
    const diff = diffTexts("/big.txt", before.join("\n"), after.join("\n"));
    expect(Math.min(performance.now() - t0, cpuMs() - c0)).toBeLessThan(BOUND_MS);
    expect(applyPatch(before.join("\n"), diff)).toBe(after.join("\n"));
  });
});
