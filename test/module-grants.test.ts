/**
 * How the host finds what a worker imports (real temp trees with real links):
 * package names, node_modules lookup through links, the dependency closure,
 * and grant compaction.
 */
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  collectPackages,
  compactGrants,
  findPackage,
  findSelfReference,
  toPackageName,
} from "../src/threads/module-grants.js";
import { makeTempDir, removeDir, writeTree } from "./helpers/tree.js";

let dir: string;
const pkg = (name: string, deps: Record<string, string> = {}) =>
  JSON.stringify({ name, version: "1.0.0", dependencies: deps });

beforeAll(() => {
  dir = makeTempDir();
  writeTree(dir, {
    app: {
      "package.json": JSON.stringify({ name: "app", exports: "./x.js" }),
      workers: { "w.js": "" },
      node_modules: {
        // pnpm: links into the store, dependencies linked beside each package
        a: { link: "../store/a@1/node_modules/a" },
        "@s": { b: { link: "../../store/b@1/node_modules/@s/b" } },
      },
      store: {
        "a@1": {
          node_modules: {
            a: { "package.json": pkg("a", { "@s/b": "1", missing: "1" }) },
            "@s": { b: { link: "../../../b@1/node_modules/@s/b" } },
          },
        },
        "b@1": { node_modules: { "@s": { b: { "package.json": pkg("@s/b") } } } },
        // pnpm hoists every package here: what a package imports without
        // declaring it is found from its folder, not from the app's
        node_modules: { phantom: { link: "../phantom@1/node_modules/phantom" } },
        "phantom@1": { node_modules: { phantom: { "package.json": pkg("phantom") } } },
      },
    },
  });
});
afterAll(() => removeDir(dir));

describe("toPackageName", () => {
  it("takes the package of a bare specifier, and nothing else", () => {
    expect(toPackageName("zod")).toBe("zod");
    expect(toPackageName("zod/v4")).toBe("zod");
    expect(toPackageName("@scope/pkg/deep/x.js")).toBe("@scope/pkg");
    for (const s of ["./x", "../x", "/abs", "", "@scope", "node:fs", "a\\b", "@s/..", "x\0"])
      expect(toPackageName(s), s).toBeUndefined();
  });
});

describe("finding packages", () => {
  it("finds a package at its link path, from a nested folder", () => {
    const loc = findPackage("a", join(dir, "app", "workers"));
    expect(loc?.path).toBe(join(dir, "app", "node_modules", "a"));
    expect(loc?.real).toBe(join(dir, "app", "store", "a@1", "node_modules", "a"));
    expect(findPackage("nope", join(dir, "app", "workers"))).toBeUndefined();
  });

  it("collects a package with its dependencies, looked up from its real folder", () => {
    const { found, missing } = collectPackages(["a"], join(dir, "app", "workers"));
    expect(missing).toEqual([]);
    expect(found.map((f) => [f.name, f.path.slice(dir.length)])).toEqual([
      ["a", "/app/node_modules/a"],
      ["@s/b", "/app/store/a@1/node_modules/@s/b"],
    ]);
    expect(found[1]?.real).toBe(join(dir, "app", "store", "b@1", "node_modules", "@s", "b"));
  });

  it("finds a declared package that only a found package's folder can see", () => {
    // the thread refused a package's undeclared import and said "add 'phantom'"
    const { found, missing } = collectPackages(["a", "phantom"], join(dir, "app", "workers"));
    expect(missing).toEqual([]);
    expect(found.map((p) => p.name)).toEqual(["a", "@s/b", "phantom"]);
    expect(found.at(-1)?.path).toBe(join(dir, "app", "store", "node_modules", "phantom"));
  });

  it("reports a declared package that is not installed", () => {
    expect(collectPackages(["a", "ghost"], join(dir, "app")).missing).toEqual(["ghost"]);
  });

  it("finds a self-reference only for the named package with exports", () => {
    expect(findSelfReference("app", join(dir, "app", "workers"))).toBe(
      join(dir, "app", "package.json"),
    );
    expect(findSelfReference("other", join(dir, "app", "workers"))).toBeUndefined();
  });
});

describe("compactGrants", () => {
  it("drops duplicates and anything inside a granted folder", () => {
    const a = join(dir, "app", "store", "a@1");
    expect(
      compactGrants([
        join(a, "node_modules", "a", "package.json"),
        a,
        a,
        join(dir, "app", "workers", "w.js"),
        join(dir, "app", "workers2"),
      ]),
    ).toEqual([a, join(dir, "app", "workers", "w.js"), join(dir, "app", "workers2")]);
  });
});
