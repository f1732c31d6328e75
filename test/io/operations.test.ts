import { chmodSync, existsSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  createSandbox,
  EditFailedError,
  FileExistsError,
  FileNotFoundError,
  FileTooLargeError,
  IoError,
  PathNotInSandboxError,
  PathNotWritableError,
  type Sandbox,
  SuffixNotAllowedError,
} from "../../src/index.js";
import { expectRejection } from "../helpers/expect-error.js";
import { makeTempDir, removeDir, snapshotTree, writeTree } from "../helpers/tree.js";

let base: string;
let root: string;
let sb: Sandbox;

const errorOf = (p: Promise<unknown>) => expectRejection(p, base);

beforeEach(() => {
  base = makeTempDir();
  root = join(base, "root");
  writeTree(root, {
    src: { "a.ts": "export const a = 1;\n", lib: { "b.ts": "b" }, ".hidden": "h" },
    docs: { "guide.md": "# Guide\n\nline one\nline two\n" },
    ".git": { config: "[core]" },
    empty: {},
  });
  writeTree(join(base, "cache"), { "pkg.json": "{}", deep: { "x.txt": "x" } });
  writeTree(join(base, "out"), {});
  sb = createSandbox(
    { root: "root", mounts: ["cache:/cache:ro", "out:/build/out"] },
    { basePath: base },
  );
});
afterEach(() => removeDir(base));

describe("readFile / readBytes", () => {
  it("reads text and bytes from the root and from mounts", async () => {
    expect(await sb.readFile("/src/a.ts")).toBe("export const a = 1;\n");
    expect(await sb.readFile("src/lib/b.ts")).toBe("b");
    expect(await sb.readFile("/cache/pkg.json")).toBe("{}");
    const bytes = await sb.readBytes("/cache/deep/x.txt");
    expect(bytes).toBeInstanceOf(Uint8Array);
    expect(Buffer.from(bytes).toString()).toBe("x");
  });

  it("reads files larger than the sync threshold", async () => {
    const big = "z".repeat(600 * 1024);
    writeFileSync(join(root, "big.txt"), big);
    expect(await sb.readFile("/big.txt")).toBe(big);
  });

  it("says what is missing and where to look", async () => {
    const e = await errorOf(sb.readFile("/src/nope/x.ts"));
    expect(e).toBeInstanceOf(FileNotFoundError);
    expect(e.message).toMatchInlineSnapshot(`
      "Not found: '/src/nope/x.ts' does not exist.
      Nearest existing directory: '/src'"
    `);
  });

  it("refuses a directory with a clear error", async () => {
    const e = await errorOf(sb.readFile("/src"));
    expect(e).toBeInstanceOf(IoError);
    expect(e.message).toMatchInlineSnapshot(
      `"I/O error during read on '/src': it is a directory, not a file (use listFiles)."`,
    );
  });

  it("enforces maxFileBytes on reads, before reading", async () => {
    const capped = createSandbox({ root: "root", maxFileBytes: 10 }, { basePath: base });
    expect(await capped.readFile("/src/lib/b.ts")).toBe("b");
    const e = await errorOf(capped.readFile("/src/a.ts"));
    expect(e).toBeInstanceOf(FileTooLargeError);
    expect(e.message).toMatchInlineSnapshot(`
      "Cannot read '/src/a.ts': 20 bytes is over the limit of 10 bytes.
      Work with a smaller file, or ask for a larger max_file_bytes."
    `);
  });

  it("enforces suffixes", async () => {
    const md = createSandbox({ root: "root", suffixes: [".md"] }, { basePath: base });
    expect(await md.readFile("/docs/guide.md")).toContain("Guide");
    await expect(md.readFile("/src/a.ts")).rejects.toBeInstanceOf(SuffixNotAllowedError);
  });
});

describe("writeFile", () => {
  it("writes atomically, creating parents, and leaves no temp file", async () => {
    await sb.writeFile("/new/deep/dir/f.txt", "hello");
    expect(readFileSync(join(root, "new/deep/dir/f.txt"), "utf8")).toBe("hello");
    await sb.writeFile("/new/deep/dir/f.txt", new Uint8Array([104, 105]));
    expect(readFileSync(join(root, "new/deep/dir/f.txt"), "utf8")).toBe("hi");
    expect(readdirSync(join(root, "new/deep/dir"))).toEqual(["f.txt"]);
  });

  it("keeps the old file's mode", async () => {
    chmodSync(join(root, "src/a.ts"), 0o640);
    await sb.writeFile("/src/a.ts", "changed");
    expect(statSync(join(root, "src/a.ts")).mode & 0o777).toBe(0o640);
  });

  it("writes into a read-write mount and refuses a read-only one", async () => {
    await sb.writeFile("/build/out/r.txt", "r");
    expect(readFileSync(join(base, "out/r.txt"), "utf8")).toBe("r");
    const e = await errorOf(sb.writeFile("/cache/new.txt", "x"));
    expect(e).toBeInstanceOf(PathNotWritableError);
    expect(existsSync(join(base, "cache/new.txt"))).toBe(false);
  });

  it("refuses writes under .git", async () => {
    const e = await errorOf(sb.writeFile("/.git/config", "evil"));
    expect(e).toBeInstanceOf(PathNotWritableError);
    expect(readFileSync(join(root, ".git/config"), "utf8")).toBe("[core]");
  });

  it("refuses content over maxFileBytes and loses nothing", async () => {
    const capped = createSandbox({ root: "root", maxFileBytes: 4 }, { basePath: base });
    const e = await errorOf(capped.writeFile("/src/lib/b.ts", "too long"));
    expect(e).toBeInstanceOf(FileTooLargeError);
    expect(readFileSync(join(root, "src/lib/b.ts"), "utf8")).toBe("b");
    expect(readdirSync(join(root, "src/lib"))).toEqual(["b.ts"]);
  });

  it("refuses to replace a directory, and bad content, cleanly", async () => {
    await expect(sb.writeFile("/src", "x")).rejects.toBeInstanceOf(IoError);
    await expect(sb.writeFile("/src/x.txt", 42 as never)).rejects.toBeInstanceOf(IoError);
    expect(existsSync(join(root, "src/x.txt"))).toBe(false);
  });

  it("refuses when a file stands where a directory must be", async () => {
    const e = await errorOf(sb.writeFile("/src/a.ts/child.txt", "x"));
    expect(e).toBeInstanceOf(IoError);
    expect(readFileSync(join(root, "src/a.ts"), "utf8")).toContain("export");
  });
});

describe("editFile", () => {
  it("applies edits in order and returns a unified diff", async () => {
    const { diff } = await sb.editFile("/docs/guide.md", [
      { oldText: "line one", newText: "line 1" },
      { oldText: "line 1\nline two", newText: "line 1\nline 2" },
    ]);
    expect(readFileSync(join(root, "docs/guide.md"), "utf8")).toBe("# Guide\n\nline 1\nline 2\n");
    expect(diff).toMatchInlineSnapshot(`
      "--- /docs/guide.md
      +++ /docs/guide.md
      @@ -1,4 +1,4 @@
       # Guide
       
      -line one
      -line two
      +line 1
      +line 2
      "
    `);
  });

  it("dryRun returns the diff and writes nothing", async () => {
    const { diff } = await sb.editFile(
      "/docs/guide.md",
      [{ oldText: "Guide", newText: "Manual" }],
      { dryRun: true },
    );
    expect(diff).toContain("+# Manual");
    expect(readFileSync(join(root, "docs/guide.md"), "utf8")).toContain("# Guide");
  });

  it("fails on no match or several, writing nothing", async () => {
    const none = await errorOf(
      sb.editFile("/docs/guide.md", [{ oldText: "absent text", newText: "x" }]),
    );
    expect(none).toBeInstanceOf(EditFailedError);
    expect(none.message).toMatchInlineSnapshot(`
      "Edit #1 on '/docs/guide.md' failed: oldText was not found. Read the file again and copy the text exactly, including whitespace.
      oldText starts with: "absent text""
    `);
    const many = await errorOf(
      sb.editFile("/docs/guide.md", [
        { oldText: "Guide", newText: "G" },
        { oldText: "line", newText: "x" },
      ]),
    );
    expect(many.message).toMatchInlineSnapshot(`
      "Edit #2 on '/docs/guide.md' failed: oldText was found 2 times. Include more surrounding lines so it matches exactly once.
      oldText starts with: "line""
    `);
    expect(readFileSync(join(root, "docs/guide.md"), "utf8")).toContain("# Guide");
  });

  it("keeps a byte-order mark and every byte it did not edit", async () => {
    const bom = Buffer.from([0xef, 0xbb, 0xbf]);
    writeFileSync(join(root, "docs/bom.md"), Buffer.concat([bom, Buffer.from("title\r\nbody\n")]));
    await sb.editFile("/docs/bom.md", [{ oldText: "body", newText: "BODY" }]);
    expect(readFileSync(join(root, "docs/bom.md"))).toEqual(
      Buffer.concat([bom, Buffer.from("title\r\nBODY\n")]),
    );
    // The first line, BOM and all, can be edited as text.
    await sb.editFile("/docs/bom.md", [{ oldText: "title", newText: "TITLE" }]);
    expect(readFileSync(join(root, "docs/bom.md"))).toEqual(
      Buffer.concat([bom, Buffer.from("TITLE\r\nBODY\n")]),
    );
  });
  it("needs write access", async () => {
    await expect(
      sb.editFile("/cache/pkg.json", [{ oldText: "{}", newText: "[]" }]),
    ).rejects.toBeInstanceOf(PathNotWritableError);
  });
});

describe("listFiles", () => {
  it("lists readable files only, dotfiles included, sorted, mounts under their targets", async () => {
    expect(await sb.listFiles()).toEqual([
      "/.git/config",
      "/cache/deep/x.txt",
      "/cache/pkg.json",
      "/docs/guide.md",
      "/src/.hidden",
      "/src/a.ts",
      "/src/lib/b.ts",
    ]);
  });

  it("matches the glob relative to the listed path", async () => {
    expect(await sb.listFiles("/src", "**/*.ts")).toEqual(["/src/a.ts", "/src/lib/b.ts"]);
    expect(await sb.listFiles("/src", "*.ts")).toEqual(["/src/a.ts"]);
    expect(await sb.listFiles("/", "cache/**")).toEqual(["/cache/deep/x.txt", "/cache/pkg.json"]);
  });

  it("lists only what a derived child may read", async () => {
    const child = sb.derive({ allowRead: ["/src/lib", "/cache/deep"] });
    expect(await child.listFiles("/")).toEqual(["/cache/deep/x.txt", "/src/lib/b.ts"]);
    await expect(child.listFiles("/docs")).rejects.toBeInstanceOf(PathNotInSandboxError);
  });

  it("respects suffixes and reports a missing folder", async () => {
    const md = createSandbox({ root: "root", suffixes: [".md"] }, { basePath: base });
    expect(await md.listFiles()).toEqual(["/docs/guide.md"]);
    await expect(sb.listFiles("/missing")).rejects.toBeInstanceOf(FileNotFoundError);
  });
});

describe("stat / exists / mkdir", () => {
  it("stats files and directories", async () => {
    expect(await sb.stat("/src/a.ts")).toMatchObject({ type: "file", size: 20 });
    expect((await sb.stat("/src")).type).toBe("directory");
    expect(typeof (await sb.stat("/cache")).mtimeMs).toBe("number");
  });

  it("exists is false for missing and for refused paths", async () => {
    expect(await sb.exists("/src/a.ts")).toBe(true);
    expect(await sb.exists("/nope")).toBe(false);
    expect(await sb.derive({ allowRead: "/docs" }).exists("/src/a.ts")).toBe(false);
  });

  it("mkdir creates parents, is idempotent, and refuses read-only places", async () => {
    await sb.mkdir("/a/b/c");
    await sb.mkdir("/a/b/c");
    expect(statSync(join(root, "a/b/c")).isDirectory()).toBe(true);
    await expect(sb.mkdir("/cache/newdir")).rejects.toBeInstanceOf(PathNotWritableError);
    expect(existsSync(join(base, "cache/newdir"))).toBe(false);
  });
});

describe("remove", () => {
  it("removes files, empty folders, and folders only recursively when asked", async () => {
    await sb.remove("/src/lib/b.ts");
    expect(existsSync(join(root, "src/lib/b.ts"))).toBe(false);
    await sb.remove("/empty");
    expect(existsSync(join(root, "empty"))).toBe(false);
    const e = await errorOf(sb.remove("/src"));
    expect(e.message).toMatchInlineSnapshot(
      `"I/O error during remove on '/src': the directory is not empty (pass recursive: true to remove it with its contents) (ENOTEMPTY)."`,
    );
    expect(existsSync(join(root, "src/a.ts"))).toBe(true);
    await sb.remove("/src", { recursive: true });
    expect(existsSync(join(root, "src"))).toBe(false);
  });

  it("refuses a subtree holding anything it may not write, and removes nothing", async () => {
    const before = snapshotTree(root);
    await expect(sb.remove("/", { recursive: true })).rejects.toBeInstanceOf(IoError);
    await expect(sb.remove("/build", { recursive: true })).rejects.toBeInstanceOf(IoError);
    writeTree(join(root, "proj"), { ".git": { HEAD: "x" }, "f.txt": "f" });
    await expect(sb.remove("/proj", { recursive: true })).rejects.toBeInstanceOf(
      PathNotWritableError,
    );
    expect(existsSync(join(root, "proj/f.txt"))).toBe(true);
    await expect(sb.remove("/cache/pkg.json")).rejects.toBeInstanceOf(PathNotWritableError);
    await expect(sb.remove("/build/out")).rejects.toBeInstanceOf(IoError);
    expect(snapshotTree(root)).toEqual({
      ...before,
      proj: "<dir>",
      "proj/.git": "<dir>",
      "proj/.git/HEAD": "x",
      "proj/f.txt": "f",
    });
  });
});

describe("move", () => {
  it("renames within a mount and refuses to overwrite unless asked", async () => {
    await sb.move("/src/a.ts", "/src/renamed.ts");
    expect(readFileSync(join(root, "src/renamed.ts"), "utf8")).toContain("export");
    const e = await errorOf(sb.move("/src/renamed.ts", "/src/lib/b.ts"));
    expect(e).toBeInstanceOf(FileExistsError);
    expect(e.message).toMatchInlineSnapshot(
      `"Cannot create '/src/lib/b.ts': it already exists. Pass overwrite: true to replace it."`,
    );
    await sb.move("/src/renamed.ts", "/src/lib/b.ts", { overwrite: true });
    expect(readFileSync(join(root, "src/lib/b.ts"), "utf8")).toContain("export");
  });

  it("moves files and folders across mounts", async () => {
    await sb.move("/docs", "/build/out/docs");
    expect(readFileSync(join(base, "out/docs/guide.md"), "utf8")).toContain("Guide");
    expect(existsSync(join(root, "docs"))).toBe(false);
    await sb.move("/build/out/docs/guide.md", "/guide.md");
    expect(existsSync(join(root, "guide.md"))).toBe(true);
  });

  it("checks both ends", async () => {
    await expect(sb.move("/cache/pkg.json", "/pkg.json")).rejects.toBeInstanceOf(
      PathNotWritableError,
    );
    await expect(sb.move("/src/a.ts", "/cache/a.ts")).rejects.toBeInstanceOf(PathNotWritableError);
    await expect(sb.move("/src/a.ts", "/.git/a.ts")).rejects.toBeInstanceOf(PathNotWritableError);
    await expect(sb.move("/src", "/src/lib/inner")).rejects.toBeInstanceOf(IoError);
    expect(existsSync(join(root, "src/a.ts"))).toBe(true);
    expect(existsSync(join(base, "cache/pkg.json"))).toBe(true);
  });
});

describe("restricted and derived sandboxes", () => {
  it("do the same I/O within their areas", async () => {
    const r = sb.restrict({ restrict: "/src" });
    await r.writeFile("/src/new.ts", "n");
    expect(await r.readFile("/src/new.ts")).toBe("n");
    await expect(r.writeFile("/docs/x.md", "x")).rejects.toBeInstanceOf(PathNotInSandboxError);
    const d = sb.derive({ allowRead: "/docs", allowWrite: "/build/out" });
    await d.writeFile("/build/out/summary.md", "s");
    expect(readFileSync(join(base, "out/summary.md"), "utf8")).toBe("s");
    // allowRead was given, so reads are exactly /docs (DESIGN §4): no read-back.
    await expect(d.readFile("/build/out/summary.md")).rejects.toBeInstanceOf(PathNotInSandboxError);
    await expect(d.writeFile("/docs/guide.md", "x")).rejects.toBeInstanceOf(PathNotWritableError);
  });
});
