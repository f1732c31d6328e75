import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ConfigError,
  createSandbox,
  InvalidPathError,
  PathNotInSandboxError,
  type Sandbox,
  SandboxPermissionEscalationError,
} from "../../src/index.js";
import { makeTempDir, removeDir, writeTree } from "../helpers/tree.js";

let base: string;
let sb: Sandbox;

function escalationMessage(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(SandboxPermissionEscalationError);
    expect((err as SandboxPermissionEscalationError).code).toBe("permission_escalation");
    expect((err as Error).message).not.toContain(base);
    return (err as Error).message;
  }
  throw new Error("expected an escalation error");
}

beforeAll(() => {
  base = makeTempDir();
  writeTree(join(base, "p"), {
    src: { "a.ts": "a", lib: { "b.ts": "b" } },
    src2: { "c.ts": "c" },
    docs: { "x.md": "x" },
    reports: {},
    "one.txt": "1",
  });
  writeTree(join(base, "c"), { "pkg.json": "{}", sub: { "y.txt": "y" } });
  sb = createSandbox({ root: "p", mounts: ["c:/cache:ro"] }, { basePath: base });
});
afterAll(() => removeDir(base));

describe("derive (DESIGN §4 table)", () => {
  it("with no arguments gives an empty sandbox", () => {
    const child = sb.derive();
    expect(child.readableRoots).toEqual([]);
    expect(child.writableRoots).toEqual([]);
    expect(child.canRead("/src/a.ts")).toBe(false);
    expect(() => child.resolve("/src/a.ts")).toThrow(PathNotInSandboxError);
  });

  it("allowRead: reads = R ∩ allowRead, and no writes", () => {
    const child = sb.derive({ allowRead: ["/src", "/cache/sub"] });
    expect(child.readableRoots).toEqual(["/cache/sub", "/src"]);
    expect(child.writableRoots).toEqual([]);
    expect(child.canRead("/src/lib/b.ts")).toBe(true);
    expect(child.canRead("/src2/c.ts")).toBe(false);
    expect(child.canRead("/cache/pkg.json")).toBe(false);
    expect(child.canWrite("/src/a.ts")).toBe(false);
  });

  it("allowWrite alone implies the same reads", () => {
    const child = sb.derive({ allowWrite: "/reports" });
    expect(child.readableRoots).toEqual(["/reports"]);
    expect(child.writableRoots).toEqual(["/reports"]);
    expect(child.canWrite("/reports/r.md")).toBe(true);
    expect(child.canRead("/src/a.ts")).toBe(false);
  });

  it("allowRead and allowWrite are independent when both are given", () => {
    const child = sb.derive({ allowRead: "/src", allowWrite: "/reports" });
    expect(child.canRead("/src/a.ts")).toBe(true);
    expect(child.canWrite("/src/a.ts")).toBe(false);
    expect(child.canWrite("/reports/x")).toBe(true);
  });

  it("inherit: true with no allowlist keeps the parent's access", () => {
    const child = sb.derive({ inherit: true });
    expect(child.describe()).toEqual(sb.describe());
    const ro = sb.derive({ inherit: true, readonly: true });
    expect(ro.canRead("/src/a.ts")).toBe(true);
    expect(ro.writableRoots).toEqual([]);
  });

  it("inherit: true with an allowlist still intersects", () => {
    const child = sb.derive({ inherit: true, allowRead: "/docs" });
    expect(child.readableRoots).toEqual(["/docs"]);
    expect(child.writableRoots).toEqual([]);
  });

  it("readonly: true removes writes whatever else is asked", () => {
    const child = sb.derive({ allowWrite: "/src", readonly: true });
    expect(child.canRead("/src/a.ts")).toBe(true);
    expect(child.canWrite("/src/a.ts")).toBe(false);
  });

  it("read-only sub-mounts below a permitted entry are carved out by ∩", () => {
    const child = sb.derive({ allowWrite: "/" });
    expect(child.canWrite("/src/a.ts")).toBe(true);
    expect(child.canWrite("/cache/pkg.json")).toBe(false);
    expect(child.canRead("/cache/pkg.json")).toBe(true);
  });

  it("an entry naming a file grants exactly that file", () => {
    const child = sb.derive({ allowRead: "/one.txt", allowWrite: "/src/a.ts" });
    expect(child.canRead("/one.txt")).toBe(true);
    expect(child.canRead("/one.txt/x")).toBe(false);
    expect(child.canRead("/two.txt")).toBe(false);
    expect(child.canWrite("/src/a.ts")).toBe(true);
    expect(child.canWrite("/src/lib/b.ts")).toBe(false);
    expect(child.readableRoots).toEqual(["/one.txt"]);
  });

  it("matches whole segments (prefix siblings stay out)", () => {
    const child = sb.derive({ allowWrite: "/src" });
    for (const p of ["/src2/c.ts", "/src-old/a", "/src_backup/a", "/src.bak"]) {
      expect(child.canRead(p), p).toBe(false);
      expect(child.canWrite(p), p).toBe(false);
    }
  });

  it("never mutates the parent, and chains only shrink", () => {
    const before = sb.describe();
    const a = sb.derive({ allowWrite: ["/src", "/docs"] });
    const b = a.derive({ allowRead: "/src/lib", allowWrite: "/src/lib" });
    const c = b.derive({ inherit: true, readonly: true });
    expect(sb.describe()).toEqual(before);
    expect(a.writableRoots).toEqual(["/docs", "/src"]);
    expect(b.writableRoots).toEqual(["/src/lib"]);
    expect(c.readableRoots).toEqual(["/src/lib"]);
    expect(c.writableRoots).toEqual([]);
  });

  it("requires absolute entries in root mode", () => {
    expect(() => sb.derive({ allowRead: "src" })).toThrow(InvalidPathError);
  });

  it("validates its options at the edge", () => {
    expect(() => sb.derive({ allowRead: 3 } as never)).toThrow(ConfigError);
    expect(() => sb.derive({ readOnly: true } as never)).toThrow(ConfigError);
    expect(() => sb.derive({ readonly: "yes" } as never)).toThrow(ConfigError);
  });
});

describe("derive escalation", () => {
  it("refuses readonly: false when the parent cannot write", () => {
    const ro = sb.derive({ allowRead: "/src" });
    expect(
      escalationMessage(() => ro.derive({ inherit: true, readonly: false })),
    ).toMatchInlineSnapshot(`
      "Cannot derive a child sandbox with readonly: false: the parent sandbox has no write access.
      Parent readable paths: /src
      Parent writable paths: none
      Child sandboxes can only narrow access, never widen it. Omit readonly, or pass readonly: true."
    `);
  });

  it("refuses allowRead entries the parent cannot read", () => {
    const child = sb.derive({ allowRead: ["/src", "/docs"] });
    expect(escalationMessage(() => child.derive({ allowRead: "/src2" }))).toMatchInlineSnapshot(`
      "Cannot derive a child sandbox with allowRead "/src2": the parent sandbox cannot read it.
      Parent readable paths: /docs, /src
      Parent writable paths: none
      Child sandboxes can only narrow access, never widen it. Use allowRead entries inside those paths, for example "/docs"."
    `);
    expect(() => child.derive({ allowRead: "/" })).toThrow(SandboxPermissionEscalationError);
    expect(() => child.derive({ allowRead: "/src/../src2" })).toThrow(
      SandboxPermissionEscalationError,
    );
    expect(() => child.derive({ allowRead: "/src/../../x" })).toThrow(
      SandboxPermissionEscalationError,
    );
  });

  it("refuses allowWrite entries the parent cannot write", () => {
    expect(escalationMessage(() => sb.derive({ allowWrite: "/cache/sub" }))).toMatchInlineSnapshot(`
      "Cannot derive a child sandbox with allowWrite "/cache/sub": the parent sandbox cannot write it.
      Parent readable paths: /
      Parent writable paths: / (read-only inside: /cache)
      Child sandboxes can only narrow access, never widen it. Use allowWrite entries inside those paths, for example "/"."
    `);
    expect(() => sb.derive({ allowWrite: "/.git" })).toThrow(SandboxPermissionEscalationError);
    const child = sb.derive({ allowRead: "/", allowWrite: "/reports" });
    expect(() => child.derive({ allowWrite: "/src" })).toThrow(SandboxPermissionEscalationError);
  });
});

describe("restrict", () => {
  it("keeps a subtree without rebasing paths", () => {
    const r = sb.restrict({ restrict: "/src" });
    expect(r.readableRoots).toEqual(["/src"]);
    expect(r.writableRoots).toEqual(["/src"]);
    expect(r.resolve("/src/a.ts")).toBe(sb.resolve("/src/a.ts"));
    expect(r.canRead("/docs/x.md")).toBe(false);
  });

  it("readonly: true downgrades; read-only areas stay read-only silently", () => {
    expect(sb.restrict({ restrict: "/src", readonly: true }).writableRoots).toEqual([]);
    const cache = sb.restrict({ restrict: "/cache" });
    expect(cache.canRead("/cache/pkg.json")).toBe(true);
    expect(cache.writableRoots).toEqual([]);
  });

  it("defaults to / (no restriction)", () => {
    expect(sb.restrict({}).describe()).toEqual(sb.describe());
    expect(sb.restrict().describe()).toEqual(sb.describe());
  });

  it("refuses readonly: false where nothing under restrict is writable", () => {
    expect(
      escalationMessage(() => sb.restrict({ restrict: "/cache", readonly: false })),
    ).toMatchInlineSnapshot(`
      "Cannot derive a child sandbox with restrict "/cache" and readonly: false: the parent sandbox cannot write anywhere under '/cache'.
      Parent readable paths: /
      Parent writable paths: / (read-only inside: /cache)
      Child sandboxes can only narrow access, never widen it. Pass readonly: true, or restrict to a writable path such as "/"."
    `);
    const ro = sb.restrict({ readonly: true });
    expect(() => ro.restrict({ readonly: false })).toThrow(SandboxPermissionEscalationError);
  });

  it("refuses a restrict path the parent cannot read", () => {
    const child = sb.restrict({ restrict: "/src" });
    expect(escalationMessage(() => child.restrict({ restrict: "/docs" }))).toMatchInlineSnapshot(`
      "Cannot derive a child sandbox with restrict "/docs": the parent sandbox cannot read it.
      Parent readable paths: /src
      Parent writable paths: /src
      Child sandboxes can only narrow access, never widen it. Use restrict entries inside those paths, for example "/src"."
    `);
  });

  it("seed 002 inheritance table", () => {
    const rw = sb;
    expect(rw.restrict({}).writableRoots.length).toBeGreaterThan(0); // rw + default → rw
    expect(rw.restrict({ readonly: true }).writableRoots).toEqual([]); // rw + readonly → ro
    const ro = rw.restrict({ readonly: true });
    expect(ro.restrict({}).writableRoots).toEqual([]); // ro + default → ro
    expect(() => ro.restrict({ readonly: false })).toThrow(SandboxPermissionEscalationError); // ro + rw → error
  });
});
