/**
 * One conformance suite for the tool layer: the same tool calls, with the
 * same text results, over the in-process `Sandbox` and over `ctx.sandbox`
 * inside a real agent thread. Refusals and truncation included; no output may
 * hold a host path.
 */
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  ConfigError,
  createToolDefinitions,
  DelegationRefusedError,
  type Sandbox,
  type ToolDefinition,
  type ToolOptions,
  type ToolSandbox,
} from "../../src/index.js";
import type { WorkerSandbox } from "../../workers/index.js";
import { createConformanceHost } from "../conformance/suite.js";

// Both faces of a sandbox must satisfy the tools' interface (checked by tsc).
const inProcessFits = (s: Sandbox): ToolSandbox => s;
const threadFits = (s: WorkerSandbox): ToolSandbox => s;
void inProcessFits;
void threadFits;

/** Which sandbox of the fixture a setup exposes. */
export type ToolVariant = "root" | "child" | "readonly";

/** What a setup hands the suite. */
export interface ToolSetup {
  sandbox: ToolSandbox;
  /** The fixture's host folder: no output may contain it. */
  root: string;
  cleanup(): Promise<void>;
}

/** How a test file turns a host `Sandbox` (in-process or built) into the sandbox the tools get. */
export type ToolSetupFactory = (variant: ToolVariant) => Promise<ToolSetup>;

/**
 * The fixture: the conformance tree (`/src/a.txt` "hello\nworld\n",
 * `/src/b.md`, `/src/nested/c.txt`, `/docs/readme.md`, `/cache/data.txt` on a
 * read-only mount) plus files for reading, editing and searching.
 */
export async function createToolHost(make?: Parameters<typeof createConformanceHost>[0]) {
  const host = await createConformanceHost(make);
  const put = async (rel: string, content: string | Uint8Array) => {
    await mkdir(join(host.root, "root", rel, ".."), { recursive: true });
    await writeFile(join(host.root, "root", rel), content);
  };
  await put(
    "src/long.txt",
    `${Array.from({ length: 30 }, (_, i) => `line ${i + 1}`).join("\n")}\n`,
  );
  await put("src/crlf.txt", "alpha\r\nbeta\r\ngamma\r\n");
  await put("src/code.ts", "function f() {\n    if (x) {\n        return 1;\n    }\n}\n");
  await put("src/twice.txt", "same\nother\nsame\n");
  await put("src/bin.dat", new Uint8Array([1, 2, 0, 3, 104, 101, 108, 108, 111]));
  await put("src/empty.txt", "");
  await put("src/wide.txt", `${"x".repeat(50)}\n${"y".repeat(50)}\n${"z".repeat(50)}\n`);
  return {
    root: host.root,
    sandboxFor(variant: ToolVariant): Sandbox {
      if (variant === "readonly") return host.sandboxFor("root").restrict({ readonly: true });
      return host.sandboxFor(variant);
    },
    cleanup: host.cleanup,
  };
}

/** Registers the suite; `setup` gives a fresh fixture per test. */
export function runToolConformance(label: string, setup: ToolSetupFactory): void {
  describe(`tool conformance: ${label}`, () => {
    let ctx: ToolSetup;
    const host = (rel: string) => join(ctx.root, "root", rel);

    /** The tools for this test's sandbox. */
    async function tools(opts?: ToolOptions): Promise<ToolDefinition[]> {
      return createToolDefinitions(ctx.sandbox, opts);
    }
    /** Calls one tool and checks the text shows no host path. */
    async function call(name: string, args: unknown, opts?: ToolOptions): Promise<string> {
      const tool = (await tools(opts)).find((t) => t.name === name);
      if (!tool) throw new Error(`no tool ${name}`);
      const out = await tool.execute(args as Record<string, unknown>);
      expect(typeof out).toBe("string");
      expect(out).not.toContain(ctx.root);
      expect(out).not.toMatch(/\n\s+at /); // no stack trace
      return out;
    }

    describe("root sandbox (read-only mount at /cache)", () => {
      beforeEach(async () => {
        ctx = await setup("root");
      });
      afterEach(() => ctx.cleanup());

      it("offers every file tool, each with a strict schema, hints and a description", async () => {
        const list = await tools();
        expect(list.map((t) => t.name)).toEqual([
          "read_file",
          "read_multiple_files",
          "write_file",
          "edit_file",
          "list_files",
          "grep",
          "get_file_info",
          "create_directory",
          "move_file",
          "delete_file",
          "list_allowed_paths",
        ]);
        for (const t of list) {
          expect(t.description).toMatch(/virtual/);
          expect(t.description).not.toContain(ctx.root);
          expect(t.inputSchema.safeParse({ path: "/x", surprise: 1 }).success).toBe(false);
          expect(t.annotations.readOnlyHint).toBe(
            [
              "read_file",
              "read_multiple_files",
              "list_files",
              "grep",
              "get_file_info",
              "list_allowed_paths",
            ].includes(t.name),
          );
        }
        expect(list.find((t) => t.name === "delete_file")?.annotations.destructiveHint).toBe(true);
        expect(list.find((t) => t.name === "read_file")?.annotations.destructiveHint).toBe(false);
      });

      it("adds call_worker and shell only when given their functions, and picks subsets", async () => {
        const delegate = async () => "done";
        const runCommand = async () => ({ exitCode: 0, stdout: "", stderr: "", timedOut: false });
        const names = (await tools({ delegate, runCommand })).map((t) => t.name);
        expect(names.slice(-2)).toEqual(["shell", "call_worker"]);
        expect((await tools({ tools: ["grep", "read_file"] })).map((t) => t.name)).toEqual([
          "read_file",
          "grep",
        ]);
        const err = await tools({ tools: ["read_file", "rm_rf" as never, "shell"] }).then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(err).toBeInstanceOf(ConfigError);
        expect((err as ConfigError).message).toMatchInlineSnapshot(`
          "Invalid configuration in tool options:
          ✖ unknown tool 'rm_rf'; known tools: read_file, read_multiple_files, write_file, edit_file, list_files, grep, get_file_info, create_directory, move_file, delete_file, list_allowed_paths, shell, call_worker, git_status, git_diff, git_log, git_commit → at tools[1]
          ✖ 'shell' needs a runCommand function → at tools[2]"
        `);
      });

      it("refuses bad limits naming each key, and takes no-argument calls as {}", async () => {
        const err = await tools({ limits: { readMaxLines: 0, grepTimeMs: -1 } }).then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(err).toBeInstanceOf(ConfigError);
        expect((err as ConfigError).issues.map((i) => i.path.join("."))).toEqual([
          "limits.readMaxLines",
          "limits.grepTimeMs",
        ]);
        const list = (await tools()).find((t) => t.name === "list_allowed_paths");
        expect(await list?.execute(undefined as never)).toMatch(/^Readable paths: \//);
      });

      it("read_file returns a whole file unchanged", async () => {
        expect(await call("read_file", { path: "/src/a.txt" })).toBe("hello\nworld\n");
        expect(await call("read_file", { path: "src/crlf.txt" })).toBe(
          "alpha\r\nbeta\r\ngamma\r\n",
        );
        expect(await call("read_file", { path: "/cache/data.txt" })).toBe("cached\n");
        expect(await call("read_file", { path: "/src/empty.txt" })).toBe("[The file is empty.]");
      });

      it("read_file reads slices with a notice that says how to read on", async () => {
        expect(
          await call("read_file", { path: "/src/long.txt", offset: 3, limit: 2 }),
        ).toMatchInlineSnapshot(`
          "line 3
          line 4

          [Showing lines 3-4 of 30. To read on, call read_file with offset: 5.]"
        `);
        expect(await call("read_file", { path: "/src/long.txt", head: 1 })).toBe(
          "line 1\n\n[Showing lines 1-1 of 30. To read on, call read_file with offset: 2.]",
        );
        expect(await call("read_file", { path: "/src/long.txt", tail: 2 })).toBe(
          "line 29\nline 30\n\n[Showing lines 29-30 of 30 (the end of the file).]",
        );
        expect(await call("read_file", { path: "/src/long.txt", offset: 31 })).toBe(
          "[The file has 30 lines; offset 31 is past its end.]",
        );
        const capped = await call(
          "read_file",
          { path: "/src/long.txt" },
          { limits: { readMaxLines: 10 } },
        );
        expect(capped.split("\n").slice(0, 10).at(-1)).toBe("line 10");
        expect(capped).toContain(
          "[Showing lines 1-10 of 30. To read on, call read_file with offset: 11.]",
        );
        expect(await call("read_file", { path: "/src/long.txt", head: 2, tail: 2 })).toBe(
          "Error [invalid_request]: pass head, tail, or offset/limit — only one of them.",
        );
      });

      it("read_file caps by characters too, at a line break when it can", async () => {
        const out = await call(
          "read_file",
          { path: "/src/wide.txt" },
          { limits: { readMaxChars: 120 } },
        );
        expect(out).toBe(
          `${"x".repeat(50)}\n${"y".repeat(50)}\n\n[Output cut at 120 characters: showing lines 1-2 of 3. To read on, call read_file with offset: 3.]`,
        );
        const one = await call(
          "read_file",
          { path: "/src/wide.txt" },
          { limits: { readMaxChars: 20 } },
        );
        expect(one).toBe(
          `${"x".repeat(20)}\n\n[Line 1 is longer than 20 characters: only its start is shown. Use grep to find text in it. Read on from the next line with offset: 2.]`,
        );
      });

      it("read_file describes binaries and reports refusals as text", async () => {
        expect(await call("read_file", { path: "/src/bin.dat" })).toBe(
          "[Binary file (9 bytes): not shown as text. Use get_file_info for its size and type.]",
        );
        expect(await call("read_file", { path: "/src/nested" })).toBe(
          "Error [io_error]: I/O error during read on '/src/nested': it is a directory, not a file (use list_files).",
        );
        expect(await call("read_file", { path: "/src/missing.txt" })).toMatchInlineSnapshot(
          `
          "Error [not_found]: Not found: '/src/missing.txt' does not exist.
          Nearest existing directory: '/src'"
        `,
        );
        const climbed = await call("read_file", { path: "/../etc/passwd" });
        expect(climbed).toMatch(
          /^Error \[path_not_in_sandbox\]: Cannot access '\/\.\.\/etc\/passwd'/,
        );
        // A pasted host path is refused without being echoed.
        const pasted = await call("read_file", { path: host("src/a.txt") });
        expect(pasted).toMatchInlineSnapshot(
          `"Error [invalid_path]: Invalid path: that is a host path, but paths here are virtual (the sandbox root is '/'). Use '/src/a.txt' instead."`,
        );
        expect(await call("read_file", { path: 42 })).toMatch(
          /^Error \[invalid_request\]: invalid arguments for read_file:\n- .*\(at path\)/,
        );
        expect(await call("read_file", { path: "/src/a.txt", extra: true })).toMatch(
          /^Error \[invalid_request\]/,
        );
      });

      it("read_multiple_files returns every file it can, and each failure in place", async () => {
        const out = await call("read_multiple_files", {
          paths: ["/src/a.txt", "/src/missing.txt", host("src/b.md"), "/cache/data.txt"],
        });
        expect(out).toMatchInlineSnapshot(`
          "/src/a.txt:
          hello
          world

          ---
          /src/missing.txt: Error [not_found]: Not found: '/src/missing.txt' does not exist.
          Nearest existing directory: '/src'
          ---
          /src/b.md: Error [invalid_path]: Invalid path: that is a host path, but paths here are virtual (the sandbox root is '/'). Use '/src/b.md' instead.
          ---
          /cache/data.txt:
          cached
          "
        `);
      });

      it("write_file writes atomically with parents, and is refused on the read-only mount", async () => {
        expect(await call("write_file", { path: "/src/new/n.txt", content: "new\n" })).toBe(
          "Wrote 4 characters to '/src/new/n.txt'.",
        );
        expect(await readFile(host("src/new/n.txt"), "utf8")).toBe("new\n");
        const ro = await call("write_file", { path: "/cache/data.txt", content: "x" });
        expect(ro).toMatch(/^Error \[path_not_writable\]: Cannot write to '\/cache\/data.txt'/);
        expect(ro).toContain("Writable paths:");
        expect(await readFile(join(ctx.root, "cache/data.txt"), "utf8")).toBe("cached\n");
      });

      it("edit_file applies an exact edit with a diff, and dryRun writes nothing", async () => {
        const dry = await call("edit_file", {
          path: "/src/a.txt",
          edits: [{ oldText: "world", newText: "there" }],
          dryRun: true,
        });
        expect(dry).toMatchInlineSnapshot(`
          "Dry run: nothing was written. The edits would change '/src/a.txt' like this:
          \`\`\`diff
          --- /src/a.txt
          +++ /src/a.txt
          @@ -1,2 +1,2 @@
           hello
          -world
          +there
          \`\`\`"
        `);
        expect(await readFile(host("src/a.txt"), "utf8")).toBe("hello\nworld\n");
        const done = await call("edit_file", {
          path: "/src/a.txt",
          edits: [
            { oldText: "world", newText: "there" },
            { oldText: "hello\nthere", newText: "hi\nthere" },
          ],
        });
        expect(done.startsWith("Edited '/src/a.txt':\n```diff\n")).toBe(true);
        expect(await readFile(host("src/a.txt"), "utf8")).toBe("hi\nthere\n");
      });

      it("edit_file tolerates LF text against a CRLF file, keeping CRLF", async () => {
        const out = await call("edit_file", {
          path: "/src/crlf.txt",
          edits: [{ oldText: "alpha\nbeta\n", newText: "ALPHA\nBETA\n" }],
        });
        expect(out).toContain("Note: edit #1 matched after normalising line endings.");
        expect(await readFile(host("src/crlf.txt"), "utf8")).toBe("ALPHA\r\nBETA\r\ngamma\r\n");
      });

      it("edit_file tolerates indentation differences and re-indents the new text", async () => {
        const out = await call("edit_file", {
          path: "/src/code.ts",
          edits: [{ oldText: "if (x) {\n    return 1;\n}", newText: "if (y) {\n    return 2;\n}" }],
        });
        expect(out).toContain(
          "Note: edit #1 matched ignoring leading and trailing whitespace (indentation adjusted to the file's).",
        );
        expect(await readFile(host("src/code.ts"), "utf8")).toBe(
          "function f() {\n    if (y) {\n        return 2;\n    }\n}\n",
        );
      });

      it("edit_file widens a tolerant match that is not unique as exact text", async () => {
        // "foo " matches line 1 ignoring whitespace; its exact text "    foo" also
        // occurs inside line 2, so the edit sent to the sandbox takes the line break too.
        await writeFile(host("src/w.txt"), "    foo\n      foo(x)\n");
        const out = await call("edit_file", {
          path: "/src/w.txt",
          edits: [{ oldText: "foo ", newText: "bar" }],
        });
        expect(out).toContain("-    foo\n+    bar\n");
        expect(await readFile(host("src/w.txt"), "utf8")).toBe("    bar\n      foo(x)\n");
      });

      it("edit_file refuses an ambiguous or missing match and changes nothing", async () => {
        const twice = await call("edit_file", {
          path: "/src/twice.txt",
          edits: [{ oldText: "same", newText: "x" }],
        });
        expect(twice).toMatchInlineSnapshot(`
          "Error [edit_failed]: Edit #1 on '/src/twice.txt' failed: oldText was found 2 times. Include more surrounding lines so it matches exactly once.
          oldText starts with: "same""
        `);
        const tolerantTwice = await call("edit_file", {
          path: "/src/twice.txt",
          edits: [{ oldText: "  same  ", newText: "x" }],
        });
        expect(tolerantTwice).toContain("oldText was found 2 times");
        const missing = await call("edit_file", {
          path: "/src/twice.txt",
          edits: [
            { oldText: "other", newText: "OTHER" },
            { oldText: "absent", newText: "y" },
          ],
        });
        expect(missing).toContain("Edit #2 on '/src/twice.txt' failed: oldText was not found.");
        expect(await readFile(host("src/twice.txt"), "utf8")).toBe("same\nother\nsame\n");
        expect(
          await call("edit_file", {
            path: "/src/bin.dat",
            edits: [{ oldText: "a", newText: "b" }],
          }),
        ).toBe("Error [edit_failed]: '/src/bin.dat' is a binary file; edit_file only edits text.");
        const ro = await call("edit_file", {
          path: "/cache/data.txt",
          edits: [{ oldText: "cached", newText: "x" }],
        });
        expect(ro).toMatch(/^Error \[path_not_writable\]/);
      });

      it("list_files lists by glob, capped with a notice", async () => {
        expect(await call("list_files", { path: "/src", pattern: "**/*.txt" })).toBe(
          [
            "/src/a.txt",
            "/src/crlf.txt",
            "/src/empty.txt",
            "/src/long.txt",
            "/src/nested/c.txt",
            "/src/notes-private.txt",
            "/src/twice.txt",
            "/src/wide.txt",
          ].join("\n"),
        );
        expect(await call("list_files", { path: "/src", pattern: "*.md" })).toBe("/src/b.md");
        expect(
          await call("list_files", {}, { limits: { listMaxEntries: 2 } }),
        ).toMatchInlineSnapshot(`
          "/cache/data.txt
          /docs/readme.md

          [Showing 2 of 13 files. Narrow the search with a deeper path or a more specific pattern.]"
        `);
        expect(await call("list_files", { path: "/src", pattern: "*.rs" })).toBe(
          "No files match '*.rs' under '/src'.",
        );
        expect(await call("list_files", { path: "/../.." })).toMatch(
          /^Error \[path_not_in_sandbox\]/,
        );
      });

      it("grep prints path:line: text, skips binaries, honours glob and case", async () => {
        expect(await call("grep", { pattern: "l+o", path: "/src" })).toBe(
          "/src/a.txt:1: hello\n\n[Skipped 1 binary file.]",
        );
        expect(await call("grep", { pattern: "^line 1\\d$", glob: "**/*.txt" })).toBe(
          Array.from({ length: 10 }, (_, i) => `/src/long.txt:${10 + i}: line ${10 + i}`).join(
            "\n",
          ),
        );
        expect(await call("grep", { pattern: "BETA", ignoreCase: true, path: "/src" })).toBe(
          "/src/crlf.txt:2: beta\n\n[Skipped 1 binary file.]",
        );
        expect(await call("grep", { pattern: "o", path: "/src/a.txt", glob: "*.md" })).toBe(
          "/src/a.txt:1: hello\n/src/a.txt:2: world",
        );
        expect(await call("grep", { pattern: "nothing-here", path: "/docs" })).toBe(
          "No matches for 'nothing-here' in 1 file under '/docs'.",
        );
        expect(await call("grep", { pattern: "(" })).toMatch(
          /^Error \[invalid_request\]: the pattern is not a valid regular expression: /,
        );
      });

      it("grep is capped in matches, output, line length and time", async () => {
        const few = await call(
          "grep",
          { pattern: "line", path: "/src", glob: "long.txt" },
          { limits: { grepMaxMatches: 3 } },
        );
        expect(few).toMatchInlineSnapshot(`
          "/src/long.txt:1: line 1
          /src/long.txt:2: line 2
          /src/long.txt:3: line 3

          [Stopped after 3 matches. Use a more specific pattern, path or glob to see the rest.]"
        `);
        const small = await call(
          "grep",
          { pattern: "line", path: "/src", glob: "long.txt" },
          { limits: { grepMaxChars: 60 } },
        );
        expect(small).toContain("[Stopped: the output reached 60 characters after 2 matches.");
        // Only the first grepMaxLineChars characters of a line are scanned.
        await writeFile(host("src/longline.txt"), `${"a".repeat(100)}needle\n`);
        expect(
          await call(
            "grep",
            { pattern: "needle", path: "/src", glob: "longline.txt" },
            { limits: { grepMaxLineChars: 50 } },
          ),
        ).toBe("No matches for 'needle' in 1 file under '/src'.");
        expect(
          await call("grep", { pattern: "needle", path: "/src", glob: "longline.txt" }),
        ).toContain("/src/longline.txt:1: aaaa");
        const late = await call(
          "grep",
          { pattern: "x", path: "/src" },
          { limits: { grepTimeMs: 0 } },
        );
        expect(late).toMatch(
          /^No matches for 'x' in 0 files under '\/src'.\n\[Stopped after 0 s: searched 0 of \d+ files\./,
        );
      });

      it("get_file_info, create_directory, move_file and delete_file", async () => {
        const info = await call("get_file_info", { path: "/src/a.txt" });
        expect(info).toMatch(
          /^path: \/src\/a.txt\ntype: file\nsize: 12 bytes\nmodified: \d{4}-\d\d-\d\dT/,
        );
        expect(await call("get_file_info", { path: "/src" })).toContain("type: directory");
        expect(await call("create_directory", { path: "/src/d/e" })).toBe(
          "Created directory '/src/d/e'.",
        );
        expect(await call("create_directory", { path: "/src/d/e" })).toBe(
          "Created directory '/src/d/e'.",
        );
        expect(await call("move_file", { source: "/src/a.txt", destination: "/docs/a.txt" })).toBe(
          "Moved '/src/a.txt' to '/docs/a.txt'.",
        );
        expect(await readFile(host("docs/a.txt"), "utf8")).toBe("hello\nworld\n");
        expect(
          await call("move_file", { source: "/src/b.md", destination: "/docs/readme.md" }),
        ).toBe(
          "Error [already_exists]: Cannot create '/docs/readme.md': it already exists. Delete it first with delete_file, or choose another destination.",
        );
        expect(await call("delete_file", { path: "/src/nested" })).toMatch(
          /^Error \[io_error\]: .*recursive: true/,
        );
        expect(await call("delete_file", { path: "/src/nested", recursive: true })).toBe(
          "Deleted '/src/nested'.",
        );
        expect(await call("delete_file", { path: "/cache/data.txt" })).toMatch(
          /^Error \[path_not_writable\]/,
        );
      });

      it("call_worker passes worker, input and attachments, and reports refusals", async () => {
        const seen: unknown[] = [];
        const delegate = async (
          worker: string,
          input: unknown,
          opts: { attachments?: string[] },
        ) => {
          seen.push({ worker, input, opts });
          if (worker !== "summarizer")
            throw new DelegationRefusedError(`'${worker}' is not a delegate of this worker.`);
          return { summary: "short" };
        };
        const opts = {
          delegate,
          workers: [{ name: "summarizer", description: "summarizes files" }],
        };
        const def = (await tools(opts)).find((t) => t.name === "call_worker");
        expect(def?.description).toContain("Workers you can call: summarizer (summarizes files).");
        expect(
          await call(
            "call_worker",
            { worker: "summarizer", input: "sum it", attachments: ["/src/a.txt"] },
            opts,
          ),
        ).toBe('{"summary":"short"}');
        expect(await call("call_worker", { worker: "other", input: 1 }, opts)).toBe(
          "Error [delegation_refused]: 'other' is not a delegate of this worker.",
        );
        expect(seen[0]).toEqual({
          worker: "summarizer",
          input: "sum it",
          opts: { attachments: ["/src/a.txt"] },
        });
      });

      it("call_worker shows a result as compact JSON, however deeply nested", async () => {
        // Indented, 1 MB nested 1000 deep made hundreds of MB of text.
        let nested: unknown = [0, 1, 2];
        for (let i = 0; i < 1000; i++) nested = [nested];
        const delegate = async () => nested;
        expect(await call("call_worker", { worker: "w", input: 1 }, { delegate })).toBe(
          JSON.stringify(nested),
        );
      });

      it("a failure that is not a SandboxError is a generic message naming tool and path", async () => {
        const delegate = async () => {
          throw new Error(`EACCES: permission denied, open '${ctx.root}/secret'`);
        };
        expect(await call("call_worker", { worker: "w", input: "x" }, { delegate })).toBe(
          "Error: call_worker failed for an unexpected reason. Try again, or try another path.",
        );
      });
    });

    describe("derived child (reads /src and /cache, writes /src)", () => {
      beforeEach(async () => {
        ctx = await setup("child");
      });
      afterEach(() => ctx.cleanup());

      it("list_allowed_paths shows its areas and mounts", async () => {
        expect(await call("list_allowed_paths", {})).toMatchInlineSnapshot(`
          "Readable paths: /cache, /src
          Writable paths: /src
          Mounts: /, /cache (read-only)
          Withheld (secrets, names at any depth; never readable, listed or searched): .env, .env.*, *.pem, *.key, id_rsa*, id_dsa*, id_ecdsa*, id_ed25519*, .npmrc, .netrc, .git-credentials, .aws/, .ssh/, notes-*.txt
          Paths are virtual (the sandbox root is '/'): use them exactly as shown."
        `);
        const read = (await tools()).find((t) => t.name === "read_file");
        expect(read?.description).toContain("Readable paths: /cache, /src.");
        const write = (await tools()).find((t) => t.name === "write_file");
        expect(write?.description).toContain("Writable paths: /src.");
      });

      it("is refused outside its areas, and the refusal says where it may go", async () => {
        const out = await call("read_file", { path: "/docs/readme.md" });
        expect(out).toMatchInlineSnapshot(`
          "Error [path_not_in_sandbox]: Cannot access '/docs/readme.md': it is outside the sandbox.
          Readable paths: /cache, /src"
        `);
        expect(await call("write_file", { path: "/docs/x.md", content: "x" })).toMatch(
          /^Error \[(path_not_writable|path_not_in_sandbox)\]/,
        );
        expect(await call("grep", { pattern: "docs" })).not.toContain("/docs/readme.md");
      });
    });

    describe("read-only sandbox", () => {
      beforeEach(async () => {
        ctx = await setup("readonly");
      });
      afterEach(() => ctx.cleanup());

      it("offers no write tools by default, and refuses writes asked for by name", async () => {
        expect((await tools()).map((t) => t.name)).toEqual([
          "read_file",
          "read_multiple_files",
          "list_files",
          "grep",
          "get_file_info",
          "list_allowed_paths",
        ]);
        const out = await call(
          "write_file",
          { path: "/src/a.txt", content: "x" },
          { tools: ["write_file"] },
        );
        expect(out).toMatch(/^Error \[path_not_writable\]: .*\nWritable paths: none/);
        expect(await readFile(host("src/a.txt"), "utf8")).toBe("hello\nworld\n");
      });
    });
  });
}
