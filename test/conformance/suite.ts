/**
 * One conformance suite for every face of a sandbox: the in-process `Sandbox`
 * and `ctx.sandbox` inside a real agent thread run the same cases, so the
 * port boundary cannot drift from the sandbox it serves.
 */
import { mkdir, mkdtemp, readFile, realpath, rm, stat, symlink, writeFile } from "node:fs/promises";
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
  SecretWithheldError,
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
 * `/src/notes-private.txt`, `/docs/readme.md`, and `/cache/data.txt` on a
 * read-only mount; and secrets the default `secrets` list withholds:
 * `/.env`, `/src/keys/server.pem`, `/src/.ssh/config`, a link
 * `/src/link.txt` → `/.env` and a folder link `/src/sshdir` → `/src/.ssh`.
 * The child also withholds `notes-*.txt`. `make`
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
    "root/src/notes-private.txt": "private\n",
    "root/docs/readme.md": "docs\n",
    "cache/data.txt": "cached\n",
    "root/.env": "API_TOKEN=top-secret-env\n",
    "root/src/keys/server.pem": "top-secret-pem\n",
    "root/src/.ssh/config": "top-secret-ssh\n",
  };
  for (const [rel, content] of Object.entries(files)) {
    await mkdir(join(root, rel, ".."), { recursive: true });
    await writeFile(join(root, rel), content);
  }
  await symlink("../.env", join(root, "root/src/link.txt"));
  await symlink(".ssh", join(root, "root/src/sshdir"));
  const top = make({
    root: join(root, "root"),
    mounts: [{ source: join(root, "cache"), target: "/cache", readonly: true }],
  });
  const child = top.derive({
    allowRead: ["/src", "/cache"],
    allowWrite: ["/src"],
    secrets: ["notes-*.txt"],
  });
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
          "/src/notes-private.txt",
        ]);
        expect(await sb.listFiles("/src", "**/*.txt")).toEqual([
          "/src/a.txt",
          "/src/nested/c.txt",
          "/src/notes-private.txt",
        ]);
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

      it("withholds secrets from every read, naming the entry, never their content", async () => {
        for (const read of [
          () => sb.readFile("/.env"),
          () => sb.readBytes("/.env"),
          () => sb.stat("/.env"),
          () => sb.editFile("/.env", [{ oldText: "API", newText: "X" }], { dryRun: true }),
          () => sb.readFile("/src/keys/server.pem"),
          () => sb.readFile("/src/.ssh/config"),
          () => sb.stat("/src/.ssh"),
          () => sb.listFiles("/src/.ssh"),
          () => sb.readFile("/src/link.txt"),
          () => sb.readFile("/src/sshdir/config"),
        ]) {
          const e = await rejection(read());
          expect(e).toBeInstanceOf(SecretWithheldError);
          expect(e.code).toBe("secret_withheld");
          expect(e.message).toContain("withheld by configuration");
          expect(e.message).not.toContain("top-secret");
        }
        const e = await rejection(sb.readFile("/.env"));
        expect(e.path).toBe("/.env");
        expect(e.message).toContain("it exists");
        expect(e.message).toContain("'.env'");
        expect(e.message).toContain("'secrets' list");
        // A secret that is not there is simply not found.
        expect((await rejection(sb.readFile("/src/.env.local"))).code).toBe("not_found");
        expect(await sb.exists("/.env")).toBe(false);
        expect(await sb.canRead("/.env")).toBe(false);
        expect(await sb.canRead("/src/sshdir/config")).toBe(false);
        const d = (await sb.describe()) as { secrets: string[] };
        expect(d.secrets).toEqual(expect.arrayContaining([".env", ".env.*", "*.pem", ".ssh/"]));
      });

      it("leaves secrets, and links to them, out of every listing", async () => {
        const all = await sb.listFiles();
        expect(all.some((p) => /\.env|\.pem|\.ssh|sshdir|link\.txt/.test(p))).toBe(false);
        expect(await sb.listFiles("/", "**/.*")).toEqual([]);
        expect(await sb.listFiles("/src", "**/*.pem")).toEqual([]);
      });

      it("refuses every change of a secret, and of a folder holding one", async () => {
        for (const change of [
          () => sb.writeFile("/.env", "x"),
          () => sb.writeFile("/src/.env.production", "x"),
          () => sb.writeFile("/src/KEY.PEM", "x"),
          () => sb.mkdir("/src/.aws"),
          () => sb.remove("/.env"),
          () => sb.move("/.env", "/src/plain.txt"),
          () => sb.move("/src/a.txt", "/.env", { overwrite: true }),
          () => sb.move("/src/a.txt", "/src/new.key"),
        ]) {
          const e = await rejection(change());
          expect(e.code).toBe("secret_withheld");
        }
        const held = await rejection(sb.remove("/src", { recursive: true }));
        expect(held.code).toBe("secret_withheld");
        expect(held.path).toBe("/src");
        expect(held.message).not.toMatch(/server\.pem|\.ssh/);
        expect((await rejection(sb.move("/src", "/moved"))).code).toBe("secret_withheld");
        expect(await readFile(host("root/.env"), "utf8")).toBe("API_TOKEN=top-secret-env\n");
        expect(await readFile(host("root/src/a.txt"), "utf8")).toBe("hello\nworld\n");
        expect(await readFile(host("root/src/keys/server.pem"), "utf8")).toBe("top-secret-pem\n");
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

      it("keeps its parent's secrets and withholds the one it added", async () => {
        const e = await rejection(sb.readFile("/src/notes-private.txt"));
        expect(e).toBeInstanceOf(SecretWithheldError);
        expect(e.message).toContain("'notes-*.txt'");
        expect((await rejection(sb.readFile("/src/keys/server.pem"))).code).toBe("secret_withheld");
        expect((await rejection(sb.readFile("/src/sshdir/config"))).code).toBe("secret_withheld");
        // A link to a secret outside its areas leads outside first.
        expect((await rejection(sb.readFile("/src/link.txt"))).code).toBe("path_not_in_sandbox");
        const d = (await sb.describe()) as { secrets: string[] };
        expect(d.secrets).toContain(".env");
        expect(d.secrets).toContain("notes-*.txt");
        expect(await sb.exists("/src/notes-private.txt")).toBe(false);
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
