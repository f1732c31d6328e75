/**
 * Real package clients installing the packed tarball the ways users do:
 * npm, pnpm (its default isolated store, and `node-linker=hoisted`), yarn 4
 * with `nodeLinker: node-modules`, a linked package folder (`npm link` /
 * `npm install ../folder`) and an npm workspace. pnpm and yarn come from
 * the npm registry (yarn 4 as `@yarnpkg/cli-dist`: corepack would download
 * it from elsewhere), installed once into `.cache/clients` (git-ignored)
 * and run with the Node running the tests.
 */
import { execFileSync } from "node:child_process";
import { cpSync, existsSync, lstatSync, mkdirSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { fileURLToPath } from "node:url";
import { cachedInstall } from "./install-cache.js";
import { writeFiles } from "./packed.js";

const REPO = fileURLToPath(new URL("../..", import.meta.url));
const CLIENTS_DIR = join(REPO, ".cache", "clients");
const NPM = process.platform === "win32" ? "npm.cmd" : "npm";
const PNPM = join(CLIENTS_DIR, "node_modules", "pnpm", "bin", "pnpm.mjs");
const YARN = join(CLIENTS_DIR, "node_modules", "@yarnpkg", "cli-dist", "bin", "yarn.js");

/** The ways an app gets mountbox. */
export const CLIENTS = [
  "npm",
  "pnpm",
  "pnpm-hoisted",
  "yarn",
  "npm-link",
  "npm-workspace",
] as const;
export type Client = (typeof CLIENTS)[number];

/** Installs pnpm 12 and yarn 4 into `.cache/clients` unless they are there. */
export function ensureClients(): void {
  if (existsSync(PNPM) && existsSync(YARN)) return;
  mkdirSync(CLIENTS_DIR, { recursive: true });
  writeFileSync(join(CLIENTS_DIR, "package.json"), '{"private":true}');
  execFileSync(
    NPM,
    ["install", "--no-audit", "--no-fund", "--no-save", "pnpm@12", "@yarnpkg/cli-dist@4"],
    { cwd: CLIENTS_DIR, stdio: "ignore", timeout: 180_000 },
  );
}

function run(tool: "npm" | "pnpm" | "yarn", args: string[], cwd: string): void {
  const [cmd, argv] =
    tool === "npm" ? [NPM, args] : [process.execPath, [tool === "pnpm" ? PNPM : YARN, ...args]];
  try {
    execFileSync(cmd, argv, {
      cwd,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "pipe"],
      timeout: 240_000,
      env: { ...process.env, NODE_OPTIONS: "", COREPACK_ENABLE_STRICT: "0", CI: "1" },
    });
  } catch (e) {
    const err = e as { stdout?: string; stderr?: string; message: string };
    throw new Error(
      `${tool} ${args.join(" ")} failed in ${cwd}: ${err.message}\n${err.stdout ?? ""}\n${err.stderr ?? ""}`,
    );
  }
}

const NPM_FLAGS = ["--no-audit", "--no-fund", "--prefer-offline"];

/**
 * An app whose own dependencies are the tarball and `specs` (e.g. `ai@6`,
 * `zod`), installed by `client` — once per build and reused by later runs
 * and other Node versions (test/helpers/install-cache.ts). Returns the app
 * folder (where its files go; its `package.json` is ESM). Tests add files
 * to it, never change what the client installed.
 */
export function installApp(client: Client, tarball: string, specs: string[]): string {
  const dir = cachedInstall(tarball, `${client}-${specs.join("+")}`, (at) => {
    const local = join(at, basename(tarball));
    cpSync(tarball, local);
    installAppIn(client, at, local, specs);
  });
  return appFolder(client, dir);
}

function appFolder(client: Client, base: string): string {
  return client === "npm-workspace" ? join(base, "mono", "packages", "app") : join(base, "app");
}

/** Installs the app under `base` (see {@link installApp}). */
function installAppIn(client: Client, base: string, tarball: string, specs: string[]): string {
  const app = appFolder(client, base);
  writeFiles(app, {
    "package.json": '{"name":"app","version":"1.0.0","private":true,"type":"module"}',
  });
  switch (client) {
    case "npm":
      run("npm", ["install", ...NPM_FLAGS, tarball, ...specs], app);
      break;
    case "pnpm":
    case "pnpm-hoisted":
      // pnpm ≥ 10 reads its settings from pnpm-workspace.yaml.
      if (client === "pnpm-hoisted")
        writeFiles(app, { "pnpm-workspace.yaml": "nodeLinker: hoisted\n" });
      run("pnpm", ["add", "--prefer-offline", tarball, ...specs], app);
      break;
    case "yarn":
      writeFiles(app, {
        ".yarnrc.yml":
          'nodeLinker: node-modules\nnpmRegistryServer: "https://registry.npmjs.org"\nenableTelemetry: false\nenableGlobalCache: true\n',
        "yarn.lock": "",
      });
      run("yarn", ["add", `mountbox@file:${tarball}`, ...specs], app);
      break;
    case "npm-link": {
      // A checkout elsewhere (`npm link` / `npm install ../folder`): the
      // package folder with its own dependencies, the peer `ai` installed
      // above it (as in a monorepo checkout), linked into the app.
      const src = join(base, "linked-src");
      const pkg = join(src, "mountbox");
      mkdirSync(pkg, { recursive: true });
      execFileSync("tar", ["-xzf", tarball, "-C", pkg, "--strip-components=1"]);
      writeFiles(src, { "package.json": '{"name":"checkout","private":true}' });
      run("npm", ["install", ...NPM_FLAGS, ...specs], src);
      run("npm", ["install", ...NPM_FLAGS, "--omit=dev"], pkg);
      run("npm", ["install", ...NPM_FLAGS, pkg, ...specs], app);
      break;
    }
    case "npm-workspace": {
      const mono = join(base, "mono");
      writeFiles(mono, {
        "package.json": '{"name":"mono","private":true,"workspaces":["packages/*"]}',
      });
      cpSync(tarball, join(mono, "mountbox.tgz"));
      run(
        "npm",
        ["install", ...NPM_FLAGS, "-w", "packages/app", join(mono, "mountbox.tgz"), ...specs],
        mono,
      );
      break;
    }
  }
  checkLayout(client, app);
  return app;
}

/** Fails if the client did not lay the app out as `client` means (a setting it ignored). */
function checkLayout(client: Client, app: string): void {
  const at = client === "npm-workspace" ? join(app, "..", "..") : app;
  const linked = lstatSync(join(at, "node_modules", "mountbox")).isSymbolicLink();
  const aiLinked = lstatSync(join(at, "node_modules", "ai")).isSymbolicLink();
  const want = { mountbox: client === "pnpm" || client === "npm-link", ai: client === "pnpm" };
  if (linked !== want.mountbox || aiLinked !== want.ai)
    throw new Error(
      `${client} laid out ${app} unexpectedly: mountbox linked ${linked}, ai linked ${aiLinked}`,
    );
}

/**
 * Installs `specs` into `dir` (an ESM app made here) with real pnpm from
 * the store `store`: pnpm hard-links every installed file to the store.
 */
export function pnpmAdd(dir: string, store: string, specs: string[]): void {
  ensureClients();
  writeFiles(dir, { "package.json": '{"name":"p","private":true,"type":"module"}' });
  run("pnpm", ["add", "--store-dir", store, "--prefer-offline", "--ignore-scripts", ...specs], dir);
}
