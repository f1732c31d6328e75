/**
 * Issue 26, finding 1: every edit that reports success is in the file.
 * Edits of one file are ordered (in-process calls, the tools, the AI SDK's
 * parallel tool calls of one step), writes, moves and removes of that file do
 * not interleave with an edit's read-modify-rename, and a file changed by
 * someone else between an edit's read and its rename is re-read (the edit
 * re-applied) or the edit is refused with `edit_failed`.
 */
import { existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { generateText, stepCountIs } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createSandboxTools } from "../../src/ai-sdk/index.js";
import { createSandbox, createToolDefinitions, type Sandbox } from "../../src/index.js";
import { setRaceHookForTests } from "../../src/sandbox/fd-check.js";
import { makeTempDir, removeDir } from "../helpers/tree.js";

let base: string;
let sb: Sandbox;

/** A file of `n` numbered slot lines; each edit turns one slot into its marker. */
function slots(n: number): string {
  return `${Array.from({ length: n }, (_, i) => `slot ${i} open`).join("\n")}\n`;
}

beforeEach(() => {
  base = makeTempDir();
  writeFileSync(join(base, "f.txt"), slots(10));
  sb = createSandbox({ root: base });
});
afterEach(() => {
  setRaceHookForTests(undefined);
  removeDir(base);
});

const read = (name = "f.txt") => readFileSync(join(base, name), "utf8");

describe("edits of one file are ordered", () => {
  it("keeps all ten of ten parallel editFile calls", async () => {
    const done = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        sb.editFile("/f.txt", [{ oldText: `slot ${i} open`, newText: `slot ${i} DONE` }]),
      ),
    );
    expect(done).toHaveLength(10);
    const text = read();
    for (let i = 0; i < 10; i++) expect(text).toContain(`slot ${i} DONE`);
  });

  it("keeps all of five parallel edit_file tool calls, tolerant matches included", async () => {
    const tools = await createToolDefinitions(sb);
    const edit = tools.find((t) => t.name === "edit_file");
    if (!edit) throw new Error("no edit_file tool");
    const out = await Promise.all(
      Array.from({ length: 5 }, (_, i) =>
        edit.execute({
          path: "/f.txt",
          // Odd ones match only ignoring surrounding whitespace.
          edits: [
            {
              oldText: i % 2 ? `   slot ${i} open  ` : `slot ${i} open`,
              newText: `slot ${i} DONE`,
            },
          ],
        }),
      ),
    );
    for (const o of out) expect(o).toMatch(/^Edited '\/f\.txt':/);
    const text = read();
    for (let i = 0; i < 5; i++) expect(text).toContain(`slot ${i} DONE`);
  });

  it("keeps all five edit_file calls the AI SDK runs in parallel in one step", async () => {
    let turn = 0;
    const model = new MockLanguageModelV3({
      doGenerate: async () => {
        turn++;
        const usage = {
          inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
          outputTokens: { total: 1, text: 1, reasoning: undefined },
        };
        if (turn > 1)
          return {
            content: [{ type: "text", text: "done" }],
            finishReason: { unified: "stop", raw: undefined },
            usage,
            warnings: [],
          };
        return {
          content: Array.from({ length: 5 }, (_, i) => ({
            type: "tool-call" as const,
            toolCallId: `c${i}`,
            toolName: "edit_file",
            input: JSON.stringify({
              path: "/f.txt",
              edits: [{ oldText: `slot ${i} open`, newText: `slot ${i} DONE` }],
            }),
          })),
          finishReason: { unified: "tool-calls", raw: undefined },
          usage,
          warnings: [],
        };
      },
    });
    const result = await generateText({
      model,
      tools: await createSandboxTools(sb),
      prompt: "edit",
      stopWhen: stepCountIs(3),
    });
    const outputs = result.steps[0]?.toolResults.map((r) => String(r.output)) ?? [];
    expect(outputs).toHaveLength(5);
    for (const o of outputs) expect(o).toMatch(/^Edited '\/f\.txt':/);
    const text = read();
    for (let i = 0; i < 5; i++) expect(text).toContain(`slot ${i} DONE`);
  });

  it("orders a writeFile and an edit of the same file: the write is never lost", async () => {
    for (let round = 0; round < 20; round++) {
      writeFileSync(join(base, "f.txt"), slots(3));
      const written = `${slots(3)}written ${round}\n`;
      const [w, e] = await Promise.allSettled([
        sb.writeFile("/f.txt", written),
        sb.editFile("/f.txt", [{ oldText: "slot 1 open", newText: "slot 1 DONE" }]),
      ]);
      expect(w.status).toBe("fulfilled");
      expect(e.status).toBe("fulfilled");
      // Either order is fine; losing either one is not.
      expect(read()).toBe(written.replace("slot 1 open", "slot 1 DONE"));
    }
  });

  it("orders a move and an edit of the same file: the edit is in the moved file, nothing comes back", async () => {
    for (let round = 0; round < 20; round++) {
      writeFileSync(join(base, "f.txt"), slots(3));
      const [m, e] = await Promise.allSettled([
        sb.move("/f.txt", `/g${round}.txt`),
        sb.editFile("/f.txt", [{ oldText: "slot 1 open", newText: "slot 1 DONE" }]),
      ]);
      expect(m.status).toBe("fulfilled");
      expect(existsSync(join(base, "f.txt"))).toBe(false);
      if (e.status === "fulfilled") expect(read(`g${round}.txt`)).toContain("slot 1 DONE");
      else expect((e.reason as { code: string }).code).toBe("not_found");
    }
  });

  it("orders a remove and an edit of the same file: a removed file stays removed", async () => {
    for (let round = 0; round < 20; round++) {
      writeFileSync(join(base, "f.txt"), slots(3));
      const [e, r] = await Promise.allSettled([
        sb.editFile("/f.txt", [{ oldText: "slot 1 open", newText: "slot 1 DONE" }]),
        sb.remove("/f.txt"),
      ]);
      expect(r.status).toBe("fulfilled");
      expect(existsSync(join(base, "f.txt"))).toBe(false);
      if (e.status === "rejected") expect((e.reason as { code: string }).code).toBe("not_found");
    }
  });
});

describe("a file changed by someone else between read and rename", () => {
  it("is re-read and the edit re-applied when the change was in place", async () => {
    let changes = 0;
    setRaceHookForTests((stage, real) => {
      // Another process appends while the edit is about to rename.
      if (stage === "before-rename" && real.endsWith("f.txt") && changes++ === 0)
        writeFileSync(join(base, "f.txt"), "appended by someone else\n", { flag: "a" });
    });
    await sb.editFile("/f.txt", [{ oldText: "slot 2 open", newText: "slot 2 DONE" }]);
    const text = read();
    expect(text).toContain("slot 2 DONE");
    expect(text).toContain("appended by someone else");
  });

  it("is re-read when it was replaced by a rename (a new file)", async () => {
    let changes = 0;
    setRaceHookForTests((stage, real) => {
      if (stage === "before-rename" && real.endsWith("f.txt") && changes++ === 0) {
        writeFileSync(join(base, "other.txt"), `${slots(10)}replaced\n`);
        renameSync(join(base, "other.txt"), join(base, "f.txt"));
      }
    });
    await sb.editFile("/f.txt", [{ oldText: "slot 2 open", newText: "slot 2 DONE" }]);
    expect(read()).toBe(`${slots(10)}replaced\n`.replace("slot 2 open", "slot 2 DONE"));
  });

  it("refuses the edit with edit_failed when the change removed its text, and keeps the change", async () => {
    setRaceHookForTests((stage, real) => {
      if (stage === "before-rename" && real.endsWith("f.txt"))
        writeFileSync(join(base, "f.txt"), "rewritten by someone else\n");
    });
    const err = await sb
      .editFile("/f.txt", [{ oldText: "slot 2 open", newText: "slot 2 DONE" }])
      .then(
        () => undefined,
        (e: { code: string; message: string }) => e,
      );
    expect(err?.code).toBe("edit_failed");
    expect(err?.message).toMatch(/changed/);
    expect(read()).toBe("rewritten by someone else\n");
  });

  it("refuses with edit_failed, saying so, when the file keeps changing", async () => {
    let n = 0;
    setRaceHookForTests((stage, real) => {
      if (stage === "before-rename" && real.endsWith("f.txt"))
        writeFileSync(join(base, "f.txt"), `change ${n++}\n`, { flag: "a" });
    });
    const err = await sb
      .editFile("/f.txt", [{ oldText: "slot 2 open", newText: "slot 2 DONE" }])
      .then(
        () => undefined,
        (e: { code: string; message: string }) => e,
      );
    expect(err?.code).toBe("edit_failed");
    expect(err?.message).toMatch(/changed while it was being edited/);
    expect(err?.message).not.toContain(base);
    expect(read()).not.toContain("slot 2 DONE");
  });
});
