/**
 * Gaps the MCP reference server's own test vectors found (issue 12), on real
 * files, through every way a listing reaches an agent (`listFiles`, the
 * pool, the tools, a thread):
 * - every path a listing returns reads back the very file it names: a name
 *   holding `\` (which a virtual path reads as `/`) or bytes that are not
 *   UTF-8 is left out, with everything below such a folder;
 * - a name starting with `~` is a name; only `~` and `~/…` mean a home
 *   directory and are refused;
 * - names are matched byte for byte: an NFC path does not find an NFD file.
 * And `grep` from a thread is served by the host's pool, with the same
 * matches as in-process. Runs the built code (dist/), as the pool does.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createSandbox,
  createToolDefinitions,
  FileNotFoundError,
  InvalidPathError,
  type Sandbox,
  type ToolSandbox,
} from "../dist/src/index.js";
import {
  closeSharedPool,
  grepInProcess,
  listFilesPooled,
  searchSandbox,
  sharedPool,
} from "../dist/src/pool/index.js";
import { assertBuilt, startRelay } from "./conformance/thread.js";
import { makeTempDir, removeDir } from "./helpers/tree.js";

const NFC = "caf\u00e9";
const NFD = "cafe\u0301";

let base: string;
let sandbox: Sandbox;

/** Creates a file under `root` from raw name bytes (to make names that are not UTF-8). */
function writeRaw(dir: string, name: Buffer, content: string): void {
  writeFileSync(Buffer.concat([Buffer.from(`${dir}/`), name]), content);
}

beforeAll(() => {
  assertBuilt();
  base = makeTempDir("mountbox-peer-");
  const root = join(base, "root");
  mkdirSync(join(root, "a"), { recursive: true });
  mkdirSync(join(root, "x\\y"), { recursive: true });
  mkdirSync(join(root, "only-nfd"));
  writeFileSync(join(root, "a\\b.txt"), "needle: the backslash file\n");
  writeFileSync(join(root, "a", "b.txt"), "needle: the real /a/b.txt\n");
  writeFileSync(join(root, "x\\y", "z.txt"), "needle below a backslash folder\n");
  writeRaw(
    root,
    Buffer.from([0x62, 0x61, 0x64, 0xff, 0x2e, 0x74, 0x78, 0x74]),
    "needle: not utf-8\n",
  );
  writeFileSync(join(root, "~backup"), "needle: tilde backup\n");
  writeFileSync(join(root, "~$report.docx"), "needle: office lock file\n");
  writeFileSync(join(root, `${NFC}.txt`), "needle: nfc\n");
  writeFileSync(join(root, `${NFD}.txt`), "needle: nfd\n");
  writeFileSync(join(root, "only-nfd", `${NFD}.md`), "needle: only nfd\n");
  sandbox = createSandbox({ root });
});
afterAll(async () => {
  await closeSharedPool();
  removeDir(base);
});

/** What every listing must return for the tree above. */
const EXPECTED = [
  "/a/b.txt",
  `/${NFD}.txt`,
  `/${NFC}.txt`,
  "/only-nfd/cafe\u0301.md",
  "/~$report.docx",
  "/~backup",
].sort();

async function tool(name: string, args: Record<string, unknown>, sb: ToolSandbox = sandbox) {
  const t = (await createToolDefinitions(sb)).find((d) => d.name === name);
  if (!t) throw new Error(`no tool ${name}`);
  return t.execute(args);
}

describe("a listed path reads back the same file", () => {
  it("leaves out names with '\\' (and what lies below them) and names that are not UTF-8", async () => {
    expect(await sandbox.listFiles()).toEqual(EXPECTED);
    expect(await listFilesPooled(sandbox)).toEqual(EXPECTED);
    for (const p of EXPECTED) expect(await sandbox.readFile(p)).toMatch(/^needle: /);
    // What the backslash spelling addresses is the real /a/b.txt, never the other file.
    expect(await sandbox.readFile("/a\\b.txt")).toBe("needle: the real /a/b.txt\n");
  });

  it("gives the tools' list_files and grep the same view", async () => {
    expect(await tool("list_files", {})).toBe(EXPECTED.join("\n"));
    const grep = await tool("grep", { pattern: "needle" });
    expect(grep).not.toMatch(/backslash|not utf-8/);
    expect(grep.split("\n").map((l) => l.slice(0, l.indexOf(":")))).toEqual(EXPECTED);
  });

  it("holds for generated names: '\\', spaces, unicode, '~', '%', NFC/NFD", async () => {
    const char = fc.constantFrom(
      "a",
      "B",
      "\\",
      " ",
      "~",
      "%",
      "$",
      ".",
      "-",
      "é",
      "e\u0301",
      "日",
      "😀",
    );
    const name = fc
      .array(char, { minLength: 1, maxLength: 6 })
      .map((cs) => cs.join(""))
      .filter((n) => n !== "." && n !== "..");
    await fc.assert(
      fc.asyncProperty(fc.uniqueArray(name, { minLength: 1, maxLength: 12 }), async (names) => {
        const dir = makeTempDir("mountbox-peer-prop-");
        try {
          names.forEach((n, i) => {
            writeFileSync(join(dir, n), `file ${i}`);
          });
          const sb = createSandbox({ root: dir });
          const listed = await sb.listFiles();
          expect(listed).toEqual(
            names
              .filter((n) => !n.includes("\\"))
              .map((n) => `/${n}`)
              .sort(),
          );
          for (const p of listed)
            expect(await sb.readFile(p)).toBe(`file ${names.indexOf(p.slice(1))}`);
          expect(await listFilesPooled(sb)).toEqual(listed);
        } finally {
          removeDir(dir);
        }
      }),
      { numRuns: 25 },
    );
  });
});

describe("a name starting with '~' is a name", () => {
  it("reads ~backup and ~$report.docx, relative or absolute", async () => {
    expect(await sandbox.readFile("~backup")).toBe("needle: tilde backup\n");
    expect(await sandbox.readFile("/~backup")).toBe("needle: tilde backup\n");
    expect(await sandbox.readFile("~$report.docx")).toBe("needle: office lock file\n");
    expect(await tool("read_file", { path: "~backup" })).toContain("tilde backup");
  });

  it("still refuses '~' and '~/…' as a home directory", async () => {
    for (const p of ["~", "~/backup", "~\\backup"]) {
      const err = await sandbox.readFile(p).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err, p).toBeInstanceOf(InvalidPathError);
    }
    expect(await tool("read_file", { path: "~/backup" })).toMatchInlineSnapshot(
      `"Error [invalid_path]: Invalid path '~/backup': '~' (a home directory) has no meaning here. Use a virtual path starting with '/', for example '/backup'."`,
    );
  });
});

describe("NFC and NFD spellings are different names", () => {
  it("reads each spelling's own file, and finds no NFD file by its NFC name", async () => {
    expect(await sandbox.readFile(`/${NFC}.txt`)).toBe("needle: nfc\n");
    expect(await sandbox.readFile(`/${NFD}.txt`)).toBe("needle: nfd\n");
    expect(await sandbox.readFile(`/only-nfd/${NFD}.md`)).toBe("needle: only nfd\n");
    const err = await sandbox.readFile(`/only-nfd/${NFC}.md`).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(FileNotFoundError);
  });
});

describe("grep from a thread is served by the host's pool", () => {
  it("returns exactly the in-process matches, and runs in a pool thread", async () => {
    await closeSharedPool();
    const relay = startRelay(sandbox);
    try {
      const thread = relay.sandbox as unknown as {
        grep(o: object): Promise<unknown>;
      } & ToolSandbox;
      const opts = { pattern: "needle", path: "/", flags: "i" };
      const fromThread = await thread.grep(opts);
      // Only the port's grep could have started the shared pool's threads.
      expect(sharedPool().threadCount).toBeGreaterThan(0);
      expect(fromThread).toEqual(await grepInProcess(sandbox, opts));
      expect(fromThread).toEqual(await searchSandbox(sandbox, opts));
      // The grep tool over ctx.sandbox prints what it prints in-process.
      const args = { pattern: "NEEDLE", ignoreCase: true, glob: "**/*.txt" };
      expect(await tool("grep", args, thread)).toBe(await tool("grep", args));
    } finally {
      await relay.stop();
    }
  });
});
