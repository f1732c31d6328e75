/**
 * `mountbox init` as a user runs it: the bin of the packed package, installed
 * by npm, spawned from an app folder — the files it makes (and nothing
 * else), a scaffold that `mountbox check` accepts and `mountbox run` runs
 * with no model, never overwriting (nothing written when one file is
 * there), the current folder by default, and no host path in what it prints.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { MockLanguageModelV3 } from "ai/test";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHost, loadProgram } from "../dist/src/index.js";
import { assertBuilt } from "./conformance/thread.js";
import { layOut, packAndInstall, writeFiles } from "./helpers/packed.js";
import { makeTempDir, removeDir } from "./helpers/tree.js";

let base: string;
let app: string;
let bin: string;

beforeAll(() => {
  assertBuilt();
  base = makeTempDir("mountbox-cli-init-");
  const { modules } = packAndInstall(join(base, "pack"));
  app = layOut("npm", base, modules);
  bin = join(app, "node_modules", "mountbox", "dist", "src", "cli", "main.js");
});
afterAll(() => removeDir(base));

/**
 * `mountbox …` from `cwd` (default: the app folder), to its end. Neither
 * `init` nor a command that succeeded prints a host path. (A program
 * folder that cannot be loaded is named by its host path: the user's own.)
 */
function mountbox(args: string[], cwd = app) {
  const r = spawnSync(process.execPath, [bin, ...args], {
    cwd,
    encoding: "utf8",
    timeout: 60_000,
  });
  if (r.status === 0 || args[0] === "init") expect(r.stdout + r.stderr).not.toContain(base);
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** Every file and folder under `dir`, relative, folders ending in '/', sorted. */
function listTree(dir: string, prefix = ""): string[] {
  return readdirSync(join(dir, prefix), { withFileTypes: true })
    .flatMap((e) => {
      const rel = `${prefix}${e.name}`;
      return e.isDirectory() ? [`${rel}/`, ...listTree(dir, `${rel}/`)] : [rel];
    })
    .sort();
}

/** Each file under `dir` with its text and modification time, to tell that nothing changed. */
function snapshotFiles(dir: string): Record<string, { text: string; mtimeMs: number }> {
  return Object.fromEntries(
    listTree(dir)
      .filter((p) => !p.endsWith("/"))
      .map((p) => [
        p,
        { text: readFileSync(join(dir, p), "utf8"), mtimeMs: statSync(join(dir, p)).mtimeMs },
      ]),
  );
}

const SCAFFOLD = [
  ".gitignore",
  "README.md",
  "notes/",
  "notes/hello.md",
  "notes/ideas.md",
  "out/",
  "program.yaml",
  "workers/",
  "workers/main.js",
  "workers/summarizer.worker",
];

describe("mountbox init my-program, then check and run", () => {
  let printed = "";

  it("creates exactly the scaffold and says what to do next", () => {
    const r = mountbox(["init", "my-program"]);
    expect([r.code, r.stderr]).toEqual([0, ""]);
    printed = r.stdout;
    expect(r.stdout).toMatchInlineSnapshot(`
      "Created in 'my-program':
        program.yaml, workers/main.js, workers/summarizer.worker, notes/hello.md,
        notes/ideas.md, out/, .gitignore, README.md

      Next steps:
        mountbox check my-program  # validate it: what each worker may read and write
        mountbox run my-program    # run main, a code worker (no model needed)
        # the LLM worker, with its model 'default' mapped to a provider's model
        # (install 'ai' and the provider's package, and set its API key):
        mountbox run my-program summarizer --input '"Summarize the notes."' --model default=openai:gpt-5-mini
      "
    `);
    expect(listTree(join(app, "my-program"))).toEqual(SCAFFOLD);
    expect(readFileSync(join(app, "my-program/program.yaml"), "utf8")).toContain(
      "\nname: my-program\n",
    );
  });

  it("is what docs/cli.md shows", () => {
    const readme = readFileSync(new URL("../docs/cli.md", import.meta.url), "utf8");
    const shown = /\$ mountbox init my-program\n([\s\S]*?)```/.exec(readme)?.[1];
    expect(shown).toBe(printed);
  });

  it("passes mountbox check", () => {
    const r = mountbox(["check", "my-program"]);
    expect([r.code, r.stderr]).toEqual([0, ""]);
    expect(r.stdout).toMatchInlineSnapshot(`
      "✔ program.yaml and 2 workers are valid.

      Areas:
        /  read-write

      Each worker along each path it can be called along (r read, w write, * only part of the area, - nothing; host code and .git are never writable):
        worker (delegation path)  /    shell  network  runs as
        main                      rw*  no     no       thread
        summarizer (LLM)          r*   no     no       thread
      "
    `);
  });

  it("mountbox run runs main with no model: it reads the notes, writes to /out, is refused elsewhere", () => {
    const r = mountbox(["run", "my-program"]);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const [lines, rest] = r.stdout.split("\nResult:\n") as [string, string];
    expect(lines.replace(/\(\d+ ms\)/g, "(<ms> ms)")).toBe(
      [
        "▶ main started",
        "  main: read 2 notes",
        "✖ main: writeFile /notes/hello.md refused (path_not_writable)",
        "✔ main finished (<ms> ms)",
        "",
      ].join("\n"),
    );
    expect(rest.replace(/\d+\.\d s$/m, "<s> s")).toMatchInlineSnapshot(`
      "{
        "notes": [
          "/notes/hello.md",
          "/notes/ideas.md"
        ],
        "wrote": "/out/titles.md",
        "refused": "path_not_writable"
      }

      1 agent, 5 operations, 1 denial, 0 model steps (0 tokens), <s> s
      "
    `);
    expect(readFileSync(join(app, "my-program/out/titles.md"), "utf8")).toBe(
      "# Note titles\n\n- Hello\n- Ideas\n",
    );
  });

  it("a second init writes nothing, names the file it would overwrite, and exits 2", () => {
    const dir = join(app, "my-program");
    const before = { tree: listTree(dir), files: snapshotFiles(dir) };
    const r = mountbox(["init", "my-program"]);
    expect(r).toEqual({
      code: 2,
      stdout: "",
      stderr:
        "mountbox: program.yaml exists already in 'my-program'; init never overwrites a file, so nothing was written.\n" +
        "Run init in a new or empty folder, or move program.yaml away.\n",
    });
    expect({ tree: listTree(dir), files: snapshotFiles(dir) }).toEqual(before);
  });
});

it("the LLM worker runs with the model the host gives as 'default', and may only read /notes", async () => {
  const dir = join(app, "llm-program");
  expect(mountbox(["init", "llm-program"]).code).toBe(0);
  type Turn = Awaited<ReturnType<MockLanguageModelV3["doGenerate"]>>;
  const usage = {
    inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
    outputTokens: { total: 1, text: 1, reasoning: undefined },
  };
  const call = (id: string, toolName: string, input: unknown): Turn => ({
    content: [{ type: "tool-call", toolCallId: id, toolName, input: JSON.stringify(input) }],
    finishReason: { unified: "tool-calls", raw: undefined },
    usage,
    warnings: [],
  });
  const offered: string[][] = [];
  const seen: unknown[] = [];
  const model = new MockLanguageModelV3({
    doGenerate: async ({ prompt, tools }) => {
      offered.push((tools ?? []).map((t) => t.name).sort());
      const results = prompt
        .filter((m) => m.role === "tool")
        .flatMap((m) => m.content.map((p) => (p.type === "tool-result" ? p.output : undefined)));
      seen.push(...results.slice(seen.length));
      const turns = [
        call("a", "list_files", { path: "/notes" }),
        call("b", "read_file", { path: "/notes/hello.md" }),
        call("c", "read_file", { path: "/program.yaml" }),
      ];
      return (
        turns[results.length] ?? {
          content: [{ type: "text", text: "Two notes: a greeting and ideas." }],
          finishReason: { unified: "stop", raw: undefined },
          usage,
          warnings: [],
        }
      );
    },
  });
  const host = await createHost({ ...(await loadProgram(dir)), models: { default: model } });
  try {
    expect(await host.run("summarizer", "Summarize the notes.")).toBe(
      "Two notes: a greeting and ideas.",
    );
  } finally {
    await host.close();
  }
  expect(offered[0]).toEqual(["list_files", "read_file"]);
  expect(JSON.stringify(seen[0])).toContain("/notes/hello.md\\n/notes/ideas.md");
  expect(JSON.stringify(seen[1])).toContain("# Hello");
  expect(JSON.stringify(seen[2])).toContain("path_not_in_sandbox");
});

it("one file of the scaffold already there: nothing else is written", () => {
  writeFiles(app, { "partial/notes/ideas.md": "mine\n" });
  const r = mountbox(["init", "partial"]);
  expect(r.code).toBe(2);
  expect(r.stderr).toContain("mountbox: notes/ideas.md exists already in 'partial';");
  expect(listTree(join(app, "partial"))).toEqual(["notes/", "notes/ideas.md"]);
  expect(readFileSync(join(app, "partial/notes/ideas.md"), "utf8")).toBe("mine\n");
});

it("with no folder, scaffolds the current one, named after it", () => {
  const dir = join(app, "empty-sub");
  mkdirSync(dir);
  const r = mountbox(["init"], dir);
  expect([r.code, r.stderr]).toEqual([0, ""]);
  expect(r.stdout).toMatch(/^Created in this folder:\n/);
  expect(r.stdout).toContain("\n  mountbox check .  # validate it");
  expect(listTree(dir)).toEqual(SCAFFOLD);
  expect(readFileSync(join(dir, "program.yaml"), "utf8")).toContain("\nname: empty-sub\n");
  expect(mountbox(["check", "."], dir).code).toBe(0);
});

it("--help exits 0; bad usage says how to get help and exits 2", () => {
  const help = mountbox(["init", "--help"]);
  expect([help.code, help.stdout.split("\n")[0]]).toEqual([0, "Usage: mountbox init [dir]"]);
  expect(mountbox(["init", "a", "b"])).toEqual({
    code: 2,
    stdout: "",
    stderr: "mountbox: unexpected argument 'b'\nRun 'mountbox init --help' for usage.\n",
  });
  expect(mountbox(["init", "--force"]).code).toBe(2);
  expect(mountbox(["--help"]).stdout).toContain("\n  init    Create a program folder");
});
