/**
 * One conformance suite for every face of a sandbox: the in-process `Sandbox`
 * and `ctx.sandbox` inside a real agent thread run the same cases, so the
 * port boundary cannot drift from the sandbox it serves.
 */
import { mkdir, mkdtemp, readFile, realpath, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  createSandbox,
  EditFailedError,
  FileExistsError,
  FileNotFoundError,
  InvalidPathError,
  PathNotInSandboxError,
  PathNotWritableError,
  type Sandbox,
  type SandboxConfig,
  SandboxError,
} from "../../src/index.js";

/** The worker-side sandbox interface (what `ctx.sandbox` offers). */
export interface SandboxLike {
  readFile(path: string): Promise<string>;
  readBytes(path: string): Promise<Uint8Array>;
  writeFile(path: string, content: string | Uint8Array): Promise<void>;
  editFile(
    path: string,
    edits: { oldText: string; newText: string }[],
    opts?: { dryRun?: boolean },
  ): Promise<{ diff: string }>;
  listFiles(path?: string, pattern?: string): Promise<string[]>;
  stat(path: string): Promise<{ type: "file" | "directory"; size: number; mtimeMs: number }>;
  exists(path: string): Promise<boolean>;
  mkdir(path: string): Promise<void>;
  remove(path: string, opts?: { recursive?: boolean }): Promise<void>;
  move(from: string, to: string, opts?: { overwrite?: boolean }): Promise<void>;
  canRead(path: string): Promise<boolean> | boolean;
  canWrite(path: string): Promise<boolean> | boolean;
  readableRoots(): Promise<string[]> | string[];
  writableRoots(): Promise<string[]> | string[];
  describe(): Promise<unknown> | unknown;
}

/** Which sandbox of the fixture tree a setup should expose. */
export type SandboxVariant = "root" | "child";

/** What a setup hands the suite. */
export interface ConformanceSetup {
  sandbox: SandboxLike;
  /** Host folders of the fixture (no message may contain them). */
  root: string;
  cleanup(): Promise<void>;
}

/** The fixture tree on disk and its host-side sandboxes. */
export interface ConformanceHost {
  /** Temp folder holding `root/` (virtual `/`) and `cache/` (mounted read-only at `/cache`). */
  root: string;
  /** The root sandbox, or its derived child (reads /src and /cache, writes /src). */
  sandboxFor(variant: SandboxVariant): Sandbox;
  cleanup(): Promise<void>;
}

/**
 * Builds the fixture tree: `/src/a.txt`, `/src/b.md`, `/src/nested/c.txt`,
 * `/docs/readme.md`, and `/cache/data.txt` on a read-only mount. `make`
 * builds the sandbox: thread tests pass dist's `createSandbox`, because the
 * host side they run is the built one.
 */
export async function createConformanceHost(
  make: (config: SandboxConfig) => Sandbox = createSandbox,
): Promise<ConformanceHost> {
  const root = await realpath(await mkdtemp(join(tmpdir(), "mountbox-conf-")));
  const files: Record<string, string> = {
    "root/src/a.txt": "hello\nworld\n",
    "root/src/b.md": "# B\n",
    "root/src/nested/c.txt": "c\n",
    "root/docs/readme.md": "docs\n",
    "cache/data.txt": "cached\n",
  };
  for (const [rel, content] of Object.entries(files)) {
    await mkdir(join(root, rel, ".."), { recursive: true });
    await writeFile(join(root, rel), content);
  }
  const top = make({
    root: join(root, "root"),
    mounts: [{ source: join(root, "cache"), target: "/cache", readonly: true }],
  });
  const child = top.derive({ allowRead: ["/src", "/cache"], allowWrite: ["/src"] });
  return {
    root,
    sandboxFor: (variant) => (variant === "root" ? top : child),
    cleanup: () => rm(root, { recursive: true, force: true }),
  };
}

/**
 * Registers the suite. `setup(variant)` must give a fresh sandbox over a
 * fresh {@link createConformanceHost} tree for each test.
 */
export function runSandboxConformance(
  label: string,
  setup: (variant: SandboxVariant) => Promise<ConformanceSetup>,
): void {
  describe(`sandbox conformance: ${label}`, () => {
    let ctx: ConformanceSetup;
    let sb: SandboxLike;
    const host = (rel: string) => join(ctx.root, rel);

    /** Awaits a rejection and checks no host path leaked into it. */
    async function rejection(p: Promise<unknown>): Promise<SandboxError> {
      const err = await p.then(
        () => {
          throw new Error("expected a rejection");
        },
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(SandboxError);
      const e = err as SandboxError;
      expect(e.message).not.toContain(ctx.root);
      expect(e.stack ?? "").not.toContain(`${ctx.root}/root`);
      expect(e.name).toBe(e.constructor.name);
      return e;
    }

    describe("root sandbox (read-only mount at /cache)", () => {
      beforeEach(async () => {
        ctx = await setup("root");
        sb = ctx.sandbox;
      });
      afterEach(() => ctx.cleanup());

      it("reads text and bytes", async () => {
        expect(await sb.readFile("/src/a.txt")).toBe("hello\nworld\n");
        expect(await sb.readFile("src/nested/c.txt")).toBe("c\n");
        const bytes = await sb.readBytes("/cache/data.txt");
        expect(bytes).toBeInstanceOf(Uint8Array);
        expect(Buffer.from(bytes).toString()).toBe("cached\n");
      });

      it("reports a missing file as FileNotFoundError", async () => {
        const e = await rejection(sb.readFile("/src/missing.txt"));
        expect(e).toBeInstanceOf(FileNotFoundError);
        expect(e.code).toBe("not_found");
        expect(e.path).toBe("/src/missing.txt");
      });

      it("refuses to climb above / and malformed paths", async () => {
        const e = await rejection(sb.readFile("/../etc/passwd"));
        expect(e).toBeInstanceOf(PathNotInSandboxError);
        expect(e.code).toBe("path_not_in_sandbox");
        const bad = await rejection(sb.readFile("/src/a\0.txt"));
        expect(bad).toBeInstanceOf(InvalidPathError);
        expect(bad.code).toBe("invalid_path");
      });

      it("refuses a pasted host path without echoing it as a host path hint leak", async () => {
        const e = await rejection(sb.readFile(host("root/src/a.txt")));
        expect(e).toBeInstanceOf(InvalidPathError);
      });

      it("writes atomically, creating parents, text and bytes", async () => {
        await sb.writeFile("/src/new/deep/n.txt", "new");
        expect(await readFile(host("root/src/new/deep/n.txt"), "utf8")).toBe("new");
        await sb.writeFile("/src/bin.dat", new Uint8Array([0, 1, 2, 255]));
        expect([...(await readFile(host("root/src/bin.dat")))]).toEqual([0, 1, 2, 255]);
        await sb.writeFile("/src/a.txt", "replaced");
        expect(await sb.readFile("/src/a.txt")).toBe("replaced");
      });

      it("refuses writes to the read-only mount with PathNotWritableError", async () => {
        const e = await rejection(sb.writeFile("/cache/data.txt", "x"));
        expect(e).toBeInstanceOf(PathNotWritableError);
        expect(e.code).toBe("path_not_writable");
        expect(e.path).toBe("/cache/data.txt");
        expect(e.message).toContain("Writable paths");
        expect(await readFile(host("cache/data.txt"), "utf8")).toBe("cached\n");
      });

      it("edits with a diff, supports dryRun, and reports a failed match", async () => {
        const dry = await sb.editFile("/src/a.txt", [{ oldText: "world", newText: "there" }], {
          dryRun: true,
        });
        expect(dry.diff).toContain("-world");
        expect(dry.diff).toContain("+there");
        expect(await readFile(host("root/src/a.txt"), "utf8")).toBe("hello\nworld\n");
        await sb.editFile("/src/a.txt", [{ oldText: "world", newText: "there" }]);
        expect(await readFile(host("root/src/a.txt"), "utf8")).toBe("hello\nthere\n");
        const e = await rejection(sb.editFile("/src/a.txt", [{ oldText: "nope", newText: "x" }]));
        expect(e).toBeInstanceOf(EditFailedError);
        expect(e.code).toBe("edit_failed");
      });

      it("lists files, virtual and sorted, mounts included", async () => {
        expect(await sb.listFiles()).toEqual([
          "/cache/data.txt",
          "/docs/readme.md",
          "/src/a.txt",
          "/src/b.md",
          "/src/nested/c.txt",
        ]);
        expect(await sb.listFiles("/src", "**/*.txt")).toEqual(["/src/a.txt", "/src/nested/c.txt"]);
      });

      it("stats files and folders, and answers exists", async () => {
        const f = await sb.stat("/src/a.txt");
        expect(f.type).toBe("file");
        expect(f.size).toBe(12);
        expect(typeof f.mtimeMs).toBe("number");
        expect((await sb.stat("/src")).type).toBe("directory");
        expect(await sb.exists("/src/b.md")).toBe(true);
        expect(await sb.exists("/src/nope.md")).toBe(false);
        const e = await rejection(sb.stat("/src/nope.md"));
        expect(e).toBeInstanceOf(FileNotFoundError);
      });

      it("makes folders with parents and removes files and folders", async () => {
        await sb.mkdir("/src/x/y/z");
        expect((await stat(host("root/src/x/y/z"))).isDirectory()).toBe(true);
        await sb.remove("/src/b.md");
        expect(await sb.exists("/src/b.md")).toBe(false);
        await rejection(sb.remove("/src/nested"));
        expect(await sb.exists("/src/nested/c.txt")).toBe(true);
        await sb.remove("/src/nested", { recursive: true });
        expect(await sb.exists("/src/nested")).toBe(false);
        const e = await rejection(sb.remove("/cache/data.txt"));
        expect(e).toBeInstanceOf(PathNotWritableError);
      });

      it("moves files, refuses to overwrite unless asked, and across mounts", async () => {
        await sb.move("/src/a.txt", "/docs/a.txt");
        expect(await readFile(host("root/docs/a.txt"), "utf8")).toBe("hello\nworld\n");
        const e = await rejection(sb.move("/src/b.md", "/docs/readme.md"));
        expect(e).toBeInstanceOf(FileExistsError);
        expect(e.code).toBe("already_exists");
        await sb.move("/src/b.md", "/docs/readme.md", { overwrite: true });
        expect(await readFile(host("root/docs/readme.md"), "utf8")).toBe("# B\n");
        const ro = await rejection(sb.move("/cache/data.txt", "/src/data.txt"));
        expect(ro).toBeInstanceOf(PathNotWritableError);
      });

      it("answers canRead / canWrite and lists its areas", async () => {
        expect(await sb.canRead("/cache/data.txt")).toBe(true);
        expect(await sb.canWrite("/cache/data.txt")).toBe(false);
        expect(await sb.canWrite("/src/a.txt")).toBe(true);
        expect(await sb.canRead("/../x")).toBe(false);
        expect(await sb.readableRoots()).toEqual(["/"]);
        expect(await sb.writableRoots()).toEqual(["/"]);
        const d = (await sb.describe()) as { mounts: unknown[]; readable: string[] };
        expect(d.readable).toEqual(["/"]);
        expect(d.mounts).toContainEqual({ target: "/cache", readonly: true });
        expect(JSON.stringify(d)).not.toContain(ctx.root);
      });
    });

    describe("derived child (reads /src and /cache, writes /src)", () => {
      beforeEach(async () => {
        ctx = await setup("child");
        sb = ctx.sandbox;
      });
      afterEach(() => ctx.cleanup());

      it("reads inside its areas and nowhere else", async () => {
        expect(await sb.readFile("/src/a.txt")).toBe("hello\nworld\n");
        expect(await sb.readFile("/cache/data.txt")).toBe("cached\n");
        const e = await rejection(sb.readFile("/docs/readme.md"));
        expect(e).toBeInstanceOf(PathNotInSandboxError);
        expect(e.path).toBe("/docs/readme.md");
        expect(await sb.listFiles()).toEqual([
          "/cache/data.txt",
          "/src/a.txt",
          "/src/b.md",
          "/src/nested/c.txt",
        ]);
      });

      it("writes only where its parent let it", async () => {
        await sb.writeFile("/src/out.txt", "ok");
        expect(await readFile(host("root/src/out.txt"), "utf8")).toBe("ok");
        const outside = await rejection(sb.writeFile("/docs/x.md", "x"));
        expect(outside.code === "path_not_in_sandbox" || outside.code === "path_not_writable").toBe(
          true,
        );
        const ro = await rejection(sb.writeFile("/cache/x.txt", "x"));
        expect(ro).toBeInstanceOf(PathNotWritableError);
        const mv = await rejection(sb.move("/src/a.txt", "/docs/a.txt"));
        expect(mv).toBeInstanceOf(SandboxError);
        expect(await readFile(host("root/src/a.txt"), "utf8")).toBe("hello\nworld\n");
      });

      it("reports its narrower areas", async () => {
        expect([...(await sb.readableRoots())].sort()).toEqual(["/cache", "/src"]);
        expect(await sb.writableRoots()).toEqual(["/src"]);
        expect(await sb.canRead("/docs/readme.md")).toBe(false);
        expect(await sb.canWrite("/src/a.txt")).toBe(true);
      });
    });
  });
}
