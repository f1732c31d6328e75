/**
 * Regressions for the findings of an adversarial review of Core I/II: each
 * test reproduces a confirmed escape, hang or contract deviation.
 */
import {
  existsSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  createSandbox,
  FileTooLargeError,
  InvalidPathError,
  IoError,
  PathNotInSandboxError,
  PathNotWritableError,
  SandboxError,
  SuffixNotAllowedError,
} from "../../src/index.js";
import { setRaceHookForTests } from "../../src/sandbox/fd-check.js";
import { expectRejection } from "../helpers/expect-error.js";
import { makeTempDir, removeDir, snapshotTree, writeTree } from "../helpers/tree.js";

let root: string;
beforeEach(() => {
  root = makeTempDir();
});
afterEach(() => {
  setRaceHookForTests(undefined);
  removeDir(root);
});

const rejection = (p: Promise<unknown>) => expectRejection(p, root);

describe("a folder holding a read-only mount's source", () => {
  const ro = () => ({ source: join(root, "parent/rosrc"), target: "/ro", readonly: true });

  it("cannot be removed or moved, so the read-only content stays", async () => {
    writeTree(root, { parent: { rosrc: { "locked.txt": "LOCKED" }, "mine.txt": "m" } });
    const sb = createSandbox({ root, mounts: [ro()] });
    const before = snapshotTree(join(root, "parent"));
    expect(
      (await rejection(sb.remove("/parent", { recursive: true }))).message,
    ).toMatchInlineSnapshot(
      `"I/O error during change on '/parent': it contains the folder mounted at '/ro'."`,
    );
    await expect(sb.move("/parent", "/p2")).rejects.toBeInstanceOf(IoError);
    await expect(sb.remove("/parent/rosrc", { recursive: true })).rejects.toBeInstanceOf(IoError);
    expect(snapshotTree(join(root, "parent"))).toEqual(before);
    expect(await sb.readFile("/ro/locked.txt")).toBe("LOCKED");
  });

  it("nor can its read-only entries be removed through the root path", async () => {
    writeTree(root, { parent: { rosrc: { "locked.txt": "LOCKED" } } });
    const sb = createSandbox({ root, mounts: [ro()] });
    await expect(sb.remove("/parent/rosrc/locked.txt")).rejects.toBeInstanceOf(
      PathNotWritableError,
    );
    expect(existsSync(join(root, "parent/rosrc/locked.txt"))).toBe(true);
  });
});

describe("inputs that used to freeze the host", () => {
  it("matches globs that used to backtrack for minutes, at once", async () => {
    writeFileSync(join(root, `${"a".repeat(200)}.txt`), "x");
    const sb = createSandbox({ root });
    expect(await sb.listFiles("/", "*a*a*a*a*a*b")).toEqual([]);
    expect(await sb.listFiles("/", "*a*a*.txt")).toHaveLength(1);
    await expect(sb.listFiles("/", "+(a|aa)*")).resolves.toEqual([]);
    // Classes and many stars need no cap any more: matching is O(pattern × name).
    await expect(sb.listFiles("/", "[a]*a*a*a*a*a*a*b")).resolves.toEqual([]);
    const e = await rejection(sb.listFiles("/", `${"{?,??}".repeat(32)}Z`));
    expect(e.message).toMatchInlineSnapshot(
      `"I/O error during list: pattern '{?,??}{?,??}{?,??}{?,??}{?,??}{?,??}{?,??}{?,??}{?,??}{?,??}{?,??}{?,??}{?,??}{?,??}{?,??}{?,??}{?,?' has more than 256 brace alternatives in one path segment."`,
    );
  });

  it("creates and removes very deep folders in linear time", async () => {
    const sb = createSandbox({ root });
    const deep = `/${Array(1500).fill("e").join("/")}`;
    await sb.mkdir(deep);
    await sb.writeFile(`${deep}/f.txt`, "deep");
    expect(await sb.readFile(`${deep}/f.txt`)).toBe("deep");
    expect(await sb.listFiles("/", "**/e/**/e/**/e/**/f.txt")).toEqual([`${deep}/f.txt`]);
    expect(await sb.listFiles("/", "**/e/**/e/**/e/**/g.txt")).toEqual([]);
    await sb.remove("/e", { recursive: true });
    expect(existsSync(join(root, "e"))).toBe(false);
  });
});

describe("pasted host paths in every spelling", () => {
  it("are refused with the virtual hint and create nothing", async () => {
    writeTree(root, { src: { "a.ts": "A" } });
    const sb = createSandbox({ root: join(root, "src") });
    const host = join(root, "src");
    for (const p of [
      `/${host}/a.ts`,
      `//${host}/a.ts`,
      `${host.slice(1)}/a.ts`,
      `/x/..${host}/a.ts`,
      `/.${host}/a.ts`,
    ]) {
      const e = await rejection(sb.writeFile(p, "B"));
      expect(e, p).toBeInstanceOf(InvalidPathError);
      expect(e.path, p).toBe("/a.ts");
    }
    expect(snapshotTree(root)).toEqual({ src: "<dir>", "src/a.ts": "A" });
  });
});

describe("listing through a link to outside", () => {
  it("refuses without walking outside or leaking a name from there", async () => {
    const outside = realpathSync(mkdtempSync(join(root, "..", "mountbox-outside-")));
    try {
      writeTree(outside, { "secret-name.txt": "s" });
      writeTree(root, { inside: { "a.txt": "a" } });
      symlinkSync(outside, join(root, "inside", "dirlink"));
      const sb = createSandbox({ root });
      const e = await rejection(sb.listFiles("/inside/dirlink"));
      expect(e).toBeInstanceOf(PathNotInSandboxError);
      expect(JSON.stringify(await sb.listFiles("/"))).not.toContain("secret-name");
      // A child that may read only below a folder swapped for a link later
      // must not walk through it.
      writeTree(root, { inside: { real: { sub: { "b.txt": "b" } } } });
      writeTree(outside, { sub: { "outside-name.txt": "o" } });
      const child = sb.derive({ allowRead: ["/inside/real/sub", "/inside/a.txt"] });
      expect(await child.listFiles("/inside")).toEqual(["/inside/a.txt", "/inside/real/sub/b.txt"]);
      rmSync(join(root, "inside/real"), { recursive: true });
      symlinkSync(outside, join(root, "inside/real"));
      expect(await child.listFiles("/inside")).toEqual(["/inside/a.txt"]);
      await expect(child.listFiles("/inside/real")).rejects.toBeInstanceOf(SandboxError);
    } finally {
      rmSync(outside, { recursive: true, force: true });
    }
  });
});

describe("the suffix rule on what was opened", () => {
  it("holds when a folder is swapped for a file between check and open", async () => {
    writeTree(root, { foo: {}, "note.txt": "n" });
    const sb = createSandbox({ root, suffixes: [".txt"] });
    setRaceHookForTests((stage, real) => {
      if (stage === "before-open" && real.endsWith("/foo")) {
        rmSync(real, { recursive: true });
        writeFileSync(real, "not a .txt file");
      }
    });
    await expect(sb.readFile("/foo")).rejects.toBeInstanceOf(SuffixNotAllowedError);
    setRaceHookForTests(undefined);
    await expect(sb.stat("/foo")).rejects.toBeInstanceOf(SuffixNotAllowedError);
  });
});

describe("one folder mounted twice", () => {
  it("answers canWrite as the I/O does: read-only through both", async () => {
    writeTree(root, { shared: { "f.txt": "F" }, r: {} });
    const shared = join(root, "shared");
    const sb = createSandbox({
      root: join(root, "r"),
      mounts: [
        { source: shared, target: "/a" },
        { source: shared, target: "/b", readonly: true },
      ],
    });
    expect(sb.canWrite("/a/f.txt")).toBe(false);
    expect(() => sb.resolve("/a/f.txt", "write")).toThrow(PathNotWritableError);
    await expect(sb.writeFile("/a/f.txt", "G")).rejects.toBeInstanceOf(PathNotWritableError);
    expect(readFileSync(join(shared, "f.txt"), "utf8")).toBe("F");
  });
});

describe("smaller I/O deviations", () => {
  it("writes a 255-byte multibyte file name", async () => {
    const sb = createSandbox({ root });
    const name = "€".repeat(85);
    await sb.writeFile(`/${name}`, "euro");
    expect(readFileSync(join(root, name), "utf8")).toBe("euro");
  });

  it("refuses a move that would land a file over the destination's size cap", async () => {
    writeTree(root, { big: { "f.txt": "x".repeat(50) }, small: {} });
    const sb = createSandbox({
      paths: {
        big: { root: join(root, "big"), mode: "rw" },
        small: { root: join(root, "small"), mode: "rw", maxFileBytes: 10 },
      },
    });
    await expect(sb.move("/big/f.txt", "/small/f.txt")).rejects.toBeInstanceOf(FileTooLargeError);
    expect(existsSync(join(root, "big/f.txt"))).toBe(true);
    expect(existsSync(join(root, "small/f.txt"))).toBe(false);
  });

  it("lets a child granted exactly one file remove it", async () => {
    writeTree(root, { src: { "b.ts": "b", "c.ts": "c" } });
    const child = createSandbox({ root }).derive({ allowWrite: "/src/b.ts" });
    await child.remove("/src/b.ts");
    expect(existsSync(join(root, "src/b.ts"))).toBe(false);
    await expect(child.remove("/src/c.ts")).rejects.toBeInstanceOf(SandboxError);
  });

  it("moves a folder across devices all or nothing", async () => {
    const shm = realpathSync(mkdtempSync("/dev/shm/mountbox-test-"));
    try {
      writeTree(root, { dir: { "a.txt": "a", link: { link: "a.txt" } } });
      const sb = createSandbox({ root, mounts: [{ source: shm, target: "/shm" }] });
      await expect(sb.move("/dir", "/shm/dir")).rejects.toBeInstanceOf(IoError);
      expect(existsSync(join(shm, "dir"))).toBe(false);
      rmSync(join(root, "dir/link"));
      await sb.move("/dir", "/shm/dir");
      expect(readFileSync(join(shm, "dir/a.txt"), "utf8")).toBe("a");
      expect(existsSync(join(root, "dir"))).toBe(false);
    } finally {
      rmSync(shm, { recursive: true, force: true });
    }
  });
});

describe("messages about links", () => {
  it("name a link's target only where the caller may read", async () => {
    writeTree(root, {
      src: { "peek.txt": { link: "../secret/hidden-name.txt" } },
      secret: { "hidden-name.txt": "h" },
    });
    const child = createSandbox({ root }).restrict({ restrict: "/src" });
    const e = await rejection(child.readFile("/src/peek.txt"));
    expect(e.message).not.toContain("hidden-name");
    expect(e.message).toMatchInlineSnapshot(`
      "Cannot access '/src/peek.txt': it leads (through a link) to a location outside the sandbox.
      Readable paths: /src"
    `);
  });
});

describe("operations of an agent that stopped (issue 10, finding 12)", () => {
  it("a recursive remove whose signal was aborted deletes nothing", async () => {
    writeTree(root, { t: { a: "A", b: { c: "C" } } });
    const sb = createSandbox({ root });
    const stop = new AbortController();
    stop.abort();
    const e = await rejection(sb.remove("/t", { recursive: true, signal: stop.signal }));
    expect(e.message).toMatch(/the agent stopped before it finished; nothing was changed/);
    expect(existsSync(join(root, "t", "b", "c"))).toBe(true);
  });

  it("a listing whose signal was aborted stops", async () => {
    writeTree(root, { t: { a: "A" } });
    const sb = createSandbox({ root });
    const stop = new AbortController();
    stop.abort();
    await expect(sb.listFiles("/", "**/*", { signal: stop.signal })).rejects.toThrow(/stopped/);
  });
});
