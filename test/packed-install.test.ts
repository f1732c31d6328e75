/**
 * The runtime as users install it (issue: agents run from a real install):
 * the packed tarball in an app folder, in npm, linked, pnpm-style and
 * workspace layouts, the host started from a neutral folder, the app folder
 * and the sandbox root folder — on whichever Node runs this suite (CI runs
 * it on 20, 22, 24 and 26). Nothing here imports the package by
 * self-reference or runs with the repository as working folder.
 */
import { cpSync, mkdirSync, readFileSync, symlinkSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { collectPackages } from "../src/threads/module-grants.js";
import { assertBuilt } from "./conformance/thread.js";
import { describeWithBwrap } from "./helpers/bwrap.js";
import { readAllDocs } from "./helpers/docs.js";
import { LAYOUTS, layOut, packAndInstall, runNode, writeFiles } from "./helpers/packed.js";
import { makeTempDir, removeDir } from "./helpers/tree.js";

const MAIN_WORKER = `
import { defineWorker } from "mountbox/worker";
import { greet } from "greet";
import fs from "node:fs";
const attempt = (f) => { try { f(); return "read"; } catch (e) { return e.code ?? e.name; } };
export default defineWorker(async (input, ctx) => ({
  viaSandbox: await ctx.sandbox.readFile("/a.txt"),
  greeting: greet("agent"),
  secretDirect: attempt(() => fs.readFileSync(input.secret)),
  siblingDirect: attempt(() => fs.readFileSync(input.sibling)),
  cwdList: attempt(() => fs.readdirSync(".")),
  env: Object.keys(process.env).length,
  helper: await ctx.delegate("helper", "x"),
}));
`;
const HELPER_WORKER = `
import { defineWorker } from "mountbox/worker";
export default defineWorker(async (input, ctx) => ({ sees: await ctx.sandbox.listFiles("/") }));
`;
const UNDECLARED_WORKER = `
import { defineWorker } from "mountbox/worker";
export default defineWorker(async () => (await import("greet")).greet("x"));
`;
const NET_WORKER = `
import { defineWorker } from "mountbox/worker";
import net from "node:net";
export default defineWorker(async (port) => new Promise((resolve) => {
  try {
    const s = net.connect(port, "127.0.0.1", () => { s.end(); resolve("connected"); });
    s.on("error", (e) => resolve(e.code ?? e.name));
  } catch (e) { resolve(e.code ?? e.name); }
}));
`;
// The host: run from any folder; prints one JSON line.
const HOST = `
import { createHost } from "mountbox";
const [root, worker, input, network] = process.argv.slice(2);
const host = await createHost({
  sandbox: { root },
  basePath: import.meta.dirname,
  workers: {
    main: { module: "./workers/main.js", dependencies: ["greet"], delegates: ["helper"] },
    helper: { module: "./workers/helper.js", sandbox: { restrict: "/docs", readonly: true } },
    undeclared: { module: "./workers/undeclared.js" },
    net: { module: "./workers/net.js", network: network === "true" },
  },
});
try {
  console.log(JSON.stringify({ ok: await host.run(worker, JSON.parse(input)) }));
} catch (e) {
  console.log(JSON.stringify({ error: e.message, reason: e.reason }));
} finally {
  await host.close();
}
`;

/** The host and workers every test app gets. */
const APP_FILES = {
  "host.mjs": HOST,
  "workers/main.js": MAIN_WORKER,
  "workers/helper.js": HELPER_WORKER,
  "workers/undeclared.js": UNDECLARED_WORKER,
  "workers/net.js": NET_WORKER,
};

let base: string;
let modules: string;

beforeAll(() => {
  assertBuilt();
  base = makeTempDir("mountbox-packed-");
  ({ modules } = packAndInstall(join(base, "pack")));
}, 180_000);
afterAll(() => removeDir(base));

let misc: { app: string; root: string } | undefined;
/** An npm-layout app with the worker files, for the tests outside the layout loop. */
function miscApp(): { app: string; root: string } {
  if (misc) return misc;
  const app = layOut("npm", join(base, "misc"), modules);
  const root = join(base, "misc", "data");
  writeFiles(app, APP_FILES);
  writeFiles(root, { "a.txt": "hello" });
  misc = { app, root };
  return misc;
}

function parse(run: { stdout: string; stderr: string; status: number | null }): {
  ok?: Record<string, unknown>;
  error?: string;
  reason?: string;
} {
  const line = run.stdout.trim().split("\n").pop() ?? "";
  try {
    return JSON.parse(line);
  } catch {
    throw new Error(`host printed no result (status ${run.status}): ${run.stdout}\n${run.stderr}`);
  }
}

describe.each(LAYOUTS)("layout %s", (layout) => {
  let app: string;
  let root: string;
  let neutral: string;

  beforeAll(() => {
    const dir = join(base, layout);
    app = layOut(layout, dir, modules);
    root = join(dir, "data");
    neutral = join(dir, "neutral");
    writeFiles(app, APP_FILES);
    writeFiles(root, { "a.txt": "hello", "secret.txt": "SECRET", "docs/d.md": "d" });
    writeFiles(neutral, { ".keep": "" });
  });

  it.each(["neutral", "app", "root"] as const)(
    "runs agents with the host started in the %s folder",
    (where) => {
      const cwd = where === "neutral" ? neutral : where === "app" ? app : root;
      const input = JSON.stringify({
        secret: join(root, "secret.txt"),
        sibling: join(app, "workers", "helper.js"),
      });
      const run = runNode(join(app, "host.mjs"), cwd, [root, "main", input]);
      const out = parse(run);
      expect(out.error).toBeUndefined();
      expect(out.ok).toEqual({
        viaSandbox: "hello",
        greeting: "HELLO AGENT",
        secretDirect: "ERR_ACCESS_DENIED",
        siblingDirect: "ERR_ACCESS_DENIED",
        cwdList: "ERR_ACCESS_DENIED",
        env: 0,
        helper: { sees: ["/docs/d.md"] },
      });
    },
  );

  it("a refused import names the package, never a host path", () => {
    const out = parse(runNode(join(app, "host.mjs"), neutral, [root, "undeclared", "null"]));
    expect(out.reason).toBe("threw");
    expect(out.error).toContain("Cannot import 'greet'");
    expect(out.error).toContain("'dependencies'");
    expect(out.error).not.toContain(base);
  });
});

it("with root '.', worker code and node_modules inside it are protected from agents", () => {
  const { app } = miscApp();
  writeFiles(app, {
    "workers/tamper.js": `
import { defineWorker } from "mountbox/worker";
const attempt = (p) => p.then(() => "written", (e) => e.code);
export default defineWorker(async (input, ctx) => ({
  lockdown: await attempt(ctx.sandbox.writeFile("/node_modules/mountbox/dist/workers/lockdown.js", "//")),
  module: await attempt(ctx.sandbox.writeFile("/workers/tamper.js", "//")),
  data: await attempt(ctx.sandbox.writeFile("/notes.txt", "fine")),
  // Where the worker's imports are looked up: planted there, code would be
  // granted to and run by its next thread (found by an adversarial review).
  planted: await Promise.all(
    ["/workers/node_modules/mountbox/package.json", "/workers/node_modules/zod/index.js", "/workers/package.json"].map(
      (p) => attempt(ctx.sandbox.writeFile(p, "{}")),
    ),
  ),
  readModule: (await ctx.sandbox.readFile("/workers/tamper.js")).includes("defineWorker"),
}));
`,
    "tamper.mjs": `
import { createHost } from "mountbox";
const host = await createHost({ sandbox: { root: "." }, basePath: import.meta.dirname,
  workers: { t: { module: "./workers/tamper.js" } } });
console.log(JSON.stringify({ ok: await host.run("t") }));
await host.close();
`,
  });
  expect(parse(runNode(join(app, "tamper.mjs"), app)).ok).toEqual({
    lockdown: "path_not_writable",
    module: "path_not_writable",
    data: "written",
    planted: ["path_not_writable", "path_not_writable", "path_not_writable"],
    readModule: true,
  });
});

it.each([
  ["a worker declares it", '{"name":"app","private":true,"type":"module"}', ["@repo/shared"]],
  [
    "the host's own package depends on it",
    '{"name":"app","private":true,"type":"module","dependencies":{"@repo/shared":"*"}}',
    [],
  ],
])(
  "a workspace package's lookup places are protected when %s (found by an adversarial review)",
  (_case, manifest, dependencies) => {
    // An npm workspace: packages/shared linked into the root node_modules;
    // its imports are looked up in packages/node_modules before the root's.
    const mono = join(base, `ws-${dependencies.length}`);
    const app = layOut("workspace", mono, modules);
    const root = join(mono, "mono");
    writeFiles(root, {
      "packages/shared/package.json":
        '{"name":"@repo/shared","version":"1.0.0","type":"module","exports":"./index.js","dependencies":{"shout":"1.0.0"}}',
      "packages/shared/index.js": 'export { shout } from "shout";\n',
    });
    mkdirSync(join(root, "node_modules", "@repo"), { recursive: true });
    symlinkSync("../../packages/shared", join(root, "node_modules", "@repo", "shared"), "dir");
    writeFiles(app, {
      "package.json": manifest,
      "workers/plant.js": `
import { defineWorker } from "mountbox/worker";
const attempt = (p) => p.then(() => "written", (e) => e.code);
export default defineWorker(async (input, ctx) => Promise.all(
  ["/packages/node_modules/shout/index.js", "/packages/package.json", "/packages/node_modules/.bin/x"]
    .map((p) => attempt(ctx.sandbox.writeFile(p, "export const shout = () => 'planted';")))));
`,
      "plant.mjs": `
import { createHost } from "mountbox";
const host = await createHost({ sandbox: { root: ${JSON.stringify(root)} }, basePath: import.meta.dirname,
  workers: { plant: { module: "./workers/plant.js", dependencies: ${JSON.stringify(dependencies)} } } });
console.log(JSON.stringify({ ok: await host.run("plant") }));
await host.close();
`,
    });
    expect(parse(runNode(join(app, "plant.mjs"), mono)).ok).toEqual([
      "path_not_writable",
      "path_not_writable",
      "path_not_writable",
    ]);
  },
);

it("the installed bin answers --version with the package's version", () => {
  const pkg = JSON.parse(readFileSync(join(modules, "mountbox", "package.json"), "utf8")) as {
    version: string;
  };
  // npm's own link to the bin, as `npx mountbox` runs it.
  const run = runNode(join(modules, ".bin", "mountbox"), base, ["--version"]);
  expect(run.status).toBe(0);
  expect(run.stdout).toBe(`${pkg.version}\n`);
});

it("warm spares do not keep the process alive when close() is forgotten", () => {
  const { app } = miscApp();
  writeFiles(app, {
    "forgetful.mjs": `
import { createHost } from "mountbox";
const host = await createHost({ basePath: import.meta.dirname, warmThreads: 2,
  workers: { helper: { module: "./workers/helper.js" } } });
console.log(JSON.stringify(await host.run("helper").catch((e) => e.message)));
`,
  });
  // runNode kills it after 60 s (status null) if something keeps it alive.
  const run = runNode(join(app, "forgetful.mjs"), app);
  expect(run.status).toBe(0);
  expect(run.stdout.trim()).not.toBe("");
});

it("runs a TypeScript worker where Node strips types, and says what to do elsewhere", () => {
  const { app } = miscApp();
  writeFiles(app, {
    "workers/typed.ts": `import { defineWorker, type WorkerContext } from "mountbox/worker";
interface Input { n: number }
export default defineWorker(async (input: Input, ctx: WorkerContext) => input.n * 2 + ctx.attachments.length);
`,
    "typed.mjs": `
import { createHost } from "mountbox";
try {
  const host = await createHost({ basePath: import.meta.dirname, workers: { t: { module: "./workers/typed.ts" } } });
  console.log(JSON.stringify({ ok: await host.run("t", { n: 21 }) }));
  await host.close();
} catch (e) { console.log(JSON.stringify({ error: e.message })); }
`,
  });
  const out = parse(runNode(join(app, "typed.mjs"), app));
  const strips = ["strip", "transform"].includes(
    String((process.features as { typescript?: unknown }).typescript),
  );
  if (strips) expect(out).toEqual({ ok: 42 });
  else expect(out.error).toContain("build it to .js (tsc), or use Node 22.18+");
});

describe("network per worker", () => {
  let server: Server;
  let port: number;
  let app: string;
  let root: string;

  beforeAll(async () => {
    ({ app, root } = miscApp());
    server = createServer((s) => s.end());
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    port = (server.address() as { port: number }).port;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  it("is off by default where Node can take it away (Node ≥ 25), on when asked", () => {
    const enforced = process.allowedNodeEnvironmentFlags.has("--allow-net");
    const off = parse(runNode(join(app, "host.mjs"), app, [root, "net", String(port), "false"]));
    const on = parse(runNode(join(app, "host.mjs"), app, [root, "net", String(port), "true"]));
    expect(on.ok).toBe("connected");
    // Before Node 25 a thread always has the network (README says so).
    expect(off.ok).toBe(enforced ? "ERR_ACCESS_DENIED" : "connected");
  });

  it("warns once where a worker's network: false cannot be enforced", () => {
    const run = runNode(join(app, "host.mjs"), app, [root, "net", String(port), "false"]);
    const enforced = process.allowedNodeEnvironmentFlags.has("--allow-net");
    expect(run.stderr.split("MOUNTBOX_NETWORK_UNENFORCED").length - 1).toBe(enforced ? 0 : 1);
  });
});

describe("README and docs/ examples, run as written from the packed install", () => {
  const EXAMPLES = fileURLToPath(new URL("../examples/readme", import.meta.url));
  // README.md and every docs/*.md page: each example is shown on one of them.
  const DOCS = readAllDocs();
  let dir: string;
  let neutral: string;

  beforeAll(() => {
    const app = layOut("npm", join(base, "readme"), modules);
    // The AI SDK example needs `ai` (an optional peer dependency) beside
    // mountbox: the repository's copy, with everything it depends on.
    const repo = fileURLToPath(new URL("..", import.meta.url));
    for (const pkg of collectPackages(["ai"], repo).found)
      cpSync(pkg.real, join(app, "node_modules", pkg.name), { recursive: true });
    dir = join(app, "readme");
    cpSync(EXAMPLES, dir, { recursive: true });
    neutral = join(base, "readme", "neutral");
    writeFiles(neutral, { ".keep": "" });
  });

  it.each([
    "sandbox.mjs",
    "tools.mjs",
    "pool.mjs",
    "ai-sdk.mjs",
    "shell.mjs",
    "host.mjs",
    "workers/main.js",
    "workers/analyzer.js",
    "program/program.yaml",
    "program/run.mjs",
    "program/workers/main.js",
    "llm/program.yaml",
    "llm/workers/editor.worker",
    "llm/workers/counter.worker",
    "llm/run.mjs",
    "approvals/host.mjs",
    "approvals/worker.js",
  ])("the docs show %s exactly as the file is", (file) => {
    expect(DOCS).toContain(readFileSync(join(EXAMPLES, file), "utf8").trim());
  });

  it("sandbox.mjs: reads, writes, and each refusal has its code", () => {
    const run = runNode(join(dir, "sandbox.mjs"), neutral);
    expect(run.stderr).toBe("");
    expect(run.stdout.split("\n")).toEqual([
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the file's text, printed
      "export const greet = (name: string) => `hello ${name}`;",
      "",
      "path_not_writable",
      "path_not_in_sandbox",
      "permission_escalation",
      "",
    ]);
    expect(readFileSync(join(dir, "project/src/generated/api.ts"), "utf8")).toContain("api");
  });

  it("tools.mjs, pool.mjs and ai-sdk.mjs print what the docs say they print", () => {
    // A fresh copy: sandbox.mjs writes into its project folder.
    const fresh = join(dir, "..", "readme-fresh");
    cpSync(EXAMPLES, fresh, { recursive: true });
    for (const file of ["tools.mjs", "ai-sdk.mjs", "llm/run.mjs", "approvals/host.mjs"]) {
      const run = runNode(join(fresh, file), neutral);
      // Before Node 25 the host warns once that threads have the network.
      expect(
        run.stderr.replace(
          /\(node:\d+\) \[MOUNTBOX_NETWORK_UNENFORCED\][^\n]*\n(\(Use[^\n]*\n)?/,
          "",
        ),
        file,
      ).toBe("");
      // The docs show each one's output right after its code.
      const code = readFileSync(join(EXAMPLES, file), "utf8").trim();
      const after = DOCS.slice(DOCS.indexOf(code) + code.length);
      const shown = /prints:?\n\n(`{3,4})text\n([\s\S]*?)\n\1\n/.exec(after)?.[2];
      expect(run.stdout.trimEnd(), file).toBe(shown);
    }
    const pool = runNode(join(fresh, "pool.mjs"), neutral);
    expect(pool.stderr).toBe("");
    const [grep, pdfs] = pool.stdout.trim().split("\n");
    expect(JSON.parse(grep ?? "")).toEqual({
      matches: [
        {
          path: "/src/a.ts",
          line: 1,
          // biome-ignore lint/suspicious/noTemplateCurlyInString: the file's text
          text: "export const greet = (name: string) => `hello ${name}`;",
        },
        { path: "/src/lib/util.ts", line: 1, text: "export const id = <T>(x: T) => x;" },
      ],
      truncated: false,
    });
    expect(pdfs).toBe("[ '/docs/spec.pdf' ]");
  });

  it("host.mjs: delegation, a refused write, attachments", () => {
    const run = runNode(join(dir, "host.mjs"), neutral);
    expect(JSON.parse(run.stdout)).toEqual({
      task: "review",
      refused: "path_not_writable",
      analysis: {
        words: 9,
        sees: ["/src/lib/util.ts"],
        attachments: ["/docs/spec.pdf (application/pdf, 22 B)"],
      },
    });
    expect(run.stderr).toContain("refused: writeFile /cache/x");
  });

  it("program/run.mjs: root '.', workers inside it, host started there", () => {
    const run = runNode(join(dir, "program", "run.mjs"), join(dir, "program"));
    expect(JSON.parse(run.stdout)).toEqual({
      summary: { topic: "setup", files: ["/docs/setup.md"], firstLine: "# Setup" },
      direct: "ERR_ACCESS_DENIED",
      writable: false,
    });
  });
});

describeWithBwrap("README's shell example, from the packed install", () => {
  it("shell.mjs: lists the workspace, is refused the read-only mount, says why", () => {
    const app = layOut("npm", join(base, "shell"), modules);
    const dir = join(app, "readme");
    cpSync(fileURLToPath(new URL("../examples/readme", import.meta.url)), dir, { recursive: true });
    const run = runNode(join(dir, "shell.mjs"), app);
    const lines = run.stdout.trim().split("\n");
    expect(lines[0]).toContain("/workspace");
    const r = JSON.parse(lines.at(-1) ?? "{}") as {
      exitCode: number;
      stdout: string;
      notes: string[];
    };
    expect(r.stdout).toContain("a.ts");
    expect(r.stdout).toContain("deps.json");
    expect(r.exitCode).not.toBe(0);
    expect(r.notes.join(" ")).toContain("Writable: /workspace/src");
    expect(run.stdout).not.toContain(base);
  });
});
