/**
 * `mountbox mcp` end to end as users install it: the packed package's bin,
 * installed by npm into a temp app and spawned from a folder elsewhere,
 * driven by the MCP SDK's real `Client` over stdio — tools and annotations,
 * reads, writes, edits, refusals (read-only mount, traversal, a link out),
 * listings, robustness against bad input. Parity with the reference server
 * is in mcp-parity.test.ts.
 */
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { callTool as call, connectStdio, installPackedCli } from "./helpers/mcp.js";
import { makeTempDir, removeDir } from "./helpers/tree.js";

let base: string;
let root: string;
let ro: string;
let outside: string;
let mountbox: Client;
let stderr = "";

function layOut(dir: string): void {
  mkdirSync(join(dir, "src/lib"), { recursive: true });
  mkdirSync(join(dir, "empty"), { recursive: true });
  writeFileSync(join(dir, "README.md"), "# Demo\n\nline 3\nline 4\nline 5\n");
  writeFileSync(join(dir, "src/a.ts"), "export const a = 1;\nexport const b = 2;\n");
  writeFileSync(join(dir, "src/lib/util.ts"), "export function util() {\n  return 42;\n}\n");
  writeFileSync(join(dir, "notes.txt"), "alpha\nbeta\ngamma\n");
}

beforeAll(async () => {
  base = makeTempDir("mountbox-mcp-");
  root = join(base, "root");
  ro = join(base, "ro");
  outside = join(base, "outside");
  mkdirSync(root);
  mkdirSync(join(ro, "docs"), { recursive: true });
  mkdirSync(outside);
  layOut(root);
  writeFileSync(join(ro, "docs/guide.md"), "read me\n");
  writeFileSync(join(outside, "secret.txt"), "TOP SECRET\n");
  symlinkSync(join(outside, "secret.txt"), join(root, "escape.txt"));
  symlinkSync(outside, join(root, "escape-dir"));
  const cli = installPackedCli(base);
  ({ client: mountbox } = await connectStdio(
    cli.cwd,
    cli.bin,
    ["mcp", "--root", root, "--mount", `${ro}:/ro:ro`],
    {
      onStderr: (t) => {
        stderr += t;
      },
    },
  ));
});

afterAll(async () => {
  await mountbox?.close();
  if (base) removeDir(base);
});

/** True if `text` names any host folder of the test. */
function hasHostPath(text: string): boolean {
  return text.includes(base) || text.includes(tmpdir());
}

describe("mountbox mcp (the installed bin over stdio)", () => {
  test("lists the reference server's tools with its annotations, plus grep and list_allowed_paths", async () => {
    const { tools } = await mountbox.listTools();
    const names = tools.map((t) => t.name).sort();
    expect(names).toEqual(
      [
        "create_directory",
        "directory_tree",
        "edit_file",
        "get_file_info",
        "grep",
        "list_allowed_directories",
        "list_allowed_paths",
        "list_directory",
        "list_directory_with_sizes",
        "move_file",
        "read_file",
        "read_media_file",
        "read_multiple_files",
        "read_text_file",
        "search_files",
        "write_file",
      ].sort(),
    );
    const ann = Object.fromEntries(tools.map((t) => [t.name, t.annotations]));
    expect(ann.read_text_file).toMatchObject({ readOnlyHint: true });
    expect(ann.write_file).toMatchObject({
      readOnlyHint: false,
      idempotentHint: true,
      destructiveHint: true,
    });
    expect(ann.edit_file).toMatchObject({
      readOnlyHint: false,
      idempotentHint: false,
      destructiveHint: true,
    });
    expect(ann.create_directory).toMatchObject({ idempotentHint: true, destructiveHint: false });
    expect(ann.move_file).toMatchObject({ idempotentHint: false, destructiveHint: true });
    const edit = tools.find((t) => t.name === "edit_file")!;
    expect(Object.keys(edit.inputSchema.properties ?? {}).sort()).toEqual([
      "dryRun",
      "edits",
      "path",
    ]);
    expect(edit.inputSchema.required).toEqual(["path", "edits"]);
    const read = tools.find((t) => t.name === "read_text_file")!;
    expect(read.inputSchema.required).toEqual(["path"]);
  });

  test("reads whole, head and tail", async () => {
    expect((await call(mountbox, "read_text_file", { path: "/notes.txt" })).text).toBe(
      "alpha\nbeta\ngamma\n",
    );
    expect((await call(mountbox, "read_text_file", { path: "/notes.txt", head: 2 })).text).toBe(
      "alpha\nbeta",
    );
    expect((await call(mountbox, "read_text_file", { path: "/notes.txt", tail: 2 })).text).toBe(
      "gamma\n",
    );
    expect((await call(mountbox, "read_file", { path: "/ro/docs/guide.md" })).text).toBe(
      "read me\n",
    );
    const both = await call(mountbox, "read_text_file", { path: "/notes.txt", head: 1, tail: 1 });
    expect(both.isError).toBe(true);
  });

  test("writes, edits with a dry run (diff) and for real", async () => {
    const w = await call(mountbox, "write_file", { path: "/out/new.txt", content: "one\ntwo\n" });
    expect(w).toMatchObject({ isError: false, text: "Successfully wrote to /out/new.txt" });
    expect(readFileSync(join(root, "out/new.txt"), "utf8")).toBe("one\ntwo\n");
    const dry = await call(mountbox, "edit_file", {
      path: "/out/new.txt",
      edits: [{ oldText: "two", newText: "TWO" }],
      dryRun: true,
    });
    expect(dry.isError).toBe(false);
    expect(dry.text).toContain("```diff\nIndex: /out/new.txt\n");
    expect(dry.text).toContain("-two\n+TWO\n");
    expect(readFileSync(join(root, "out/new.txt"), "utf8")).toBe("one\ntwo\n");
    const real = await call(mountbox, "edit_file", {
      path: "/out/new.txt",
      edits: [{ oldText: "two", newText: "TWO" }],
    });
    expect(real.isError).toBe(false);
    expect(readFileSync(join(root, "out/new.txt"), "utf8")).toBe("one\nTWO\n");
    // Stricter than the reference: an ambiguous oldText is refused.
    await call(mountbox, "write_file", { path: "/out/dup.txt", content: "x\nx\n" });
    const dup = await call(mountbox, "edit_file", {
      path: "/out/dup.txt",
      edits: [{ oldText: "x", newText: "y" }],
    });
    expect(dup.isError).toBe(true);
    expect(dup.text).toMatch(/edit_failed/);
  });

  test("refuses a write into the read-only mount, naming what is writable", async () => {
    const r = await call(mountbox, "write_file", { path: "/ro/docs/x.md", content: "no" });
    expect(r.isError).toBe(true);
    expect(r.text).toMatch(/path_not_writable/);
    expect(r.text).toMatch(/writable/i);
    expect(r.text).toContain("/");
    expect(hasHostPath(r.text)).toBe(false);
    const e = await call(mountbox, "edit_file", {
      path: "/ro/docs/guide.md",
      edits: [{ oldText: "read", newText: "write" }],
    });
    expect(e.isError).toBe(true);
    expect(readFileSync(join(ro, "docs/guide.md"), "utf8")).toBe("read me\n");
  });

  test("refuses traversal and links out of the sandbox", async () => {
    for (const [tool, args] of [
      ["read_text_file", { path: "/../../etc/passwd" }],
      ["read_text_file", { path: "../outside/secret.txt" }],
      ["read_text_file", { path: "/escape.txt" }],
      ["list_directory", { path: "/escape-dir" }],
      ["write_file", { path: "/escape.txt", content: "pwned" }],
      ["write_file", { path: "/escape-dir/new.txt", content: "pwned" }],
      ["get_file_info", { path: "/escape.txt" }],
    ] as const) {
      const r = await call(mountbox, tool, args);
      expect(r.isError, `${tool} ${JSON.stringify(args)}: ${r.text}`).toBe(true);
      expect(hasHostPath(r.text)).toBe(false);
      expect(r.text).not.toContain("TOP SECRET");
    }
    expect(readFileSync(join(outside, "secret.txt"), "utf8")).toBe("TOP SECRET\n");
    const tree = await call(mountbox, "search_files", { path: "/", pattern: "**/*secret*" });
    expect(tree.text).toBe("No matches found");
  });

  test("directory_tree shows the mounted layout; search_files finds files and folders", async () => {
    const t = await call(mountbox, "directory_tree", {
      path: "/",
      excludePatterns: ["out", "lib"],
    });
    expect(t.isError).toBe(false);
    const tree = JSON.parse(t.text) as { name: string; type: string; children?: unknown[] }[];
    const names = tree.map((n) => n.name);
    expect(names).toEqual(expect.arrayContaining(["README.md", "src", "empty", "ro", "notes.txt"]));
    expect(names).not.toContain("out");
    expect(tree.find((n) => n.name === "ro")).toEqual({
      name: "ro",
      type: "directory",
      children: [
        { name: "docs", type: "directory", children: [{ name: "guide.md", type: "file" }] },
      ],
    });
    expect(tree.find((n) => n.name === "empty")).toEqual({
      name: "empty",
      type: "directory",
      children: [],
    });
    expect(tree.find((n) => n.name === "src")).toEqual({
      name: "src",
      type: "directory",
      children: [{ name: "a.ts", type: "file" }],
    });
    const s = await call(mountbox, "search_files", { path: "/", pattern: "**/*.ts" });
    expect(s.text).toBe("/src/a.ts\n/src/lib/util.ts");
    const d = await call(mountbox, "search_files", { path: "/src", pattern: "lib" });
    expect(d.text).toBe("/src/lib");
    const ls = await call(mountbox, "list_directory", { path: "/" });
    expect(ls.text.split("\n")).toEqual(
      expect.arrayContaining(["[DIR] ro", "[DIR] src", "[FILE] README.md"]),
    );
    const sized = await call(mountbox, "list_directory_with_sizes", {
      path: "/src",
      sortBy: "size",
    });
    expect(sized.text).toMatch(/\[FILE\] a\.ts +\d+ B/);
    expect(sized.text).toContain("Total: 1 files, 1 directories");
  });

  test("get_file_info, list_allowed_directories, list_allowed_paths, grep", async () => {
    const info = await call(mountbox, "get_file_info", { path: "/notes.txt" });
    expect(info.text).toContain("size: 17");
    expect(info.text).toContain("isFile: true");
    const dirs = await call(mountbox, "list_allowed_directories", {});
    expect(dirs.text).toMatch(/^Allowed directories:\n\//);
    expect(hasHostPath(dirs.text)).toBe(false);
    const paths = await call(mountbox, "list_allowed_paths", {});
    expect(paths.text).toContain("/ro (read-only)");
    const g = await call(mountbox, "grep", { pattern: "return \\d+" });
    expect(g.isError).toBe(false);
    expect(g.text).toContain("/src/lib/util.ts:2:");
    const bad = await call(mountbox, "grep", { pattern: "(" });
    expect(bad.isError).toBe(true);
  });

  test("keeps serving after bad input: wrong types, a NUL byte, a 5 MB argument", async () => {
    const wrong = await call(mountbox, "read_text_file", { path: 42 });
    expect(wrong.isError).toBe(true);
    const missing = await call(mountbox, "edit_file", { path: "/notes.txt" });
    expect(missing.isError).toBe(true);
    const nul = await call(mountbox, "read_text_file", { path: "/notes\0.txt" });
    expect(nul.isError).toBe(true);
    expect(nul.text).toMatch(/NUL/);
    const huge = await call(mountbox, "read_text_file", {
      path: `/${"a".repeat(5 * 1024 * 1024)}`,
    });
    expect(huge.isError).toBe(true);
    expect(huge.text.length).toBeLessThan(2000);
    const big = await call(mountbox, "write_file", {
      path: "/out/big.txt",
      content: "b".repeat(5 * 1024 * 1024),
    });
    expect(big.isError).toBe(false);
    const unknown = await call(mountbox, "no_such_tool", {}).catch((e: Error) => ({
      isError: true,
      text: e.message,
    }));
    expect(unknown.isError).toBe(true);
    const ok = await call(mountbox, "read_text_file", { path: "/notes.txt", head: 1 });
    expect(ok.text).toBe("alpha");
    expect(hasHostPath(stderr)).toBe(false);
  });
});
