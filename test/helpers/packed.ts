/**
 * The package as users install it: `npm pack`, the tarball installed into
 * temp apps in the layouts users have — npm's (real folders), `npm link` /
 * an installed folder (a link to a package with its own node_modules), a
 * real pnpm install (every package a link into `.pnpm/<name>@<v>/node_modules`,
 * its dependencies links beside it) and an npm workspace (hoisted to the
 * monorepo's root). test/real-installs.test.ts installs with every real client. Hosts run as child processes of the Node running the
 * tests, from any working folder.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { cpSync, mkdirSync, readdirSync, symlinkSync, writeFileSync } from "node:fs";
import { basename, dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { pnpmAdd } from "./clients.js";
import { cachedInstall } from "./install-cache.js";

const REPO = fileURLToPath(new URL("../..", import.meta.url));
const NPM = process.platform === "win32" ? "npm.cmd" : "npm";

/** The four layouts. */
export const LAYOUTS = ["npm", "linked", "pnpm", "workspace"] as const;
export type Layout = (typeof LAYOUTS)[number];

/** A package of the test's own, with one dependency of its own (`shout`). */
const GREET = {
  "package.json": JSON.stringify({
    name: "greet",
    version: "1.0.0",
    type: "module",
    exports: "./index.js",
    dependencies: { shout: "1.0.0" },
  }),
  // biome-ignore lint/suspicious/noTemplateCurlyInString: the package's own source text
  "index.js": 'import { shout } from "shout";\nexport const greet = (n) => shout(`hello ${n}`);\n',
};
const SHOUT = {
  "package.json": JSON.stringify({
    name: "shout",
    version: "1.0.0",
    type: "module",
    exports: "./index.js",
  }),
  "index.js": "export const shout = (s) => s.toUpperCase();\n",
};

/**
 * Packs the repository (dist/ must be built) into `dir` and installs the
 * tarball npm-style (once per build: test/helpers/install-cache.ts);
 * returns the install's `node_modules`, the source of every layout (never
 * change it: layouts copy from it), and the tarball beside it.
 */
export function packAndInstall(dir: string): { tarball: string; modules: string } {
  const packed = packTarball(dir);
  const cached = cachedInstall(packed, "npm-install", (at) => {
    cpSync(packed, join(at, basename(packed)));
    const install = join(at, "npm-install");
    writeFiles(install, { "package.json": '{"name":"install","private":true}' });
    execFileSync(
      NPM,
      [
        "install",
        "--no-audit",
        "--no-fund",
        "--prefer-offline",
        "--ignore-scripts",
        join(at, basename(packed)),
      ],
      { cwd: install, stdio: "ignore" },
    );
  });
  return {
    tarball: join(cached, basename(packed)),
    modules: join(cached, "npm-install", "node_modules"),
  };
}

/** Packs the repository (dist/ must be built) into `dir`; returns the tarball's path. */
export function packTarball(dir: string): string {
  mkdirSync(dir, { recursive: true });
  const out = execFileSync(NPM, ["pack", "--ignore-scripts", "--json", "--pack-destination", dir], {
    cwd: REPO,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "ignore"],
  });
  return join(dir, (JSON.parse(out) as { filename: string }[])[0]!.filename);
}

/**
 * Lays out an app in `appDir` whose `node_modules` reaches mountbox (and
 * its dependencies) and `greet` (with `shout`) the way `layout` does.
 * Returns the folder to put the app's own files in.
 */
export function layOut(layout: Layout, base: string, modules: string): string {
  const app = layout === "workspace" ? join(base, "mono", "packages", "app") : join(base, "app");
  writeFiles(app, { "package.json": '{"name":"app","private":true,"type":"module"}' });
  const nm = join(app, "node_modules");
  const packages = readdirSync(modules).filter((n) => !n.startsWith("."));
  if (layout === "npm") {
    for (const p of packages) cpSync(join(modules, p), join(nm, p), { recursive: true });
    writeFiles(join(nm, "greet"), GREET);
    writeFiles(join(nm, "shout"), SHOUT);
  } else if (layout === "workspace") {
    const rootNm = join(base, "mono", "node_modules");
    writeFiles(join(base, "mono"), {
      "package.json": '{"name":"mono","private":true,"workspaces":["packages/*"]}',
    });
    for (const p of packages) cpSync(join(modules, p), join(rootNm, p), { recursive: true });
    writeFiles(join(rootNm, "greet"), GREET);
    writeFiles(join(rootNm, "shout"), SHOUT);
    link(app, join(rootNm, "app"));
  } else if (layout === "linked") {
    // `npm link` / `npm install ../folder`: the package folder lives
    // elsewhere, with its own node_modules.
    const pkg = join(base, "linked-src", "mountbox");
    cpSync(join(modules, "mountbox"), pkg, { recursive: true });
    for (const p of packages.filter((n) => n !== "mountbox"))
      cpSync(join(modules, p), join(pkg, "node_modules", p), { recursive: true });
    link(pkg, join(nm, "mountbox"));
    const greet = join(base, "linked-src", "greet");
    writeFiles(greet, GREET);
    writeFiles(join(greet, "node_modules", "shout"), SHOUT);
    link(greet, join(nm, "greet"));
  } else {
    // Real pnpm: its store, every package a link into .pnpm, dependencies
    // linked beside each; greet and shout come from folders.
    const src = join(base, "pnpm-src");
    writeFiles(join(src, "shout"), SHOUT);
    writeFiles(join(src, "greet"), {
      ...GREET,
      "package.json": JSON.stringify({
        ...JSON.parse(GREET["package.json"]),
        dependencies: { shout: "file:../shout" },
      }),
    });
    const pack = join(modules, "..", "..");
    const tarball = readdirSync(pack).find((n) => n.endsWith(".tgz"))!;
    pnpmAdd(app, join(base, "pnpm-store"), [join(pack, tarball), `file:${join(src, "greet")}`]);
  }
  return app;
}

/** Result of {@link runNode}. */
export interface NodeRun {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `script` with the Node running the tests, from `cwd`. */
export function runNode(script: string, cwd: string, args: string[] = []): NodeRun {
  const r = spawnSync(process.execPath, [script, ...args], {
    cwd,
    encoding: "utf8",
    timeout: 60_000,
    env: { ...process.env, NODE_OPTIONS: "" },
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** Writes `files` (name → text) under `dir`. */
export function writeFiles(dir: string, files: Record<string, string>): void {
  for (const [name, text] of Object.entries(files)) {
    const p = join(dir, name);
    mkdirSync(dirname(p), { recursive: true });
    writeFileSync(p, text);
  }
}

function link(target: string, at: string): void {
  mkdirSync(dirname(at), { recursive: true });
  symlinkSync(relative(dirname(at), target), at, "dir");
}
