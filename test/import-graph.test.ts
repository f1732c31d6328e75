/**
 * The house's rules, checked on the code itself:
 * - thread code (`workers/`) loads nothing host-side: walked over the built
 *   JavaScript (what a thread really loads; `import type` is gone there), it
 *   reaches no host-side sandbox, I/O, OS, pool, config or runtime module;
 * - each lower layer imports only what sits beside or below it (source files,
 *   type imports included): the core owns its data types.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const REPO = fileURLToPath(new URL("..", import.meta.url));
const DIST = join(REPO, "dist");

interface Walk {
  /** Every module file reached through static imports, relative to the root. */
  files: string[];
  /** `import(…)` expressions found in those files: `file: expression`. */
  dynamic: string[];
}

const STATIC_IMPORT = /^\s*(?:import|export)\s(?:[^;"']*?\sfrom\s*)?["']([^"']+)["']/gm;
const DYNAMIC_IMPORT = /\bimport\s*\(\s*([^)]*?)\s*\)/g;

/** Follows the static relative imports of the `.js` files of `entryDir`, from `root`. */
function walkStaticImports(root: string, entryDir: string): Walk {
  const queue = readdirSync(join(root, entryDir))
    .filter((f) => f.endsWith(".js"))
    .map((f) => join(root, entryDir, f));
  const seen = new Set<string>();
  const dynamic: string[] = [];
  while (queue.length > 0) {
    const file = queue.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    const text = readFileSync(file, "utf8");
    for (const m of text.matchAll(STATIC_IMPORT)) {
      const spec = m[1]!;
      if (spec.startsWith(".")) queue.push(resolve(dirname(file), spec));
    }
    for (const m of text.matchAll(DYNAMIC_IMPORT)) dynamic.push(`${relative(root, file)}: ${m[1]}`);
  }
  return { files: [...seen].map((f) => relative(root, f)).sort(), dynamic: dynamic.sort() };
}

/** What thread code may load of `src/` (built): plain data, errors, tools, the AI SDK adapter. */
const THREAD_MAY_LOAD = [
  /^src\/errors(\.js|\/)/,
  /^src\/port\/protocol\.js$/,
  // The framing of a process agent's channel (Node's own modules only).
  /^src\/port\/frames\.js$/,
  /^src\/port\/plain-(codec|format|encode|decode)\.js$/,
  /^src\/sandbox\/types\.js$/,
  /^src\/tools\//,
  /^src\/ai-sdk\//,
];

/** The files of a walk that thread code must not load. */
function hostSideFiles(walk: Walk): string[] {
  return walk.files.filter(
    (f) => f.startsWith("src/") && !THREAD_MAY_LOAD.some((allowed) => allowed.test(f)),
  );
}

describe("thread code loads nothing host-side", () => {
  it("the walker finds a host-side import (it can fail)", () => {
    const root = join(tmpdir(), `mountbox-import-graph-${process.pid}`);
    for (const [file, text] of Object.entries({
      "workers/a.js": 'import { b } from "./b.js";\nexport const a = b;\n',
      "workers/b.js": 'export { c as b } from "../src/tools/c.js";\n',
      "src/tools/c.js": 'import "../sandbox/sandbox.js";\nexport const c = await import("x");\n',
      "src/sandbox/sandbox.js": "export {};\n",
    })) {
      mkdirSync(dirname(join(root, file)), { recursive: true });
      writeFileSync(join(root, file), text);
    }
    const walk = walkStaticImports(root, "workers");
    expect(hostSideFiles(walk)).toEqual(["src/sandbox/sandbox.js"]);
    expect(walk.dynamic).toEqual(['src/tools/c.js: "x"']);
  });

  it("the built thread side reaches only plain data, errors, tools and the AI SDK adapter", () => {
    expect(existsSync(join(DIST, "workers", "entry.js")), "run `npm run build` first").toBe(true);
    const walk = walkStaticImports(DIST, "workers");
    expect(walk.files).toContain("workers/entry.js");
    expect(walk.files).toContain("src/port/protocol.js");
    expect(hostSideFiles(walk)).toEqual([]);
    // Dynamic imports load only when called: each one here is host-side use
    // of the tool layer (an in-process Sandbox, approvals given to the tools)
    // or the worker's own module (a warm spare's import ahead, in entry.js,
    // is its worker's module; the two entries are bundles holding
    // run-worker's import too). A new one must be looked at.
    expect(walk.dynamic).toEqual([
      'src/ai-sdk/index.js: "ai"',
      'src/tools/grep.js: "../pool/index.js"',
      'src/tools/grep.js: "../sandbox/sandbox.js"',
      'src/tools/index.js: "../git/git-tools.js"',
      'src/tools/index.js: "./approvals.js"',
      "workers/entry.js: boot.moduleUrl",
      "workers/entry.js: url",
      "workers/process-entry.js: boot.moduleUrl",
      "workers/process-entry.js: preload",
      "workers/run-worker.js: boot.moduleUrl",
    ]);
  });

  it("the bundled entries and error family hold only what the walk allows", () => {
    // scripts/bundle-workers.mjs inlines the entries' imports: the modules
    // a bundle holds (its `// dist/…` region markers) must be ones the walk
    // above allows, and what it still imports must be Node's or the two
    // shared modules (mountbox/worker, the errors).
    for (const name of ["entry.js", "process-entry.js"]) {
      const text = readFileSync(join(DIST, "workers", name), "utf8");
      const held = [...text.matchAll(/^\/\/ dist\/(\S+\.js)$/gm)].map((m) => m[1]!);
      expect(held, name).toContain("workers/run-worker.js");
      expect(
        held.filter((f) => !f.startsWith("workers/") && !THREAD_MAY_LOAD.some((a) => a.test(f))),
        name,
      ).toEqual([]);
      const imported = [...text.matchAll(STATIC_IMPORT)].map((m) => m[1]!);
      expect(
        imported.filter((s) => !s.startsWith("node:")),
        name,
      ).toEqual(["../src/errors/index.js", "./index.js"]);
    }
    // The error family is one file too: every copy of its classes is that one.
    const errors = readFileSync(join(DIST, "src", "errors", "index.js"), "utf8");
    const family = [...errors.matchAll(/^\/\/ dist\/(\S+\.js)$/gm)].map((m) => m[1]!);
    expect(family).toContain("src/errors/error-classes.js");
    expect(family.filter((f) => !f.startsWith("src/errors/"))).toEqual([]);
    expect([...errors.matchAll(STATIC_IMPORT)].filter((m) => !m[1]!.startsWith("node:"))).toEqual(
      [],
    );
    // The lockdown comes before any worker code runs: in the thread's bundle,
    // the hook, then the lockdown, then the runner.
    const entry = readFileSync(join(DIST, "workers", "entry.js"), "utf8");
    const at = (f: string) => entry.indexOf(`// dist/workers/${f}`);
    expect(at("esm-hook.js")).toBeGreaterThan(-1);
    expect(at("esm-hook.js")).toBeLessThan(at("lockdown.js"));
    expect(at("lockdown.js")).toBeLessThan(at("run-worker.js"));
  });
});

/** Which folders (or files) under `src/` each layer may import from, type imports included. */
const LAYERS: Record<string, RegExp[]> = {
  "src/sandbox": [/^src\/sandbox\//, /^src\/errors(\.ts|\/)/, /^src\/config\/sandbox-config\.ts$/],
  // Config checks paths and the secrets and protected lists with the
  // sandbox's pure, fs-free modules.
  "src/config": [
    /^src\/config\//,
    /^src\/errors(\.ts|\/)/,
    /^src\/sandbox\/(virtual-path|secrets|protected-defaults)\.ts$/,
  ],
  "src/errors": [/^src\/errors(\.ts|\/)/],
  "src/pool": [/^src\/pool\//, /^src\/sandbox\//, /^src\/errors(\.ts|\/)/],
  "src/os": [/^src\/os\//, /^src\/sandbox\//, /^src\/errors(\.ts|\/)/],
  "src/tools": [
    /^src\/tools\//,
    /^src\/sandbox\//,
    /^src\/errors(\.ts|\/)/,
    /^src\/pool\//,
    /^src\/approvals\//,
    // `git: true` over an in-process Sandbox loads the host-side runner.
    /^src\/git\/git-tools\.ts$/,
  ],
  // The host side of the git tools: git run under the OS layer's confinement.
  "src/git": [
    /^src\/git\//,
    /^src\/os\//,
    /^src\/sandbox\//,
    /^src\/errors(\.ts|\/)/,
    /^src\/tools\/(git|types)\.ts$/,
  ],
  // `mountbox mcp`: the sandbox and the tool layer served over MCP, the
  // host's approval gate, audit line format and the check of where an
  // audit log may lie; of the CLI only what every command shares.
  "src/mcp": [
    /^src\/mcp\//,
    /^src\/sandbox\//,
    /^src\/errors(\.ts|\/)/,
    /^src\/tools\//,
    /^src\/pool\//,
    /^src\/approvals\//,
    /^src\/host\/audit-(log|placement)\.ts$/,
    /^src\/cli\/(cli-io|sandbox-flags|program-sandbox)\.ts$/,
  ],
};

/** Every `.ts` file under `dir` (or `dir` + ".ts" itself). */
function sourceFiles(dir: string): string[] {
  const abs = join(REPO, dir);
  if (existsSync(`${abs}.ts`)) return [`${dir}.ts`];
  if (!existsSync(abs)) return [];
  return readdirSync(abs, { recursive: true, encoding: "utf8" })
    .filter((f) => f.endsWith(".ts"))
    .map((f) => `${dir}/${f}`);
}

/** The `src/` files a source file imports (static, dynamic and type imports). */
function importsOf(file: string): string[] {
  const info = ts.preProcessFile(readFileSync(join(REPO, file), "utf8"), true, true);
  return info.importedFiles
    .map((i) => i.fileName)
    .filter((spec) => spec.startsWith("."))
    .map((spec) =>
      relative(REPO, resolve(dirname(join(REPO, file)), spec)).replace(/\.js$/, ".ts"),
    );
}

describe("lower layers import nothing above them", () => {
  it.each(Object.keys(LAYERS))("%s", (layer) => {
    const files = sourceFiles(layer);
    expect(files.length).toBeGreaterThan(0);
    const wrong = files.flatMap((file) =>
      importsOf(file)
        .filter((target) => !LAYERS[layer]!.some((allowed) => allowed.test(target)))
        .map((target) => `${file} → ${target}`),
    );
    expect(wrong).toEqual([]);
  });
});
