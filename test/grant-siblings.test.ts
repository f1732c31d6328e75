/**
 * Linked package folders whose paths are prefixes of each other
 * (`@ai-sdk/provider`, `@ai-sdk/provider-utils`): Node's permission model
 * refuses the shorter one (real pnpm installs broke every LLM worker). Real
 * trees with real links, shaped as pnpm lays them out; test/real-installs
 * runs real threads from real pnpm installs.
 */
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { repairPrefixSiblings } from "../src/threads/grant-siblings.js";
import { collectPackages, compactGrants } from "../src/threads/module-grants.js";
import { makeTempDir, removeDir, type TreeSpec, writeTree } from "./helpers/tree.js";

let dir: string;
const pkg = (name: string, deps: Record<string, string> = {}) =>
  JSON.stringify({
    name,
    version: "1.0.0",
    type: "module",
    exports: "./index.js",
    dependencies: deps,
  });

/** A pnpm store: `x` depends on `@s/p` and `@s/p-utils`, linked beside it. */
function storeSpec(extra: TreeSpec = {}, extraDeps: Record<string, string> = {}): TreeSpec {
  return {
    ".pnpm": {
      "x@1": {
        node_modules: {
          x: {
            "package.json": pkg("x", { "@s/p": "1", "@s/p-utils": "1", ...extraDeps }),
            "index.js":
              'import { p } from "@s/p"; import { u } from "@s/p-utils"; export const x = p + u;\n',
          },
          "@s": {
            p: { link: "../../../@s+p@1/node_modules/@s/p" },
            "p-utils": { link: "../../../@s+p-utils@1/node_modules/@s/p-utils" },
            ...extra,
          },
        },
      },
      "@s+p@1": {
        node_modules: {
          "@s": { p: { "package.json": pkg("@s/p"), "index.js": 'export const p = "p";\n' } },
        },
      },
      "@s+p-utils@1": {
        node_modules: {
          "@s": {
            "p-utils": { "package.json": pkg("@s/p-utils"), "index.js": 'export const u = "u";\n' },
          },
        },
      },
    },
    x: { link: ".pnpm/x@1/node_modules/x" },
  };
}

beforeAll(() => {
  dir = makeTempDir();
  writeTree(dir, {
    good: { node_modules: storeSpec(), "w.js": "" },
    // an entry of the links folder that is not a dependency of x
    extra: { node_modules: storeSpec({ other: { "package.json": pkg("@s/other") } }), "w.js": "" },
    // a dependency linked from outside the store (a `..` after it would
    // climb out of the store)
    outside: {
      node_modules: storeSpec({ away: { link: "../../../../../elsewhere" } }, { "@s/away": "1" }),
      elsewhere: { "package.json": pkg("@s/away") },
      "w.js": "",
    },
    // not a pnpm store: an npm workspace's links
    mono: {
      node_modules: {
        "@s": { p: { link: "../../p" }, "p-utils": { link: "../../p-utils" } },
      },
      p: { "package.json": pkg("@s/p") },
      "p-utils": { "package.json": pkg("@s/p-utils") },
      "w.js": "",
    },
  });
});
afterAll(() => removeDir(dir));

/** The grants of a worker in `app` declaring `deps`, as computeWorkerGrants makes them. */
function computeGrants(app: string, deps: string[]): string[] {
  const { found } = collectPackages(deps, join(dir, app));
  return compactGrants(repairPrefixSiblings(compactGrants(found.flatMap((p) => [p.path, p.real]))));
}

const links = (app: string) => join(dir, app, "node_modules", ".pnpm", "x@1", "node_modules", "@s");

describe("repairPrefixSiblings", () => {
  it("grants a pnpm links folder in place of linked prefix siblings", () => {
    const grants = computeGrants("good", ["x"]);
    expect(grants).toContain(links("good"));
    expect(grants).not.toContain(join(links("good"), "p"));
  });

  it("leaves grants alone where no linked folder is a prefix of another", () => {
    const a = join(dir, "good", "node_modules", ".pnpm", "@s+p@1", "node_modules", "@s", "p");
    const b = join(
      dir,
      "good",
      "node_modules",
      ".pnpm",
      "@s+p-utils@1",
      "node_modules",
      "@s",
      "p-utils",
    );
    expect(repairPrefixSiblings([a, b])).toEqual([a, b]); // real folders: Node grants them
  });

  it.each([
    ["extra", "an entry that is not granted"],
    ["outside", "a link that leaves the store"],
  ])("refuses to widen a links folder with %s (%s)", (app) => {
    expect(() => computeGrants(app, ["x"])).toThrow(
      /Node's permission model refuses a linked folder/,
    );
  });

  it("outside a pnpm store, says what to do", () => {
    let message = "";
    try {
      computeGrants("mono", ["@s/p", "@s/p-utils"]);
    } catch (e) {
      message = (e as Error).message.replaceAll(dir, "<tmp>");
    }
    expect(message).toMatchInlineSnapshot(
      `"Cannot grant the thread the linked package folder 'p' beside 'p-utils' in <tmp>/mono/node_modules/@s: Node's permission model refuses a linked folder whose path is the beginning of another granted path's. Install the packages as folders rather than links (npm, or pnpm with 'nodeLinker: hoisted'), or declare only one of them."`,
    );
  });
});
