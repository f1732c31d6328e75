/**
 * Issue 18, findings 1 and 2: nothing the host process loads or may load —
 * its `node_modules` chain, package manifests and lockfiles, its entry
 * script, mountbox's own package — is writable by an agent, in-process,
 * through the port (agent code and LLM text) or from a shell. Each host
 * here is a real Node process started from its own app folder (the host's
 * code locations are found from its entry script and its mountbox), with
 * the sandbox root on that folder (`root: "."`, as docs/runtime.md allows).
 */
import { readFileSync, readlinkSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { assertBuilt } from "./conformance/thread.js";
import { describeWithBwrap } from "./helpers/bwrap.js";
import { LAYOUTS, layOut, packAndInstall, runNode, writeFiles } from "./helpers/packed.js";
import { makeTempDir, removeDir } from "./helpers/tree.js";

const REPO = fileURLToPath(new URL("..", import.meta.url));
/** The built library, imported by file URL from hosts outside the repository. */
const DIST = pathToFileURL(join(REPO, "dist/src/index.js")).href;
/** The AI SDK's mock model, for an LLM worker's host outside the repository. */
const AI_TEST = (() => {
  const pkg = JSON.parse(readFileSync(join(REPO, "node_modules/ai/package.json"), "utf8")) as {
    exports: Record<string, { import: string }>;
  };
  return pathToFileURL(join(REPO, "node_modules/ai", pkg.exports["./test"]!.import)).href;
})();

const HACK = "globalThis.hacked = true; // written by an agent\n";
const PISCINA = "export const worker = 'the real piscina worker';\n";

/** Parses the last stdout line of a host run as JSON (with the run's output on failure). */
function parse(run: {
  stdout: string;
  stderr: string;
  status: number | null;
}): Record<string, unknown> {
  const line = run.stdout.trim().split("\n").pop() ?? "";
  try {
    return JSON.parse(line);
  } catch {
    throw new Error(`host printed no result (status ${run.status}): ${run.stdout}\n${run.stderr}`);
  }
}

/** A `code: message` outcome must be a refusal naming `entry` and no host path. */
function expectRefused(outcome: unknown, entry: string, hostDir: string): void {
  expect(outcome).toMatch(/^path_not_writable: /);
  expect(outcome).toContain(`'${entry}'`);
  expect(outcome).not.toContain(hostDir);
}

/**
 * The secure defaults (secrets, protected tool configs such as `.npmrc` and
 * `.yarnrc`) refuse some of the same files first: these hosts turn them off,
 * so each refusal here is the host-code protection's own.
 */
const ONLY_HOST_CODE = JSON.stringify({ secrets: [], protected: [".git"] });

let base: string;
beforeAll(() => {
  assertBuilt();
  base = makeTempDir("mountbox-hostcode-");
});
afterAll(() => removeDir(base), 120_000);

// ---------------------------------------------------------------------------
// (a) The packed install: an agent writes through ctx.sandbox (the port).

const TAMPER_WORKER = `
import { defineWorker } from "mountbox/worker";
const attempt = (p) => p.then(() => "written", (e) => e.code + ": " + e.message);
export default defineWorker(async (paths, ctx) => {
  const out = {};
  for (const p of paths) out[p] = await attempt(ctx.sandbox.writeFile(p, ${JSON.stringify(HACK)}));
  return out;
});
`;
const TAMPER_HOST = `
import { createHost } from "mountbox";
const [root, paths] = process.argv.slice(2);
const host = await createHost({ sandbox: { root, ...${ONLY_HOST_CODE} }, basePath: import.meta.dirname,
  workers: { t: { module: "./workers/tamper.js" } } });
try {
  console.log(JSON.stringify(await host.run("t", JSON.parse(paths))));
} catch (e) {
  console.log(JSON.stringify({ error: e.message }));
} finally {
  await host.close();
}
`;

describe("from the packed install, an agent cannot write the host's dependencies", () => {
  let modules: string;
  beforeAll(() => {
    ({ modules } = packAndInstall(join(base, "pack")));
  }, 180_000);

  /**
   * Per layout: the sandbox root (relative to the layout's folder, "app" is
   * the app itself), and the virtual paths of piscina's pool-thread file and
   * of the manifests and lockfiles, each with the protected entry its refusal
   * must name.
   */
  const CASES: Record<
    (typeof LAYOUTS)[number],
    { root: string; targets: [string, string][]; project: string }
  > = {
    npm: {
      root: "app",
      targets: [
        ["/node_modules/piscina/dist/worker.js", "/node_modules"],
        ["/node_modules/zod/index.js", "/node_modules"],
        ["/node_modules/mountbox/dist/src/index.js", "/node_modules"],
        ["/package.json", "/package.json"],
        ["/package-lock.json", "/package-lock.json"],
        ["/.npmrc", "/.npmrc"],
        ["/host.mjs", "/host.mjs"],
      ],
      project: "/notes.txt",
    },
    pnpm: {
      root: "app",
      targets: [
        ["/node_modules/.pnpm/piscina@1.0.0/node_modules/piscina/dist/worker.js", "/node_modules"],
        ["/package.json", "/package.json"],
        ["/pnpm-lock.yaml", "/pnpm-lock.yaml"],
      ],
      project: "/notes.txt",
    },
    // The package is a link to a folder with its own node_modules: root
    // above both.
    linked: {
      root: ".",
      targets: [
        // createHost protects the package folder its threads load (the
        // outermost entry is named).
        ["/linked-src/mountbox/node_modules/piscina/dist/worker.js", "/linked-src/mountbox"],
        ["/linked-src/mountbox/package.json", "/linked-src/mountbox"],
        ["/linked-src/node_modules", "/linked-src/node_modules"],
        ["/app/package.json", "/app/package.json"],
      ],
      project: "/app/notes.txt",
    },
    // Hoisted to the monorepo's root: the root is the monorepo. Its
    // package folder is the host's code: an install runs and links what
    // is there (a package planted under the name of one the host loads
    // replaces it: found by an adversarial review).
    workspace: {
      root: "mono",
      targets: [
        ["/node_modules/piscina/dist/worker.js", "/node_modules"],
        ["/package.json", "/package.json"],
        ["/package-lock.json", "/package-lock.json"],
        ["/packages/app/package.json", "/packages"],
        ["/packages/zod/package.json", "/packages"],
        ["/packages/app/notes.txt", "/packages"],
      ],
      project: "/notes.txt",
    },
  };

  it.each(LAYOUTS)("layout %s: writes are refused, naming the entry; files unchanged", (layout) => {
    const dir = join(base, layout);
    const app = layOut(layout, dir, modules);
    const { root, targets, project } = CASES[layout];
    const rootDir = root === "app" ? app : join(dir, root);
    writeFiles(app, { "workers/tamper.js": TAMPER_WORKER, "host.mjs": TAMPER_HOST });
    // Lockfiles as installers leave them; piscina's pool file as a marker.
    writeFiles(rootDir, { "package-lock.json": "{}", "pnpm-lock.yaml": "lockfileVersion: 9\n" });
    const host = (v: string) => join(rootDir, v);
    const before = new Map<string, string | undefined>();
    for (const [v] of targets) {
      try {
        before.set(v, readFileSync(host(v), "utf8"));
      } catch {
        before.set(v, undefined);
      }
    }
    const paths = [...targets.map(([v]) => v), project];
    const out = parse(runNode(join(app, "host.mjs"), app, [rootDir, JSON.stringify(paths)]));
    expect(out.error).toBeUndefined();
    for (const [v, entry] of targets) {
      expectRefused(out[v], entry, base);
      let now: string | undefined;
      try {
        now = readFileSync(host(v), "utf8");
      } catch {
        now = undefined;
      }
      expect(now, v).toBe(before.get(v));
    }
    // The agent's own work still goes through.
    expect(out[project]).toBe("written");
    expect(readFileSync(host(project), "utf8")).toBe(HACK);
  });

  it.each([
    ["npm", "package.json workspaces", {}],
    [
      "pnpm",
      "pnpm-workspace.yaml",
      {
        "package.json": '{"name":"mono","private":true}',
        "pnpm-workspace.yaml": "packages:\n  - 'packages/*' # the apps\n",
      },
    ],
  ])(
    "a workspace's package folder (%s: %s): no package planted; one package mounted is writable but for its manifests",
    (_client, _how, extra) => {
      const dir = join(base, `members-${_client}`);
      const app = layOut("workspace", dir, modules);
      const mono = join(dir, "mono");
      writeFiles(mono, extra);
      writeFiles(app, {
        "workers/tamper.js": TAMPER_WORKER,
        "host.mjs": `
import { createHost } from "mountbox";
const [sandbox, paths] = process.argv.slice(2);
try {
  const host = await createHost({ sandbox: JSON.parse(sandbox), basePath: import.meta.dirname,
    workers: { t: { module: "./workers/tamper.js" } } });
  console.log(JSON.stringify(await host.run("t", JSON.parse(paths))));
  await host.close();
} catch (e) {
  console.log(JSON.stringify({ error: e.code + ": " + e.message }));
}
`,
      });
      const run = (sandbox: object, paths: string[]) =>
        parse(
          runNode(join(app, "host.mjs"), app, [JSON.stringify(sandbox), JSON.stringify(paths)]),
        );
      const out = run({ root: mono, mounts: [`${join(mono, "packages/app")}:/work`] }, [
        "/packages/zod/package.json",
        "/packages/zod/index.js",
        "/work/package.json",
        "/work/binding.gyp",
        "/work/notes.txt",
      ]);
      expectRefused(out["/packages/zod/package.json"], "/packages", base);
      expectRefused(out["/packages/zod/index.js"], "/packages", base);
      expectRefused(out["/work/package.json"], "/work/package.json", base);
      expectRefused(out["/work/binding.gyp"], "/work/binding.gyp", base);
      expect(out["/work/notes.txt"]).toBe("written");
      // The folder itself as a writable mount cannot be held: refused at setup.
      const folder = run({ root: join(mono, "packages") }, []);
      expect(folder.error).toMatch(/^invalid_config: .*lies inside a workspace's packages/s);
    },
  );
});

// ---------------------------------------------------------------------------
// Hosts outside the repository that import the built library by file URL:
// their entry script's folder (the app) is on their resolution chain.

/** Lays out an app folder: a node_modules the host resolves from, manifests, a project. */
function makeApp(name: string, files: Record<string, string>): string {
  const app = join(base, name);
  writeFiles(app, {
    "package.json": '{"name":"app","private":true,"type":"module"}',
    "package-lock.json": "{}",
    "node_modules/piscina/package.json": '{"name":"piscina","version":"5.0.0"}',
    "node_modules/piscina/dist/worker.js": PISCINA,
    "projects/site/readme.md": "the agent's own project\n",
    ...files,
  });
  return app;
}

const LINK_HOST = `
import { createSandbox } from ${JSON.stringify(DIST)};
const sb = createSandbox({ root: "ws" }, { basePath: process.cwd() });
const attempt = (p) => p.then(() => "written", (e) => e.code + ": " + e.message);
console.log(JSON.stringify({
  moveAway: await attempt(sb.move("/app", "/old")),
  removeLink: await attempt(sb.remove("/app")),
  moveOver: await attempt(sb.move("/evl", "/app", { overwrite: true })),
  ordinary: await attempt(sb.move("/notes/readme.md", "/notes/moved.md")),
}));
`;

const IN_PROCESS_HOST = `
import { createSandbox } from ${JSON.stringify(DIST)};
const app = import.meta.dirname;
const attempt = (p) => p.then(() => "written", (e) => e.code + ": " + e.message);
const tryCreate = (config) => {
  try { createSandbox(config, { basePath: app }); return "created"; }
  catch (e) { return e.code + ": " + e.message; }
};
const hack = ${JSON.stringify(HACK)};
// A CommonJS module of the app in a subfolder: require("x") there looks
// in lib/node_modules first, so that folder is host code too.
(await import("node:module")).createRequire(import.meta.url)("./lib/helper.cjs");
const sb = createSandbox({ root: app, ...${ONLY_HOST_CODE} });
const child = sb.derive({ allowWrite: "/" });
const out = {
  besideLoaded: await attempt(sb.writeFile("/lib/node_modules/yaml/index.js", hack)),
  loadedScope: await attempt(sb.writeFile("/lib/package.json", '{"type":"module"}')),
  loaded: await attempt(sb.writeFile("/lib/helper.cjs", hack)),
  runnerFiles: await Promise.all(
    ["/.yarnrc", "/bunfig.toml", "/.env", "/tsconfig.json", "/.pnpmfile.mjs"].map((p) =>
      attempt(sb.writeFile(p, "x")),
    ),
  ),
  worker: await attempt(sb.writeFile("/node_modules/piscina/dist/worker.js", hack)),
  newPackage: await attempt(sb.writeFile("/node_modules/evil/index.js", hack)),
  manifest: await attempt(sb.writeFile("/package.json", hack)),
  lockfile: await attempt(sb.writeFile("/package-lock.json", hack)),
  npmrc: await attempt(sb.writeFile("/.npmrc", "ignore-scripts=false\\n")),
  entry: await attempt(sb.writeFile("/host.mjs", hack)),
  edit: await attempt(sb.editFile("/package.json", [{ oldText: "app", newText: "evil" }])),
  remove: await attempt(sb.remove("/node_modules/piscina", { recursive: true })),
  moveAway: await attempt(sb.move("/node_modules", "/old_modules")),
  moveOver: await attempt(sb.move("/projects/site/readme.md", "/package.json", { overwrite: true })),
  childWorker: await attempt(child.writeFile("/node_modules/piscina/dist/worker.js", hack)),
  childManifest: await attempt(child.writeFile("/package.json", hack)),
  restricted: await attempt((async () => sb.restrict({ restrict: "/node_modules" }).writeFile("/node_modules/piscina/dist/worker.js", hack))()),
  project: await attempt(sb.writeFile("/notes.txt", "fine")),
  childProject: await attempt(child.writeFile("/projects/site/notes.txt", "fine")),
  agentInstall: await attempt(sb.writeFile("/projects/site/node_modules/left-pad/index.js", "x")),
  agentManifest: await attempt(sb.writeFile("/projects/site/package.json", "{}")),
  canWrite: [sb.canWrite("/node_modules"), sb.canWrite("/package.json"), sb.canWrite("/projects/site/package.json")],
  writableRoots: sb.writableRoots,
  insideNodeModules: tryCreate({ root: ".", mounts: [{ source: "node_modules/piscina", target: "/deps" }] }),
  insideShort: tryCreate({ root: "projects", mounts: ["node_modules:/nm"] }),
  insideRoot: tryCreate({ root: "node_modules/piscina" }),
  insideNamed: tryCreate({ paths: { deps: { root: "node_modules", mode: "rw" } } }),
  readOnlyInside: tryCreate({ root: ".", mounts: ["node_modules/piscina:/deps:ro"] }),
  readOnlyRoot: tryCreate({ root: "node_modules/piscina", readonly: true }),
};
// Property-ish: random paths below every protected entry are never writable,
// random paths beside them are.
let seed = 18;
const rand = (n) => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed % n; };
const words = ["a", "dist", "x.js", "node_modules", ".bin", "package.json", "lib", "Z", "index.js"];
const tail = () => Array.from({ length: 1 + rand(4) }, () => words[rand(words.length)]).join("/");
const entries = ["/node_modules", "/package.json", "/package-lock.json", "/yarn.lock", "/.npmrc", "/host.mjs", "/.yarn", "/.pnp.cjs"];
const bad = [];
for (let i = 0; i < 300; i++) {
  const p = entries[rand(entries.length)] + (rand(5) === 0 ? "" : "/" + tail());
  if (sb.canWrite(p) || child.canWrite(p)) bad.push(p);
}
out.writableUnderProtected = bad;
console.log(JSON.stringify(out));
`;

describe("in-process: createSandbox over the host's own app folder", () => {
  let app: string;
  let out: Record<string, unknown>;
  beforeAll(() => {
    app = makeApp("inproc", {
      "host.mjs": IN_PROCESS_HOST,
      "lib/helper.cjs": "module.exports = () => 'helper';\n",
    });
    out = parse(runNode(join(app, "host.mjs"), app));
  });

  it("refuses writes, edits, removes and moves of the host's node_modules, manifests and entry", () => {
    expectRefused(out.worker, "/node_modules", app);
    expectRefused(out.newPackage, "/node_modules", app);
    expectRefused(out.manifest, "/package.json", app);
    expectRefused(out.lockfile, "/package-lock.json", app);
    expectRefused(out.npmrc, "/.npmrc", app);
    expectRefused(out.entry, "/host.mjs", app);
    expectRefused(out.edit, "/package.json", app);
    expectRefused(out.remove, "/node_modules", app);
    expect(out.moveAway).toMatch(/^path_not_writable: .*'\/node_modules'/);
    expectRefused(out.moveOver, "/package.json", app);
    expect(readFileSync(join(app, "node_modules/piscina/dist/worker.js"), "utf8")).toBe(PISCINA);
    expect(readFileSync(join(app, "package.json"), "utf8")).toContain('"name":"app"');
    expect(readFileSync(join(app, "package-lock.json"), "utf8")).toBe("{}");
  });

  it("a loaded CommonJS module's folder: its node_modules and package files are held too", () => {
    expectRefused(out.besideLoaded, "/lib/node_modules", app);
    expectRefused(out.loadedScope, "/lib/package.json", app);
    expectRefused(out.loaded, "/lib/helper.cjs", app);
  });

  it("runner and installer files (.yarnrc, bunfig.toml, .env, tsconfig.json, pnpm's .pnpmfile.mjs) are held", () => {
    const runner = out.runnerFiles as unknown[];
    const entries = ["/.yarnrc", "/bunfig.toml", "/.env", "/tsconfig.json", "/.pnpmfile.mjs"];
    for (const [i, entry] of entries.entries()) expectRefused(runner[i], entry, app);
  });

  it("a derived or restricted child inherits the protection", () => {
    expectRefused(out.childWorker, "/node_modules", app);
    expectRefused(out.childManifest, "/package.json", app);
    expect(out.restricted).toMatch(/^path_not_writable: /);
    expect(out.writableUnderProtected).toEqual([]);
  });

  it("the agent's own project, its node_modules and manifest included, stays writable", () => {
    expect(out.project).toBe("written");
    expect(out.childProject).toBe("written");
    expect(out.agentInstall).toBe("written");
    expect(out.agentManifest).toBe("written");
    expect(out.canWrite).toEqual([false, false, true]);
    expect(out.writableRoots).toEqual(["/"]);
  });

  it("a writable mount inside the host's node_modules is a ConfigError naming the mount", () => {
    for (const [key, target] of [
      ["insideNodeModules", "/deps"],
      ["insideShort", "/nm"],
      ["insideRoot", "/"],
      ["insideNamed", "/deps"],
    ] as const) {
      const msg = out[key] as string;
      expect(msg, key).toMatch(/^invalid_config: /);
      expect(msg, key).toContain(`'${target}'`);
      expect(msg, key).toContain("the host's node_modules");
      // A setup error, thrown to the host's own code: it names the folders
      // (issue 20), the host's node_modules among them.
      expect(msg, key).toContain(`('${join(app, "node_modules")}')`);
    }
    // Read-only, the same folders are fine.
    expect(out.readOnlyInside).toBe("created");
    expect(out.readOnlyRoot).toBe("created");
  });
});

// ---------------------------------------------------------------------------
// (b) LLM text: the model asks `write_file` on piscina's pool-thread file.

const LLM_HOST = `
import { MockLanguageModelV3 } from ${JSON.stringify(AI_TEST)};
import { createHost } from ${JSON.stringify(DIST)};
const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 1, text: 1, reasoning: undefined },
};
const turn = (content, unified) => ({ content, finishReason: { unified, raw: undefined }, usage, warnings: [] });
const call = (id, toolName, input) =>
  turn([{ type: "tool-call", toolCallId: id, toolName, input: JSON.stringify(input) }], "tool-calls");
const results = (prompt) =>
  prompt.filter((m) => m.role === "tool").flatMap((m) => m.content.map((p) => JSON.stringify(p.output)));
const steps = [
  call("w1", "write_file", { path: "/node_modules/piscina/dist/worker.js", content: ${JSON.stringify(HACK)} }),
  call("w2", "write_file", { path: "/package.json", content: "{}" }),
  call("w3", "edit_file", { path: "/package-lock.json", edits: [{ oldText: "{}", newText: "[]" }] }),
  call("g1", "grep", { pattern: "real", path: "/node_modules/piscina" }),
  call("w4", "write_file", { path: "/notes.txt", content: "fine" }),
];
const model = new MockLanguageModelV3({
  doGenerate: async ({ prompt }) => {
    const seen = results(prompt);
    if (seen.length < steps.length) return steps[seen.length];
    return turn([{ type: "text", text: JSON.stringify(seen) }], "stop");
  },
});
const host = await createHost({
  sandbox: { root: ".", ...${ONLY_HOST_CODE} },
  basePath: import.meta.dirname,
  workers: { llm: { instructions: "You are the installer.", model: "m" } },
  models: { m: model },
});
try {
  console.log(await host.run("llm", "Patch the pool."));
} finally {
  await host.close();
}
`;

describe("a link on the way to the host's code cannot be moved or replaced", () => {
  // The host is started as `node ws/app/host.mjs`, where ws/app is a link to
  // the real app folder outside the sandbox (a deploy-style `current` link):
  // moving the link away and another into its place would make the host's
  // next start run what the new link leads to.
  it("move and remove of the link, and a link moved into its place, are refused", () => {
    const dir = join(base, "linked");
    writeFiles(dir, {
      "realapp/host.mjs": LINK_HOST,
      "evil/host.mjs": HACK,
      "ws/notes/readme.md": "the agent's own notes\n",
    });
    symlinkSync("../realapp", join(dir, "ws/app"));
    symlinkSync("../evil", join(dir, "ws/evl"));
    const out = parse(runNode("ws/app/host.mjs", dir));
    expect(out.moveAway).toMatch(
      /^path_not_writable: Cannot write to '\/app': it holds '\/app\/[^']+' \(the host's /,
    );
    expect(out.removeLink).toMatch(/^path_not_writable: .*it holds '\/app\//);
    expect(out.moveOver).toMatch(/^path_not_writable: Cannot write to '\/app': it holds/);
    expect(out.ordinary).toBe("written");
    expect(readlinkSync(join(dir, "ws/app"))).toBe("../realapp");
    expect(out.moveAway).not.toContain(dir);
  });
});

describe("LLM text cannot write the host's dependencies", () => {
  it("an LLM worker's write_file and edit_file on them are refused; files unchanged", () => {
    const app = makeApp("llm", { "host.mjs": LLM_HOST });
    const run = runNode(join(app, "host.mjs"), app);
    const seen = parse(run) as unknown as string[];
    expect(seen, run.stderr).toHaveLength(5);
    expect(seen[0]).toContain("path_not_writable");
    expect(seen[0]).toContain("'/node_modules'");
    expect(seen[1]).toContain("'/package.json'");
    expect(seen[2]).toContain("'/package-lock.json'");
    expect(seen.join("\n")).not.toContain(app);
    expect(readFileSync(join(app, "node_modules/piscina/dist/worker.js"), "utf8")).toBe(PISCINA);
    expect(readFileSync(join(app, "package.json"), "utf8")).toContain('"name":"app"');
    expect(readFileSync(join(app, "package-lock.json"), "utf8")).toBe("{}");
    expect(readFileSync(join(app, "notes.txt"), "utf8")).toBe("fine");
  });
});

// ---------------------------------------------------------------------------
// (e) A shell command under the same sandbox.

const SHELL_HOST = `
import { createSandbox, runCommand } from ${JSON.stringify(DIST)};
const [root, command] = process.argv.slice(2);
const r = await runCommand(createSandbox({ root, ...${ONLY_HOST_CODE} }), command);
console.log(JSON.stringify({ exitCode: r.exitCode }));
`;

describeWithBwrap("a shell command cannot write the host's dependencies", () => {
  it("with the root on the app folder: node_modules, package.json and the lockfile stay as they are", () => {
    const app = makeApp("shell", { "host.mjs": SHELL_HOST });
    const command = [
      "echo hacked > node_modules/piscina/dist/worker.js",
      "echo hacked > package.json",
      "echo hacked > package-lock.json",
      "rm -rf node_modules/piscina",
      "mv node_modules old_modules",
      "echo fine > notes.txt",
      "true",
    ].join("; ");
    const out = parse(runNode(join(app, "host.mjs"), app, [app, command]));
    expect(out.exitCode).toBe(0);
    expect(readFileSync(join(app, "node_modules/piscina/dist/worker.js"), "utf8")).toBe(PISCINA);
    expect(readFileSync(join(app, "package.json"), "utf8")).toContain('"name":"app"');
    expect(readFileSync(join(app, "package-lock.json"), "utf8")).toBe("{}");
    expect(readFileSync(join(app, "notes.txt"), "utf8")).toBe("fine\n");
  });

  // Needs the shell to hold protected absolute paths below the top of a
  // writable bind, and absent ones (issue 19, finding 2).
  it("with the root above the app: the app's node_modules, manifest and lockfile stay as they are", () => {
    const app = makeApp("shell-deep/app", { "host.mjs": SHELL_HOST });
    const command = [
      "echo hacked > app/node_modules/piscina/dist/worker.js",
      "echo hacked > app/package.json",
      "echo planted > app/yarn.lock",
      "echo fine > app/notes.txt",
      "true",
    ].join("; ");
    const out = parse(runNode(join(app, "host.mjs"), app, [join(base, "shell-deep"), command]));
    expect(out.exitCode).toBe(0);
    expect(readFileSync(join(app, "node_modules/piscina/dist/worker.js"), "utf8")).toBe(PISCINA);
    expect(readFileSync(join(app, "package.json"), "utf8")).toContain('"name":"app"');
    expect(() => readFileSync(join(app, "yarn.lock"))).toThrow();
    expect(readFileSync(join(app, "notes.txt"), "utf8")).toBe("fine\n");
  });

  // Needs the shell to hold absent protected absolute paths (issue 19, finding 2).
  it("with the root on the app folder: no lockfile or .npmrc can be planted", () => {
    const app = makeApp("shell-absent", { "host.mjs": SHELL_HOST });
    const command = [
      "echo planted > yarn.lock",
      "echo ignore-scripts=false > .npmrc",
      "echo fine > notes.txt",
      "true",
    ].join("; ");
    const out = parse(runNode(join(app, "host.mjs"), app, [app, command]));
    expect(out.exitCode).toBe(0);
    expect(() => readFileSync(join(app, "yarn.lock"))).toThrow();
    expect(() => readFileSync(join(app, ".npmrc"))).toThrow();
    expect(readFileSync(join(app, "notes.txt"), "utf8")).toBe("fine\n");
  });
});
