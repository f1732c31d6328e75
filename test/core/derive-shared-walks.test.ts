/**
 * derive() shares disk walks between nested entries of one call (an entry's
 * folder is known from the entry when its last name is no link). These pin
 * that the sharing never answers for a link, never outlives the call (a
 * swap or rename between two derives is always seen), and keeps file
 * entries exact.
 */
import { mkdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createSandbox, type Sandbox, SandboxPermissionEscalationError } from "../../src/index.js";
import { makeTempDir, removeDir, writeTree } from "../helpers/tree.js";

let base: string;
let root: string;
let sb: Sandbox;

beforeEach(() => {
  base = makeTempDir();
  root = join(base, "p");
  writeTree(root, {
    a: { b: { c: { "f.txt": "f" }, "file.txt": "x" } },
    z: { dir: { c: { "g.txt": "g" } }, other: { "o.txt": "o" } },
    src: { "s.ts": "s" },
    src2: { "t.ts": "t" },
  });
  writeTree(join(base, "outside"), { c: { "h.txt": "h" }, "secret.txt": "s" });
  writeTree(join(base, "m"), { x: { "y.txt": "y" } });
  sb = createSandbox({ root: "p", mounts: ["m:/mnt"] }, { basePath: base });
});
afterEach(() => removeDir(base));

function refused(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(SandboxPermissionEscalationError);
    expect((err as Error).message).not.toContain(base);
    return (err as Error).message;
  }
  throw new Error("expected an escalation error");
}

describe("derive: nested entries share one walk, and stay exact", () => {
  it("an inner entry that is a link is walked, not assumed (either order)", () => {
    symlinkSync(join(base, "outside/c"), join(root, "a/b/out"));
    expect(refused(() => sb.derive({ allowRead: "/a/b", allowWrite: "/a/b/out" }))).toContain(
      'allowWrite "/a/b/out": the parent sandbox cannot write it',
    );
    expect(refused(() => sb.derive({ allowWrite: "/a/b/out", allowRead: "/a/b" }))).toContain(
      "allowWrite",
    );
    expect(refused(() => sb.derive({ allowRead: ["/a/b", "/a/b/out"] }))).toContain(
      'allowRead "/a/b/out": the parent sandbox cannot read it',
    );
  });

  it("a dangling link and a link chain under a known folder are refused as before", () => {
    symlinkSync(join(base, "outside/missing"), join(root, "a/b/dangling"));
    symlinkSync("hop2", join(root, "a/b/hop1"));
    symlinkSync(join(base, "outside/c"), join(root, "a/b/hop2"));
    for (const inner of ["/a/b/dangling", "/a/b/hop1", "/a/b/hop1/h.txt"]) {
      expect(refused(() => sb.derive({ allowRead: ["/a/b", inner] }))).toContain(
        `allowRead ${JSON.stringify(inner)}: the parent sandbox cannot read it`,
      );
    }
  });

  it("a folder learned from its entry is still checked where it leads", () => {
    // /a/l leads to /z/dir: the parent may read /z/dir/c, not /z/dir.
    symlinkSync(join(root, "z/dir"), join(root, "a/l"));
    const parent = sb.derive({ allowRead: ["/a", "/z/dir/c"] });
    // Allowed (it leads to /z/dir/c); a link keeps leading out of the
    // child's own areas, so reading through it needs /z/dir/c too.
    expect(parent.derive({ allowRead: ["/a/l/c"] }).readableRoots).toEqual(["/a/l/c"]);
    const child = parent.derive({ allowRead: ["/a/l/c", "/z/dir/c"] });
    expect(child.canRead("/a/l/c/g.txt")).toBe(true);
    expect(refused(() => parent.derive({ allowRead: ["/a/l/c", "/a/l"] }))).toContain(
      'allowRead "/a/l": the parent sandbox cannot read it',
    );
    expect(refused(() => parent.derive({ allowRead: ["/a/l", "/a/l/c"] }))).toContain(
      'allowRead "/a/l"',
    );
  });

  it("a file entry stays one exact file beside its folder (either order)", () => {
    for (const opts of [
      { allowRead: "/a/b", allowWrite: "/a/b/file.txt" },
      { allowWrite: "/a/b/file.txt", allowRead: "/a/b" },
      { allowRead: ["/a/b/file.txt", "/a/b/c", "/a/b"], allowWrite: ["/a/b/c/f.txt", "/a/b/c"] },
    ]) {
      const child = sb.derive(opts);
      expect(child.canRead("/a/b/c/f.txt")).toBe(true);
      if (opts.allowWrite === "/a/b/file.txt") {
        expect(child.writableRoots).toEqual(["/a/b/file.txt"]);
        expect(child.canWrite("/a/b/file.txt")).toBe(true);
        expect(child.canWrite("/a/b/file.txt/x")).toBe(false);
        expect(child.canWrite("/a/b/other.txt")).toBe(false);
      } else {
        expect(child.writableRoots).toEqual(["/a/b/c"]);
      }
    }
    const inner = sb.derive({ allowWrite: ["/a/b/c/f.txt", "/a/b/c"] });
    expect(inner.writableRoots).toEqual(["/a/b/c"]);
  });

  it("prefix siblings are separate entries (/src vs /src2)", () => {
    symlinkSync(join(base, "outside"), join(root, "src2/out"));
    const child = sb.derive({ allowRead: ["/src", "/src2/t.ts"] });
    expect(child.canRead("/src2/t.ts")).toBe(true);
    expect(child.canRead("/src2/out/secret.txt")).toBe(false);
    expect(refused(() => sb.derive({ allowRead: ["/src", "/src2/out"] }))).toContain(
      'allowRead "/src2/out"',
    );
  });

  it("a mount shadows the root's folder of the same name", () => {
    // Under the root's source, `mnt/x` leads outside; the mount's `x` is real.
    mkdirSync(join(root, "mnt"));
    symlinkSync(join(base, "outside"), join(root, "mnt/x"));
    const child = sb.derive({ allowRead: ["/mnt", "/mnt/x"], allowWrite: "/mnt/x" });
    expect(child.canRead("/mnt/x/y.txt")).toBe(true);
    expect(child.canWrite("/mnt/x/y.txt")).toBe(true);
  });
});

describe("derive: nothing is remembered between calls", () => {
  it("an inner entry swapped for a link between derives is refused", () => {
    const opts = { allowRead: "/a/b", allowWrite: "/a/b/c" };
    expect(sb.derive(opts).canWrite("/a/b/c/f.txt")).toBe(true);
    rmSync(join(root, "a/b/c"), { recursive: true });
    symlinkSync(join(base, "outside/c"), join(root, "a/b/c"));
    expect(refused(() => sb.derive(opts))).toContain('allowWrite "/a/b/c"');
    expect(refused(() => sb.derive({ allowWrite: "/a/b/c", allowRead: "/a/b" }))).toContain(
      'allowWrite "/a/b/c"',
    );
  });

  it("a folder renamed away and replaced by a link between derives is refused", () => {
    const opts = { allowWrite: "/a/b/c", allowRead: "/a/b" };
    expect(sb.derive(opts).canRead("/a/b/file.txt")).toBe(true);
    renameSync(join(root, "a/b"), join(root, "a/b-old"));
    mkdirSync(join(base, "outside/b/c"), { recursive: true });
    symlinkSync(join(base, "outside/b"), join(root, "a/b"));
    expect(refused(() => sb.derive(opts))).toContain('allowWrite "/a/b/c"');
    expect(refused(() => sb.derive({ allowRead: ["/a/b", "/a/b/c"] }))).toContain(
      'allowRead "/a/b"',
    );
  });

  it("a link retargeted between derives is followed to its new place", () => {
    symlinkSync(join(root, "z/dir"), join(root, "a/l"));
    const parent = sb.derive({ allowRead: ["/a", "/z/dir"] });
    expect(parent.derive({ allowRead: ["/a/l/c", "/a/l"] }).readableRoots).toEqual(["/a/l"]);
    rmSync(join(root, "a/l"));
    symlinkSync(join(root, "z/other"), join(root, "a/l"));
    mkdirSync(join(root, "z/other/c"));
    expect(refused(() => parent.derive({ allowRead: ["/a/l/c", "/a/l"] }))).toContain(
      'allowRead "/a/l/c"',
    );
  });

  it("a folder replaced by a file between derives becomes an exact entry", () => {
    const opts = { allowRead: "/a/b", allowWrite: "/a/b/c" };
    expect(sb.derive(opts).canWrite("/a/b/c/new.txt")).toBe(true);
    rmSync(join(root, "a/b/c"), { recursive: true });
    writeFileSync(join(root, "a/b/c"), "now a file");
    const child = sb.derive(opts);
    expect(child.canWrite("/a/b/c")).toBe(true);
    expect(child.canWrite("/a/b/c/new.txt")).toBe(false);
    expect(child.writableRoots).toEqual(["/a/b/c"]);
  });
});
