/**
 * The published types as users compile them (issue 20): the packed tarball
 * installed with npm into a fresh app with `typescript` and `@types/node`,
 * compiled with `tsc --noEmit` under `strict` and `skipLibCheck: false`
 * (every `.d.ts` of mountbox checked, not skipped): "mountbox",
 * "mountbox/worker" and "mountbox/ai-sdk"; a typed host in TypeScript and
 * the docs' one in plain JavaScript (JSDoc, `checkJs`; it also runs), each
 * with lines that must be type errors (`@ts-expect-error`: an unused one
 * fails the compile).
 *
 * With `ai` 6, `skipLibCheck: false` also checks `ai`'s own types, whose
 * `@ai-sdk/provider` imports `json-schema` without types; TypeScript asks
 * for `@types/json-schema` then (nothing of mountbox's), so that app has it.
 *
 * `ai` is an optional peer dependency. Without it, "mountbox" and
 * "mountbox/worker" compile; "mountbox/ai-sdk" (whose functions need `ai` at
 * run time too) fails to compile with TypeScript's own "Cannot find module
 * 'ai'", which names what to install.
 *
 * npm's cache is `.cache/npm`, installs are made with `--prefer-offline`
 * and kept per build (test/helpers/install-cache.ts);
 * the versions are the ones this repository builds with.
 */
import { spawnSync } from "node:child_process";
import { cpSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { assertBuilt } from "./conformance/thread.js";
import { readAllDocs } from "./helpers/docs.js";
import { copyNpmInstall } from "./helpers/install-cache.js";
import { packTarball, writeFiles } from "./helpers/packed.js";
import { makeTempDir, removeDir } from "./helpers/tree.js";

const REPO = fileURLToPath(new URL("..", import.meta.url));
const CACHE = join(REPO, ".cache", "npm");

/** `name@version` as installed in this repository (so the cache serves it). */
function pinned(name: string): string {
  const pkg = JSON.parse(readFileSync(join(REPO, "node_modules", name, "package.json"), "utf8"));
  return `${name}@${pkg.version}`;
}

const TSCONFIG = JSON.stringify({
  compilerOptions: {
    target: "ES2022",
    module: "NodeNext",
    moduleResolution: "NodeNext",
    strict: true,
    skipLibCheck: false,
    noEmit: true,
    allowJs: true,
    checkJs: true,
    types: ["node"],
  },
});

/** A typed TypeScript host and its workers. */
const TS_FILES = {
  "src/workers/analyzer.ts": `import { defineWorker } from "mountbox/worker";
export default defineWorker(async (input: { text: string }) => ({ words: input.text.split(" ").length }));
`,
  "src/workers/main.ts": `import { defineWorker, type WorkerContext } from "mountbox/worker";
type Delegates = { analyzer: typeof import("./analyzer.js") };
export default defineWorker(async (input: { path: string }, ctx: WorkerContext<Delegates>) => {
  const { words } = await ctx.delegate("analyzer", { text: await ctx.sandbox.readFile(input.path) });
  // @ts-expect-error: analyzer's input has 'text'
  await ctx.delegate("analyzer", { txt: "" });
  return { path: input.path, words };
});
`,
  "src/host.ts": `import { createHost, type Host, SandboxError } from "mountbox";
type Workers = {
  main: typeof import("./workers/main.js");
  analyzer: typeof import("./workers/analyzer.js");
};
export async function run(): Promise<number> {
  const host = await createHost<Workers>({
    sandbox: { root: "." },
    workers: { main: { module: "./workers/main.js", delegates: ["analyzer"] }, analyzer: { module: "./workers/analyzer.js" } },
  });
  const out: { path: string; words: number } = await host.run("main", { path: "/a.md" });
  // @ts-expect-error: no worker 'mian'
  await host.run("mian", { path: "/a.md" });
  // @ts-expect-error: main's input has 'path: string'
  await host.run("main", { path: 1 });
  const same: Host<Workers> = host;
  await same.close();
  return out.words + (new SandboxError("io_error", "x") instanceof Error ? 1 : 0);
}
`,
};

/** The docs' typed host in plain JavaScript (JSDoc), as the example files are. */
const EXAMPLE = fileURLToPath(new URL("../examples/readme/typed", import.meta.url));
const EXAMPLE_FILES = ["host.js", "workers/main.js", "workers/analyzer.js"];

/** Misuses of that example's types, each of which must be a type error. */
const JS_MISUSE = {
  "typed/misuse.js": `/** @typedef {{ main: typeof import("./workers/main.js"), analyzer: typeof import("./workers/analyzer.js") }} Workers */
/** @param {import("mountbox").Host<Workers>} host */
export async function runs(host) {
  // @ts-expect-error: no worker 'mian'
  await host.run("mian", { path: "/a" });
  // @ts-expect-error: main's input has 'path'
  await host.run("main", { file: "/x" });
  // @ts-expect-error: main needs its input
  await host.run("main");
  /** @type {{ words: number }} */
  const r = await host.run("analyzer", { text: "a" });
  return r;
}
/** @param {import("mountbox/worker").WorkerContext<{ analyzer: typeof import("./workers/analyzer.js") }>} ctx */
export async function delegates(ctx) {
  // @ts-expect-error: analyzer's input has 'text'
  await ctx.delegate("analyzer", { txt: "" });
  // @ts-expect-error: 'main' is not among its delegates
  await ctx.delegate("main", { path: "/a" });
  /** @type {{ words: number }} */
  const r = await ctx.delegate("analyzer", { text: "a" });
  return r;
}
`,
};

const AI_SDK_FILE = {
  "ai/tools.ts": `import { createSandbox } from "mountbox";
import { createSandboxTools } from "mountbox/ai-sdk";
export const tools = await createSandboxTools(createSandbox({ root: "." }));
`,
};

let base: string;
let tarball: string;

beforeAll(() => {
  assertBuilt();
  base = makeTempDir("mountbox-types-");
  tarball = packTarball(join(base, "pack"));
}, 120_000);
afterAll(() => removeDir(base));

/**
 * An app with the tarball and `packages` installed by npm (once per build:
 * the install is cached, its `node_modules` copied in); returns its folder.
 */
function install(name: string, packages: string[]): string {
  const app = join(base, name);
  writeFiles(app, {
    "package.json": JSON.stringify({ name, private: true, type: "module" }),
    "tsconfig.json": TSCONFIG,
    ...TS_FILES,
    ...JS_MISUSE,
  });
  cpSync(EXAMPLE, join(app, "typed"), { recursive: true });
  cpSync(join(EXAMPLE, "..", "project"), join(app, "project"), { recursive: true });
  copyNpmInstall(tarball, packages, app, ["--cache", CACHE]);
  return app;
}

/** Runs the app's own tsc over `files` (or the whole project); returns its status and output. */
function tsc(app: string, files?: string[]): { status: number | null; out: string } {
  const args = files ? [...files, ...tscFlags()] : ["-p", "tsconfig.json"];
  const r = spawnSync(process.execPath, [join(app, "node_modules/typescript/bin/tsc"), ...args], {
    cwd: app,
    encoding: "utf8",
    timeout: 240_000,
  });
  return { status: r.status, out: `${r.stdout}${r.stderr}`.trim() };
}

/** The tsconfig's options as flags (tsc ignores tsconfig.json when given files). */
function tscFlags(): string[] {
  const o = JSON.parse(TSCONFIG).compilerOptions as Record<string, unknown>;
  return Object.entries(o).flatMap(([k, v]) =>
    Array.isArray(v) ? [`--${k}`, v.join(",")] : [`--${k}`, String(v)],
  );
}

describe("the published types compile with skipLibCheck: false", () => {
  it.each(EXAMPLE_FILES)("the docs show examples/readme/typed/%s exactly as the file is", (f) => {
    expect(readAllDocs()).toContain(readFileSync(join(EXAMPLE, f), "utf8").trim());
  });

  it("with ai installed: mountbox, mountbox/worker, mountbox/ai-sdk, typed hosts in TS and JS", () => {
    const app = install("with-ai", [
      pinned("typescript"),
      pinned("@types/node"),
      pinned("ai"),
      // ai's own types need it under skipLibCheck: false (see above).
      "@types/json-schema@7.0.15",
    ]);
    writeFiles(app, AI_SDK_FILE);
    expect(tsc(app)).toEqual({ status: 0, out: "" });
    // The docs' typed host runs as written, from the app.
    const run = spawnSync(
      process.execPath,
      [`--disable-warning=MOUNTBOX_NETWORK_UNENFORCED`, "typed/host.js"],
      { cwd: app, encoding: "utf8", timeout: 60_000, env: { ...process.env, NODE_OPTIONS: "" } },
    );
    expect({ status: run.status, stdout: run.stdout, stderr: run.stderr }).toEqual({
      status: 0,
      stdout: "/src/a.ts: 9 words\n",
      stderr: "",
    });
  }, 600_000);

  it("without ai: mountbox and mountbox/worker compile; mountbox/ai-sdk names 'ai'", () => {
    const app = install("without-ai", [pinned("typescript"), pinned("@types/node")]);
    expect(tsc(app)).toEqual({ status: 0, out: "" });
    writeFiles(app, AI_SDK_FILE);
    const r = tsc(app, ["ai/tools.ts"]);
    expect(r.status).not.toBe(0);
    expect(r.out).toMatch(
      /node_modules\/mountbox\/dist\/src\/ai-sdk\/index\.d\.ts\(\d+,\d+\): error TS2307: Cannot find module 'ai' or its corresponding type declarations\./,
    );
  }, 600_000);
});
