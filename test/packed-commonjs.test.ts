/**
 * CommonJS apps (issue 20): the packed tarball in an app whose package.json
 * says `"type": "commonjs"` (what `npm init -y` writes with npm 11),
 * hosts started from a neutral folder, on whichever Node runs the suite.
 * The README's ES module workers named `.js` (and `.ts` ones) run where Node
 * has in-thread module hooks (≥ 22.15) and are refused with what to do
 * elsewhere; CommonJS workers and CommonJS hosts (`require("mountbox")`)
 * run on every supported Node.
 */
import { cpSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { assertBuilt } from "./conformance/thread.js";
import { HAS_BWRAP, REQUIRE_BWRAP } from "./helpers/bwrap.js";
import { readAllDocs } from "./helpers/docs.js";
import { packAndInstall, runNode, writeFiles } from "./helpers/packed.js";
import { makeTempDir, removeDir } from "./helpers/tree.js";

const EXAMPLES = fileURLToPath(new URL("../examples/readme", import.meta.url));

/** Where Node can load an ES module its package calls CommonJS as an ES module. */
const HOOKS = typeof createRequire(import.meta.url)("node:module").registerHooks === "function";
const STRIPS = ["strip", "transform"].includes(
  String((process.features as { typescript?: unknown }).typescript),
);

const APP_FILES = {
  // As `npm init -y` writes it (npm 11).
  "package.json": JSON.stringify({
    name: "app",
    version: "1.0.0",
    main: "index.js",
    license: "ISC",
    type: "commonjs",
  }),
  // The README's worker: ES module syntax in a .js file, with a helper file of its own.
  "workers/main.js": `import { defineWorker } from "mountbox/worker";
import { countWords } from "./lib/words.js";
export default defineWorker(async (input, ctx) => ({ words: countWords(await ctx.sandbox.readFile("/a.txt")) }));
`,
  "workers/lib/words.js":
    "export const countWords = (t) => t.split(/\\s+/).filter(Boolean).length;\n",
  "workers/typed.ts": `import { defineWorker, type WorkerContext } from "mountbox/worker";
interface Input { n: number }
export default defineWorker(async (input: Input, ctx: WorkerContext) => input.n * 2 + ctx.attachments.length);
`,
  // An .mjs worker is an ES module anywhere; the .js file it imports is not, before Node 22.15.
  "workers/side.mjs": `import { defineWorker } from "mountbox/worker";
import shout from "./lib/shout.js";
export default defineWorker(async (input) => shout(input));
`,
  "workers/lib/shout.js": "export default (s) => s.toUpperCase();\n",
  // A CommonJS worker, with a CommonJS helper.
  "workers/legacy.js": `const { defineWorker } = require("mountbox/worker");
const { whisper } = require("./lib/whisper.js");
module.exports = defineWorker(async (input, ctx) => whisper(await ctx.sandbox.readFile("/a.txt")));
`,
  "workers/lib/whisper.js": "exports.whisper = (s) => s.toLowerCase();\n",
  // A package.json without "type" (what older npm init wrote): Node detects module syntax.
  "typeless/package.json": '{"name":"typeless","version":"1.0.0"}',
  "typeless/main.js": `import { defineWorker } from "mountbox/worker";
export default defineWorker(async () => "typeless ran");
`,
  // An ES module host in the CommonJS app: runs one worker, prints one JSON line.
  "host.mjs": `import { createHost } from "mountbox";
const [root, name, module, input, isolation] = process.argv.slice(2);
let host;
try {
  host = await createHost({ sandbox: { root }, basePath: import.meta.dirname,
    workers: { [name]: { module, dependencies: ["./workers/lib"], isolation } } });
  console.log(JSON.stringify({ ok: await host.run(name, JSON.parse(input)) }));
} catch (e) {
  console.log(JSON.stringify({ error: e.message, code: e.code, reason: e.reason }));
} finally {
  await host?.close();
}
`,
  // The CommonJS host: require("mountbox") and its subpaths.
  "host.cjs": `const { createHost } = require("mountbox");
const { defineWorker } = require("mountbox/worker");
const { createSandboxTools } = require("mountbox/ai-sdk");
const [root] = process.argv.slice(2);
(async () => {
  const host = await createHost({ sandbox: { root }, basePath: __dirname,
    workers: { legacy: { module: "./workers/legacy.js", dependencies: ["./workers/lib"] } } });
  try {
    const ok = await host.run("legacy");
    console.log(JSON.stringify({ ok, subpaths: [typeof defineWorker, typeof createSandboxTools] }));
  } finally {
    await host.close();
  }
})().catch((e) => console.log(JSON.stringify({ error: e.message, code: e.code })));
`,
};

let base: string;
let app: string;
let root: string;
let neutral: string;

beforeAll(() => {
  assertBuilt();
  base = makeTempDir("mountbox-cjs-");
  const { modules } = packAndInstall(join(base, "pack"));
  app = join(base, "app");
  root = join(base, "data");
  neutral = join(base, "neutral");
  cpSync(modules, join(app, "node_modules"), { recursive: true });
  writeFiles(app, APP_FILES);
  cpSync(EXAMPLES, join(app, "readme"), { recursive: true });
  writeFiles(root, { "a.txt": "Hello Agent World" });
  writeFiles(neutral, { ".keep": "" });
}, 180_000);
afterAll(() => removeDir(base));

/** Runs `module` as worker `name` through the ES module host, from the neutral folder. */
function runWorker(
  name: string,
  module: string,
  input: unknown = null,
  isolation = "thread",
): { ok?: unknown; error?: string; code?: string; reason?: string } {
  const run = runNode(join(app, "host.mjs"), neutral, [
    root,
    name,
    module,
    JSON.stringify(input),
    isolation,
  ]);
  const line = run.stdout.trim().split("\n").pop() ?? "";
  try {
    return JSON.parse(line);
  } catch {
    throw new Error(`host printed no result (status ${run.status}): ${run.stdout}\n${run.stderr}`);
  }
}

/** A message with this run's folder and Node version made stable. */
function stable(message: string | undefined): string {
  return (message ?? "").replaceAll(base, "<base>").replaceAll(process.version, "<node>");
}

describe('an app whose package.json says "type": "commonjs"', () => {
  // An agent process loads its module as a thread does (its view has the
  // module-loading fields of the app's package.json).
  it.runIf(HAS_BWRAP || REQUIRE_BWRAP)(
    "its workers run as processes as they run as threads",
    () => {
      const cases: [string, string, unknown][] = [
        ["main", "./workers/main.js", null],
        ["side", "./workers/side.mjs", "quiet"],
        ["legacy", "./workers/legacy.js", null],
        ["typeless", "./typeless/main.js", null],
        ["typed", "./workers/typed.ts", { n: 21 }],
      ];
      for (const [name, module, input] of cases) {
        const thread = runWorker(name, module, input);
        const proc = runWorker(name, module, input, "process");
        expect(stable(proc.error).replace(/agent process/g, "agent thread"), name).toBe(
          stable(thread.error),
        );
        expect([name, proc.ok]).toEqual([name, thread.ok]);
      }
    },
  );

  it("runs the README's ES module worker named .js, and the helper files it imports", () => {
    const out = runWorker("main", "./workers/main.js");
    if (HOOKS) expect(out).toEqual({ ok: { words: 3 } });
    else {
      // Before Node 22.15 it can never load: createHost says so, and what to do.
      expect(out.code).toBe("invalid_config");
      expect(stable(out.error)).toMatchInlineSnapshot(`
        "Invalid configuration:
        ✖ 'main.js' is an ES module (it uses import/export), but Node.js loads it as CommonJS: its package.json (<base>/app/package.json) does not say "type": "module" (npm init writes "type": "commonjs"). To run it, rename it to 'main.mjs', or set "type": "module" in that package.json (Node.js 22.15 and later run it as it is; this is <node>). → at workers.main.module"
      `);
    }
  });

  it("runs a TypeScript worker written as an ES module where Node strips types", () => {
    const out = runWorker("typed", "./workers/typed.ts", { n: 21 });
    if (STRIPS) expect(out).toEqual({ ok: 42 });
    else expect(out.error).toContain("build it to .js (tsc), or use Node 22.18+");
  });

  it("an .mjs worker importing an ES module named .js: runs, or the thread says what to do", () => {
    const out = runWorker("side", "./workers/side.mjs", "quiet");
    if (HOOKS) expect(out).toEqual({ ok: "QUIET" });
    else {
      // The helper is the worker's own business: the thread names it, no host folder.
      expect(out.reason).toBe("threw");
      expect(out.error).not.toContain(base);
      expect(stable(out.error)).toMatchInlineSnapshot(
        `"Worker 'side' failed: Error: 'shout.js' is an ES module (it uses import/export), but Node.js loads it as CommonJS: its nearest package.json does not say "type": "module" (npm init writes "type": "commonjs"). To run it, rename it to 'shout.mjs', or set "type": "module" in that package.json (Node.js 22.15 and later run it as it is; this is <node>)."`,
      );
    }
  });

  it("runs a CommonJS worker (require, module.exports) on every Node", () => {
    expect(runWorker("legacy", "./workers/legacy.js")).toEqual({ ok: "hello agent world" });
  });

  it('a folder whose package.json has no "type" runs ES module workers: Node detects them', () => {
    expect(runWorker("typeless", "./typeless/main.js")).toEqual({ ok: "typeless ran" });
  });

  it("a CommonJS host loads mountbox, mountbox/worker and mountbox/ai-sdk with require()", () => {
    const run = runNode(join(app, "host.cjs"), neutral, [root]);
    expect(JSON.parse(run.stdout.trim().split("\n").pop() ?? "null")).toEqual({
      ok: "hello agent world",
      subpaths: ["function", "function"],
    });
  });
});

describe("the docs' CommonJS example, from the packed install", () => {
  const files = [
    "commonjs/package.json",
    "commonjs/host.js",
    "commonjs/workers/count.js",
    "commonjs/workers/first-line.mjs",
  ];

  it.each(files.slice(1))("the docs show %s exactly as the file is", (file) => {
    expect(readAllDocs()).toContain(readFileSync(join(EXAMPLES, file), "utf8").trim());
  });

  it("host.js prints what the docs say it prints", () => {
    const run = runNode(join(app, "readme/commonjs/host.js"), neutral);
    const code = readFileSync(join(EXAMPLES, "commonjs/host.js"), "utf8").trim();
    const docs = readAllDocs();
    const shown = /prints:?\n\n(`{3,4})text\n([\s\S]*?)\n\1\n/.exec(
      docs.slice(docs.indexOf(code) + code.length),
    )?.[2];
    expect(run.stdout.trimEnd()).toBe(shown);
  });
});
