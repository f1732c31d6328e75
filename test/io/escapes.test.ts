import { execFileSync } from "node:child_process";
import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
  truncateSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  createSandbox,
  FileTooLargeError,
  IoError,
  PathNotInSandboxError,
  PathNotWritableError,
  type Sandbox,
  SandboxError,
} from "../../src/index.js";
import { setRaceHookForTests } from "../../src/sandbox/fd-check.js";
import { expectRejection } from "../helpers/expect-error.js";
import { makeTempDir, removeDir, snapshotTree, writeTree } from "../helpers/tree.js";

let base: string;
let root: string;
let outside: string;
let roSource: string;
let sb: Sandbox;
let outsideBefore: Record<string, string>;
let roBefore: Record<string, string>;

beforeEach(() => {
  base = makeTempDir();
  root = join(base, "root");
  outside = join(base, "outside");
  roSource = join(base, "ro");
  writeTree(outside, { "secret.txt": "SECRET", dir: { "inner.txt": "INNER" } });
  writeTree(roSource, { "locked.txt": "LOCKED", sub: {} });
  writeTree(root, {
    src: { "a.ts": "a" },
    "dir-link": { link: join(outside, "dir") },
    "file-link": { link: join(outside, "secret.txt") },
    "dangling-out": { link: join(outside, "created-by-write.txt") },
    "dangling-out-dir": { link: join(outside, "newdir") },
    "into-ro": { link: join(roSource, "locked.txt") },
    "into-ro-dir": { link: join(roSource, "sub") },
    "rel-escape": { link: "../outside/secret.txt" },
  });
  sb = createSandbox(
    { root: "root", mounts: [{ source: "ro", target: "/ro", readonly: true }] },
    { basePath: base },
  );
  outsideBefore = snapshotTree(outside);
  roBefore = snapshotTree(roSource);
});
afterEach(() => {
  setRaceHookForTests(undefined);
  // Nothing outside changed, in any test.
  expect(snapshotTree(outside)).toEqual(outsideBefore);
  expect(snapshotTree(roSource)).toEqual(roBefore);
  removeDir(base);
});

const refused = (p: Promise<unknown>) => expectRejection(p, base);

describe("escapes through links", () => {
  it("writing through a directory link to outside is refused", async () => {
    await refused(sb.writeFile("/dir-link/inner.txt", "pwned"));
    await refused(sb.writeFile("/dir-link/new.txt", "pwned"));
    await refused(sb.mkdir("/dir-link/newdir"));
    await refused(sb.editFile("/dir-link/inner.txt", [{ oldText: "INNER", newText: "x" }]));
  });

  it("writing through a file link or a dangling link to outside is refused", async () => {
    await refused(sb.writeFile("/file-link", "pwned"));
    await refused(sb.writeFile("/rel-escape", "pwned"));
    await refused(sb.writeFile("/dangling-out", "pwned"));
    await refused(sb.writeFile("/dangling-out-dir/x.txt", "pwned"));
    expect(existsSync(join(outside, "created-by-write.txt"))).toBe(false);
    expect(existsSync(join(outside, "newdir"))).toBe(false);
  });

  it("reading through links to outside is refused", async () => {
    for (const p of ["/file-link", "/rel-escape", "/dir-link/inner.txt"]) {
      const e = await refused(sb.readFile(p));
      expect(e).toBeInstanceOf(PathNotInSandboxError);
    }
    await refused(sb.stat("/dir-link"));
    expect(await sb.exists("/file-link")).toBe(false);
  });

  it("a link from a writable area into a read-only mount's source stays read-only", async () => {
    expect(await sb.readFile("/into-ro")).toBe("LOCKED");
    const e = await refused(sb.writeFile("/into-ro", "pwned"));
    expect(e).toBeInstanceOf(PathNotWritableError);
    await refused(sb.writeFile("/into-ro-dir/new.txt", "pwned"));
    await refused(sb.editFile("/into-ro", [{ oldText: "LOCKED", newText: "x" }]));
  });

  it("listFiles never follows directory links nor lists links to outside", async () => {
    expect(await sb.listFiles()).toEqual(["/into-ro", "/ro/locked.txt", "/src/a.ts"]);
  });

  it("remove and move act on the link itself, never on its target", async () => {
    await refused(sb.move("/src/a.ts", "/dir-link/a.ts"));
    await refused(sb.remove("/dir-link/inner.txt"));
    await sb.remove("/file-link");
    expect(existsSync(join(root, "file-link"))).toBe(false);
    await sb.move("/dir-link", "/moved-link");
    await sb.remove("/moved-link", { recursive: true });
    expect(existsSync(join(root, "moved-link"))).toBe(false);
  });
});

describe("races between check and use", () => {
  it("a file swapped for a link after resolve, before open, is refused", async () => {
    setRaceHookForTests((stage, real) => {
      if (stage === "before-open" && real.endsWith("a.ts")) {
        unlinkSync(real);
        symlinkSync(join(outside, "secret.txt"), real);
      }
    });
    const e = await refused(sb.readFile("/src/a.ts"));
    expect(e).toBeInstanceOf(PathNotInSandboxError);
  });

  it("a parent folder swapped for a link after resolve is caught on the descriptor", async () => {
    writeTree(root, { victim: { "secret.txt": "mine" } });
    setRaceHookForTests((stage) => {
      if (stage === "before-open") {
        renameSync(join(root, "victim"), join(root, "victim-old"));
        symlinkSync(outside, join(root, "victim"));
      }
    });
    const e = await refused(sb.readFile("/victim/secret.txt"));
    expect(e).toBeInstanceOf(PathNotInSandboxError);
  });

  it("a target folder swapped for a link during a write lands nothing outside", async () => {
    writeTree(root, { out: {} });
    let swapped = false;
    setRaceHookForTests((stage) => {
      if (stage === "before-rename" && !swapped) {
        swapped = true;
        rmSync(join(root, "out"), { recursive: true, force: true });
        symlinkSync(outside, join(root, "out"));
      }
    });
    await expect(sb.writeFile("/out/file.txt", "data")).rejects.toBeInstanceOf(SandboxError);
    expect(existsSync(join(outside, "file.txt"))).toBe(false);
  });

  it("a tight swap loop in another process never leaks the outside file", async () => {
    writeTree(root, { flip: { "f.txt": "inside" } });
    writeTree(base, { flipper: { "f.txt": "inside" } });
    const script = `
      const fs = require("node:fs");
      const dir = ${JSON.stringify(join(root, "flip"))};
      const end = Date.now() + 1500;
      while (Date.now() < end) {
        try { fs.renameSync(dir, dir + ".real"); fs.symlinkSync(${JSON.stringify(join(outside, "dir"))}, dir); } catch {}
        try { fs.unlinkSync(dir); fs.renameSync(dir + ".real", dir); } catch {}
      }`;
    writeFileSync(join(base, "flipper.cjs"), script);
    const { spawn } = await import("node:child_process");
    const child = spawn(process.execPath, [join(base, "flipper.cjs")], { stdio: "ignore" });
    let reads = 0;
    let refusedCount = 0;
    const until = Date.now() + 1200;
    while (Date.now() < until) {
      try {
        const text = await sb.readFile("/flip/f.txt");
        expect(text).toBe("inside");
        reads++;
      } catch (err) {
        expect(err).toBeInstanceOf(SandboxError);
        expect((err as Error).message).not.toContain("INNER");
        refusedCount++;
      }
      await new Promise((r) => setImmediate(r));
    }
    await new Promise((r) => child.on("exit", r));
    expect(reads + refusedCount).toBeGreaterThan(10);
  });
});

describe("special files and sizes", () => {
  it("a FIFO in the sandbox never blocks a read", async () => {
    execFileSync("mkfifo", [join(root, "pipe")]);
    const e = await refused(sb.readFile("/pipe"));
    expect(e).toBeInstanceOf(IoError);
    expect(e.message).toMatchInlineSnapshot(
      `"I/O error during read on '/pipe': it is not a regular file."`,
    );
    expect(await sb.listFiles()).not.toContain("/pipe");
  });

  it("a huge file with a small cap is refused without being read", async () => {
    const p = join(root, "huge.bin");
    closeSync(openSync(p, "w"));
    truncateSync(p, 8 * 1024 * 1024 * 1024); // sparse 8 GiB
    const capped = createSandbox({ root: "root", maxFileBytes: 1024 }, { basePath: base });
    const e = await refused(capped.readBytes("/huge.bin"));
    expect(e).toBeInstanceOf(FileTooLargeError);
    expect(e.message).toMatchInlineSnapshot(`
      "Cannot read '/huge.bin': 8589934592 bytes is over the limit of 1024 bytes.
      Work with a smaller file, or ask for a larger max_file_bytes."
    `);
    // Decided on fstat: reading 8 GiB whole would exhaust memory long before.
    expect(process.memoryUsage().arrayBuffers).toBeLessThan(1024 * 1024 * 1024);
    rmSync(p);
  });

  it("mount sources cannot be escaped by NUL, ~, drive letters or pasted host paths", async () => {
    for (const p of [
      "/src/a.ts\0.png",
      "~/secret.txt",
      "C:\\outside\\secret.txt",
      `${root}/../outside/secret.txt`,
      `${root}\\..\\outside`,
    ]) {
      await refused(sb.readFile(p));
      await refused(sb.writeFile(p, "x"));
    }
    // A host path outside every root is just an absolute virtual path here:
    // it names nothing that exists, and writing it stays inside the root.
    await expect(sb.readFile(join(outside, "secret.txt"))).rejects.toBeInstanceOf(SandboxError);
    mkdirSync(join(root, "nested"), { recursive: true });
    expect(readFileSync(join(root, "src/a.ts"), "utf8")).toBe("a");
  });
});
