import { mkdirSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createSandbox,
  InvalidPathError,
  PathNotInSandboxError,
  PathNotWritableError,
  SandboxError,
  SandboxPermissionEscalationError,
  SuffixNotAllowedError,
} from "../../src/index.js";
import { makeTempDir, removeDir, writeTree } from "../helpers/tree.js";

let base: string;
let root: string;
let cache: string;
let outside: string;

/** Runs `fn`, returns the thrown error's message (and checks no host path leaks). */
function messageOf(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(SandboxError);
    const msg = (err as Error).message;
    expect(msg).not.toContain(base);
    return msg;
  }
  throw new Error("expected a throw");
}

beforeAll(() => {
  base = makeTempDir();
  root = join(base, "project");
  cache = join(base, "cache");
  outside = join(base, "outside");
  writeTree(outside, { "secret.txt": "top secret", dir: { "s.txt": "s" } });
  writeTree(cache, { "pkg.json": "{}", sub: { "x.txt": "x" } });
  writeTree(root, {
    src: { "a.ts": "a", lib: { "b.ts": "b" } },
    src2: { "c.ts": "c" },
    "src-old": { "d.ts": "d" },
    src_backup: { "e.ts": "e" },
    docs: { "guide.md": "g", "notes.txt": "n" },
    data: { "real.txt": "shadowed" },
    ".git": { config: "[core]" },
    links: {
      "file-out": { link: join(outside, "secret.txt") },
      "dir-out": { link: outside },
      "dangling-out": { link: join(outside, "missing.txt") },
      "dangling-in": { link: "../src/new.ts" },
      "file-in": { link: "../src/a.ts" },
      "chain-1": { link: "chain-2" },
      "chain-2": { link: "chain-3" },
      "chain-3": { link: "../src/a.ts" },
      "chain-out-1": { link: "chain-out-2" },
      "chain-out-2": { link: join(outside, "secret.txt") },
      "to-cache-source": { link: join(cache, "pkg.json") },
      "to-shadowed": { link: "../data/real.txt" },
      loop: { link: "loop" },
      "md-to-txt.md": { link: "../docs/notes.txt" },
    },
  });
});
afterAll(() => removeDir(base));

const make = (extra: object = {}) =>
  createSandbox(
    { root: "project", mounts: [{ source: "cache", target: "/cache", readonly: true }], ...extra },
    { basePath: base },
  );

describe("resolve", () => {
  it("maps relative and absolute virtual paths into the root", () => {
    const sb = make();
    expect(sb.resolve("/src/a.ts")).toBe(join(root, "src/a.ts"));
    expect(sb.resolve("src/a.ts")).toBe(join(root, "src/a.ts"));
    expect(sb.resolve("/")).toBe(root);
    expect(sb.resolve("/src/lib/../a.ts")).toBe(join(root, "src/a.ts"));
    expect(sb.resolve("/cache/pkg.json")).toBe(join(cache, "pkg.json"));
    expect(sb.resolve("/cache")).toBe(cache);
  });

  it("resolves `..` before the mount lookup (mount shadowing)", () => {
    const sb = make({ mounts: [{ source: "cache", target: "/data" }] });
    expect(sb.resolve("/x/../data/pkg.json")).toBe(join(cache, "pkg.json"));
    expect(sb.resolve("/data/../src/a.ts")).toBe(join(root, "src/a.ts"));
  });

  it("refuses to climb above / instead of clamping", () => {
    const sb = make();
    expect(messageOf(() => sb.resolve("/../project/src/a.ts"))).toMatchInlineSnapshot(`
      "Cannot access '/../project/src/a.ts': it climbs above the sandbox root '/'.
      Readable paths: /"
    `);
    expect(() => sb.resolve("../../etc/passwd")).toThrow(PathNotInSandboxError);
    expect(() => sb.resolve("/src/../../etc")).toThrow(PathNotInSandboxError);
  });

  it("refuses links that lead outside (file, dir, dangling, chains)", () => {
    const sb = make();
    for (const p of [
      "/links/file-out",
      "/links/dir-out/s.txt",
      "/links/dir-out",
      "/links/chain-out-1",
    ]) {
      expect(() => sb.resolve(p), p).toThrow(PathNotInSandboxError);
      expect(sb.canRead(p), p).toBe(false);
    }
    expect(() => sb.resolve("/links/dangling-out", "write")).toThrow(PathNotInSandboxError);
    expect(sb.canWrite("/links/dangling-out")).toBe(false);
    expect(messageOf(() => sb.resolve("/links/dir-out/s.txt"))).toMatchInlineSnapshot(`
      "Cannot access '/links/dir-out/s.txt': it leads (through a link) to a location outside the sandbox.
      Readable paths: /"
    `);
  });

  it("follows links that stay inside, to their real target", () => {
    const sb = make();
    expect(sb.resolve("/links/file-in")).toBe(join(root, "src/a.ts"));
    expect(sb.resolve("/links/chain-1")).toBe(join(root, "src/a.ts"));
    expect(sb.resolve("/links/dangling-in", "write")).toBe(join(root, "src/new.ts"));
  });

  it("reports link loops as an error, not a hang", () => {
    const sb = make();
    expect(() => sb.resolve("/links/loop")).toThrow(SandboxError);
    expect(sb.canRead("/links/loop")).toBe(false);
  });

  it("maps a real path back: a mount source reached through the root is read-only there too", () => {
    const sb = createSandbox(
      { root: ".", mounts: [{ source: "cache", target: "/cache", readonly: true }] },
      { basePath: base },
    );
    // /cache/pkg.json and /cache (the root's own folder) are the same real file.
    expect(sb.canWrite("/project/src/a.ts")).toBe(true);
    expect(sb.canRead("/cache/pkg.json")).toBe(true);
    expect(sb.canWrite("/cache/pkg.json")).toBe(false);
    expect(() => sb.resolve("/project/links/to-cache-source", "write")).toThrow(
      PathNotWritableError,
    );
    expect(sb.canRead("/project/links/to-cache-source")).toBe(true);
  });

  it("treats a file shadowed by a mount as unmappable", () => {
    const sb = make({ mounts: [{ source: "cache", target: "/data" }] });
    expect(() => sb.resolve("/links/to-shadowed")).toThrow(PathNotInSandboxError);
  });

  it("uses the longest mount on whole segments", () => {
    mkdirSync(join(base, "cache2"), { recursive: true });
    const sb = createSandbox(
      { root: "project", mounts: ["cache:/cache:ro", "cache2:/cache2", "cache/sub:/cache/sub"] },
      { basePath: base },
    );
    expect(sb.resolve("/cache2/y", "write")).toBe(join(base, "cache2/y"));
    expect(sb.canWrite("/cache/y")).toBe(false);
    // The nested read-write mount is the most specific source of its files.
    expect(sb.canWrite("/cache/sub/x.txt")).toBe(true);
    expect(sb.canWrite("/cache/pkg.json")).toBe(false);
  });

  it("rejects a pasted host path with the virtual equivalent, never echoing it", () => {
    const sb = make();
    const msg = messageOf(() => sb.resolve(join(root, "src/a.ts")));
    expect(msg).toMatchInlineSnapshot(
      `"Invalid path: that is a host path, but paths here are virtual (the sandbox root is '/'). Use '/src/a.ts' instead."`,
    );
    expect(() => sb.resolve(join(cache, "pkg.json"))).toThrow(InvalidPathError);
    try {
      sb.resolve(join(cache, "pkg.json"));
    } catch (err) {
      expect((err as InvalidPathError).path).toBe("/cache/pkg.json");
    }
  });

  it("takes percent-encoding literally", () => {
    const sb = make();
    expect(sb.resolve("/%2e%2e/x", "write")).toBe(join(root, "%2e%2e/x"));
  });
});

describe("canRead / canWrite", () => {
  it("never throw, whatever the input", () => {
    const sb = make();
    for (const p of [undefined, null, 1, {}, "/a\0b", "~", "C:\\", "../..", "x".repeat(10000)]) {
      expect(sb.canRead(p as string)).toBe(false);
      expect(sb.canWrite(p as string)).toBe(false);
    }
  });

  it("readonly: true on the root applies to every mount", () => {
    const sb = createSandbox(
      { root: "project", readonly: true, mounts: ["cache:/cache"] },
      { basePath: base },
    );
    expect(sb.canRead("/cache/pkg.json")).toBe(true);
    expect(sb.canWrite("/cache/pkg.json")).toBe(false);
    expect(sb.canWrite("/src/a.ts")).toBe(false);
    expect(sb.writableRoots).toEqual([]);
    expect(messageOf(() => sb.resolve("/src/a.ts", "write"))).toMatchInlineSnapshot(`
      "Cannot write to '/src/a.ts': this path is read-only.
      Writable paths: none"
    `);
  });
});

describe("suffixes", () => {
  it("apply to file names, lexical and real; directories are exempt", () => {
    const sb = make({ suffixes: [".md", "ts"] });
    expect(sb.canRead("/docs/guide.md")).toBe(true);
    expect(sb.canRead("/src/a.ts")).toBe(true);
    expect(sb.canRead("/docs")).toBe(true);
    expect(sb.canRead("/docs/notes.txt")).toBe(false);
    expect(sb.canWrite("/docs/new.md")).toBe(true);
    expect(sb.canWrite("/docs/new.exe")).toBe(false);
    expect(sb.canRead("/links/md-to-txt.md")).toBe(false);
    expect(messageOf(() => sb.resolve("/docs/notes.txt"))).toMatchInlineSnapshot(`
      "Cannot access '/docs/notes.txt': files ending in '.txt' are not allowed.
      Allowed suffixes: .md, .ts"
    `);
    expect(messageOf(() => sb.resolve("/Makefile", "write"))).toMatchInlineSnapshot(`
      "Cannot access '/Makefile': files without a suffix are not allowed.
      Allowed suffixes: .md, .ts"
    `);
    expect(() => sb.resolve("/links/md-to-txt.md")).toThrow(SuffixNotAllowedError);
  });
});

describe("protected folders", () => {
  it("refuse writes under .git anywhere by default", () => {
    const sb = make();
    expect(sb.canRead("/.git/config")).toBe(true);
    expect(sb.canWrite("/.git/config")).toBe(false);
    expect(sb.canWrite("/src/.git/hooks/pre-commit")).toBe(false);
    expect(sb.canWrite("/src/.github/x")).toBe(true);
    expect(sb.canWrite("/src/x.git")).toBe(true);
    // Case-insensitive file systems see .GIT as the same folder.
    expect(sb.canWrite("/.GIT/config")).toBe(false);
    expect(sb.canWrite("/src/.Git/hooks/x")).toBe(false);
    expect(
      messageOf(() => sb.resolve("/src/.git/hooks/pre-commit", "write")),
    ).toMatchInlineSnapshot(`
      "Cannot write to '/src/.git/hooks/pre-commit': it is inside a protected folder ('.git') where writes are refused.
      Writable paths: / (read-only inside: /cache)"
    `);
  });

  it("can be turned off or extended", () => {
    expect(make({ protected: [] }).canWrite("/.git/config")).toBe(true);
    const sb = make({ protected: ["node_modules", "/docs"] });
    expect(sb.canWrite("/.git/config")).toBe(true);
    expect(sb.canWrite("/src/node_modules/x")).toBe(false);
    expect(sb.canWrite("/docs/guide.md")).toBe(false);
    expect(sb.canWrite("/docs2/guide.md")).toBe(true);
  });
});

describe("named-paths form", () => {
  const named = () =>
    createSandbox(
      {
        paths: {
          docs: { root: "project/docs", mode: "rw", suffixes: [".md"] },
          data: { root: "cache" },
        },
      },
      { basePath: base },
    );

  it("mounts each name at /name with its own mode and suffixes", () => {
    const sb = named();
    expect(sb.readableRoots).toEqual(["/data", "/docs"]);
    expect(sb.writableRoots).toEqual(["/docs"]);
    expect(sb.resolve("docs/guide.md")).toBe(join(root, "docs/guide.md"));
    expect(sb.resolve("docs:guide.md")).toBe(join(root, "docs/guide.md"));
    expect(sb.resolve("/docs/guide.md")).toBe(join(root, "docs/guide.md"));
    expect(sb.canRead("/docs/notes.txt")).toBe(false);
    expect(sb.canRead("/data/sub/x.txt")).toBe(true);
    expect(sb.canWrite("/data/sub/x.txt")).toBe(false);
    expect(sb.canRead("/other")).toBe(false);
    expect(sb.canRead("/")).toBe(false);
  });

  it("derives with name, name/rel and name:rel entries", () => {
    const sb = named();
    expect(sb.derive({ allowRead: "data" }).readableRoots).toEqual(["/data"]);
    expect(sb.derive({ allowRead: "data:sub" }).readableRoots).toEqual(["/data/sub"]);
    expect(sb.derive({ allowWrite: "docs/guide.md" }).writableRoots).toEqual(["/docs/guide.md"]);
    expect(() => sb.derive({ allowWrite: "data" })).toThrow(SandboxPermissionEscalationError);
  });
});

describe("describe()", () => {
  it("gives virtual areas and mounts, never a source path", () => {
    const sb = make({ suffixes: [".md"], maxFileBytes: 1000 });
    const d = sb.describe();
    expect(d).toMatchInlineSnapshot(`
      {
        "maxFileBytes": 1000,
        "mounts": [
          {
            "readonly": false,
            "target": "/",
          },
          {
            "readonly": true,
            "target": "/cache",
          },
        ],
        "readable": [
          "/",
        ],
        "secrets": [
          ".env",
          ".env.*",
          "*.pem",
          "*.key",
          "id_rsa*",
          "id_dsa*",
          "id_ecdsa*",
          "id_ed25519*",
          ".npmrc",
          ".netrc",
          ".git-credentials",
          ".aws/",
          ".ssh/",
        ],
        "suffixes": [
          ".md",
        ],
        "writable": [
          "/",
        ],
      }
    `);
    expect(JSON.stringify(d)).not.toContain(base);
    expect(sb.derive({ allowRead: "/src" }).describe()).toMatchInlineSnapshot(`
      {
        "maxFileBytes": 1000,
        "mounts": [
          {
            "readonly": false,
            "target": "/",
          },
        ],
        "readable": [
          "/src",
        ],
        "secrets": [
          ".env",
          ".env.*",
          "*.pem",
          "*.key",
          "id_rsa*",
          "id_dsa*",
          "id_ecdsa*",
          "id_ed25519*",
          ".npmrc",
          ".netrc",
          ".git-credentials",
          ".aws/",
          ".ssh/",
        ],
        "suffixes": [
          ".md",
        ],
        "writable": [],
      }
    `);
  });
});

describe("seed 000 examples", () => {
  it("program sandbox, derived workers and illegal escalation", () => {
    const program = createSandbox({ root: "project", readonly: false }, { basePath: base });
    expect(program.resolve("/src/a.ts")).toBe(join(root, "src/a.ts"));
    expect(program.canWrite("/tmp/x")).toBe(true); // inside the root: /tmp is just a folder name here
    const empty = program.derive();
    expect(empty.canRead("/src/a.ts")).toBe(false);
    expect(empty.readableRoots).toEqual([]);
    const analyzer = program.derive({ allowRead: "/src", readonly: true });
    expect(analyzer.canRead("/src/a.ts")).toBe(true);
    expect(analyzer.canWrite("/src/a.ts")).toBe(false);
    expect(() => analyzer.resolve("/docs/x.md")).toThrow(PathNotInSandboxError);
    const roParent = createSandbox({ root: "project", readonly: true }, { basePath: base });
    expect(() => roParent.derive({ inherit: true, readonly: false })).toThrow(
      SandboxPermissionEscalationError,
    );
  });
});

describe("races at the policy level", () => {
  it("a link created after a check is seen by the next resolve", () => {
    const sb = make();
    const p = join(root, "src", "later");
    expect(sb.canRead("/src/later/secret.txt")).toBe(true); // does not exist yet: predicted inside
    symlinkSync(outside, p);
    expect(sb.canRead("/src/later/secret.txt")).toBe(false);
  });
});
