/**
 * Review finding: one editFile with 5000 small edits on a 60k-line file held
 * the host's event loop for seconds (each edit scans and rebuilds the whole
 * text). The work is now bounded: more edits × characters than the budget
 * are refused, before anything is applied, with a message saying how to
 * split them. Lag is the largest gap between ticks of a timer loop.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createSandbox, EditFailedError, type Sandbox } from "../../src/index.js";
import { EDIT_WORK_BUDGET } from "../../src/sandbox/io-edit.js";
import { LAG_BOUND_MS, withGap } from "../helpers/event-loop.js";
import { makeTempDir, removeDir, writeTree } from "../helpers/tree.js";

let root: string;
let sb: Sandbox;
beforeEach(() => {
  root = makeTempDir();
  writeTree(root, {});
  sb = createSandbox({ root });
});
afterEach(() => removeDir(root));

/** The review's file: `lines` lines, every odd one 'LINE i'. */
function bigFile(lines: number): string {
  const text = Array.from({ length: lines }, (_, i) => (i % 2 ? "LINE " : "line ") + i).join("\n");
  writeFileSync(join(root, "big.txt"), text);
  return text;
}

const smallEdits = (n: number) =>
  Array.from({ length: n }, (_, i) => ({
    oldText: `LINE ${2 * i + 1}\n`,
    newText: `x${i}\n`,
  }));

describe("editFile work is bounded", () => {
  it.each([
    [5000, 60_000],
    [10_000, 200_000],
  ])("%i edits on %i lines are refused quickly, nothing written", async (n, lines) => {
    const text = bigFile(lines);
    const { value, gapMs } = await withGap(() => sb.editFile("/big.txt", smallEdits(n)));
    expect(value).toBeInstanceOf(EditFailedError);
    const msg = (value as Error).message;
    expect(msg).toContain(`${n.toLocaleString("en-US")} edits`);
    expect(msg).toContain("Split the edits into several editFile calls of at most");
    expect(msg).toContain(EDIT_WORK_BUDGET.toLocaleString("en-US"));
    expect(readFileSync(join(root, "big.txt"), "utf8")).toBe(text);
    expect(gapMs).toBeLessThan(LAG_BOUND_MS);
  });

  it("as many edits as the message allows apply, within the lag bound", async () => {
    const text = bigFile(60_000);
    const refused = await sb.editFile("/big.txt", smallEdits(5000)).catch((e: Error) => e);
    const perCall = Number(
      /at most ([\d,]+) edits each/.exec(String(refused))?.[1]?.replaceAll(",", ""),
    );
    expect(perCall).toBeGreaterThan(10);
    const { value, gapMs } = await withGap(() => sb.editFile("/big.txt", smallEdits(perCall)));
    expect(value).toHaveProperty("diff");
    let expected = text;
    for (const e of smallEdits(perCall)) expected = expected.replace(e.oldText, e.newText);
    expect(readFileSync(join(root, "big.txt"), "utf8")).toBe(expected);
    expect(gapMs).toBeLessThan(LAG_BOUND_MS);
  });

  it("edits that grow the text are stopped once the work adds up", async () => {
    writeFileSync(join(root, "grow.txt"), "M0");
    const pad = "z".repeat(500_000);
    const edits = Array.from({ length: 40 }, (_, i) => ({
      oldText: `M${i}`,
      newText: `M${i + 1}${pad}`,
    }));
    const { value, gapMs } = await withGap(() => sb.editFile("/grow.txt", edits));
    expect(value).toBeInstanceOf(EditFailedError);
    expect((value as Error).message).toContain("Nothing was changed");
    expect(readFileSync(join(root, "grow.txt"), "utf8")).toBe("M0");
    expect(gapMs).toBeLessThan(LAG_BOUND_MS);
  });

  it("a file too large for any edit says to use writeFile", async () => {
    writeFileSync(join(root, "huge.txt"), "a".repeat(EDIT_WORK_BUDGET + 10));
    const err = await sb.editFile("/huge.txt", [{ oldText: "b", newText: "c" }]).catch((e) => e);
    expect(err).toBeInstanceOf(EditFailedError);
    expect(err.message).toContain("too large for editFile; write the whole file with writeFile");
  });

  it("keeps the sequential meaning: an edit can match text a previous edit wrote", async () => {
    writeFileSync(join(root, "seq.txt"), "alpha beta");
    await sb.editFile("/seq.txt", [
      { oldText: "alpha", newText: "gamma" },
      { oldText: "gamma beta", newText: "done" },
    ]);
    expect(readFileSync(join(root, "seq.txt"), "utf8")).toBe("done");
    const twice = await sb
      .editFile("/seq.txt", [
        { oldText: "done", newText: "x x" },
        { oldText: "x", newText: "y" },
      ])
      .catch((e) => e);
    expect(twice).toBeInstanceOf(EditFailedError);
    expect(twice.message).toContain("found 2 times");
    expect(readFileSync(join(root, "seq.txt"), "utf8")).toBe("done");
  });
});
