/**
 * The host's code locations (issue 18, findings 1–2): the real folders and
 * files Node resolves the host process's modules from, and the manifests
 * and lockfiles that decide what gets installed there. An agent that could
 * write one of them could change what the host — or a trusted thread it
 * starts later, such as a fresh pool thread loading piscina — runs.
 *
 * Found from the host's entry script (`process.argv[1]`) and mountbox's own
 * installed package (from this module's URL), never from the working folder
 * (the library takes explicit paths): each one's ancestors' `node_modules`
 * and package files (present or not: an absent one could be planted), the
 * packages the two declare, found the way Node finds them and followed
 * through links, pnpm stores and workspaces to everything they depend on,
 * Node's global folders (`NODE_PATH` and the like), the entry script and
 * every file in `require.cache`. Only what is on the host's resolution
 * chain: a `node_modules` elsewhere (an agent's own project) is not one.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { createRequire, Module } from "node:module";
import { dirname, isAbsolute, join, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { realpathLoose } from "./real-path.js";
import { isWithin } from "./virtual-path.js";
import { listWorkspaceFolders } from "./workspace-members.js";

/** One place holding host code, or deciding what code is installed. */
export interface CodeLocation {
  /** Host path (real where it exists; an absent one under its real parent). */
  readonly host: string;
  /** True for a folder: everything below it counts, and no writable mount may lie inside it. */
  readonly folder: boolean;
  /** What it is, for messages, never a host path: `the host's node_modules`, … */
  readonly what: string;
  /**
   * A folder a workspace takes packages from: a writable mount may lie
   * inside it (in one package, say), where each package's own files are
   * held instead; a mount of the folder itself is refused.
   */
  readonly members?: true;
}

/**
 * Files Node, a package manager or a runner reads at each level: manifests,
 * lockfiles, Yarn Plug'n'Play maps and caches, `binding.gyp` (an install
 * of the project runs node-gyp on it), installer settings (Yarn
 * classic's `.yarnrc` names the yarn to run, `bunfig.toml` a preload), the
 * environment file Node's `--env-file` and dotenv load (`NODE_OPTIONS`
 * there runs code), and `tsconfig.json` (its `paths` steer imports for
 * TypeScript runners).
 */
const PACKAGE_FILES = [
  "package.json",
  "package-lock.json",
  "npm-shrinkwrap.json",
  "pnpm-lock.yaml",
  "pnpm-workspace.yaml",
  "yarn.lock",
  ".yarnrc.yml",
  ".pnp.cjs",
  ".pnp.loader.mjs",
  ".pnp.data.json",
  ".npmrc",
  ".pnpmfile.cjs",
  ".pnpmfile.mjs",
  "binding.gyp",
  ".yarnrc",
  "bunfig.toml",
  ".env",
  "tsconfig.json",
];
/** Folders at each level that hold installed code. */
const CODE_FOLDERS = ["node_modules", ".yarn"];

/** What a pnpm store the host's packages are hard-linked from is called. */
export const PACKAGE_STORE = "the host's package store";

/** Most packages followed from the two manifests (a bound on the work per process). */
const MAX_PACKAGES = 20_000;

interface Found {
  key: string;
  /** Locations found so far: the static ones, then levels of loaded modules. */
  locations: CodeLocation[];
  /** Folders whose `node_modules` and package files are in `locations`. */
  levels: Set<string>;
}

let cached: Found | undefined;

/**
 * The host's code locations now. The part found on disk is computed once
 * per process (per entry script); `require.cache` is read each time, since
 * it grows as the host loads modules: each loaded module is held, and so are
 * the `node_modules` and package files of its folder and every folder above
 * (a module in `lib/` resolves `require("x")` from `lib/node_modules` first).
 */
export function findHostCode(): CodeLocation[] {
  const entry = process.argv[1];
  const key = entry ?? "";
  if (cached?.key !== key) cached = findStaticLocations(key, entry);
  const found = cached;
  const require = createRequire(import.meta.url);
  const loaded: CodeLocation[] = [];
  const folders = found.locations.filter((c) => c.folder).map((c) => c.host);
  // Node keys the cache by real file name already (unless --preserve-symlinks,
  // where the link's place is the one to hold).
  for (const file of Object.keys(require.cache)) {
    if (!isAbsolute(file)) continue;
    loaded.push({ host: file, folder: false, what: "a module the host has loaded" });
    const dir = dirname(file);
    // Inside a node_modules held whole already: nothing below it is writable.
    if (!folders.some((f) => isWithin(dir, f)))
      addLevels(found, ancestorsOf(dir), makeAdder(found.locations));
  }
  return [...found.locations, ...loaded];
}

/** A function that adds a location, and where a link leads, to `out`. */
function makeAdder(out: CodeLocation[]): (host: string, folder: boolean, what: string) => void {
  return (host, folder, what) => {
    out.push({ host, folder, what });
    // A link in the app (node_modules → elsewhere): the link's place and
    // where it leads both count.
    const r = real(host);
    if (r !== host) out.push({ host: r, folder, what });
  };
}

/** Adds the code folders and package files of each folder in `dirs` not done yet. */
function addLevels(
  found: Found,
  dirs: Iterable<string>,
  add: (host: string, folder: boolean, what: string) => void,
): void {
  for (const dir of dirs) {
    if (found.levels.has(dir)) continue;
    found.levels.add(dir);
    for (const name of CODE_FOLDERS) add(join(dir, name), true, `the host's ${name}`);
    // pnpm hard-links every installed file to its store: the store's copy
    // is the host's code too (see `src/os/host-code-links.ts`).
    const store = readStoreDir(join(dir, "node_modules"));
    if (store !== undefined) add(store, true, PACKAGE_STORE);
    for (const name of PACKAGE_FILES) add(join(dir, name), false, `the host's ${name}`);
    for (const folder of listWorkspaceFolders(dir)) addWorkspaceFolder(found, folder);
  }
}

/**
 * A workspace's package folder: held whole where a mount shows it, and the
 * package files of each package in it, for a writable mount inside one.
 */
function addWorkspaceFolder(found: Found, folder: string): void {
  const what = "a workspace's packages (an install runs their scripts and links them)";
  for (const host of new Set([folder, real(folder)]))
    found.locations.push({ host, folder: true, what, members: true });
  let names: string[];
  try {
    names = readdirSync(folder);
  } catch {
    return;
  }
  for (const name of names) {
    const pkg = join(folder, name);
    if (readManifest(pkg) === undefined) continue;
    for (const file of PACKAGE_FILES)
      found.locations.push({ host: join(real(pkg), file), folder: false, what });
  }
}

function findStaticLocations(key: string, entry: string | undefined): Found {
  const out: CodeLocation[] = [];
  const found: Found = { key, locations: out, levels: new Set() };
  const add = makeAdder(out);
  const starts: string[] = [];
  if (entry) {
    const given = resolve(entry);
    add(given, false, "the host's entry script");
    starts.push(dirname(given), dirname(real(given)));
  }
  const pkgRoot = findOwnPackageRoot();
  if (pkgRoot) {
    starts.push(pkgRoot);
    for (const part of ownPackageParts(pkgRoot))
      add(join(pkgRoot, part), true, "mountbox's installed package");
  }
  for (const s of starts) addLevels(found, ancestorsOf(s), add);
  const globals = (Module as unknown as { globalPaths?: unknown }).globalPaths;
  if (Array.isArray(globals)) {
    for (const g of globals)
      if (typeof g === "string" && isAbsolute(g)) add(g, true, "the host's node_modules");
  }
  // Most packages lie in a node_modules counted already: only the others
  // (linked in from elsewhere) are added.
  const folders = out.filter((c) => c.folder).map((c) => c.host);
  for (const dir of followPackages(starts)) {
    if (folders.some((f) => isWithin(dir, f))) continue;
    out.push({ host: dir, folder: true, what: "a package the host loads" });
    // Its imports are looked up from its own folder upwards (a workspace's
    // packages/node_modules before the root's): those levels are host code.
    addLevels(found, ancestorsOf(dir), add);
  }
  return found;
}

/** `dir` and every folder above it, nearest first. */
function ancestorsOf(dir: string): string[] {
  const out: string[] = [];
  for (let d = resolve(dir); ; d = dirname(d)) {
    out.push(d);
    if (dirname(d) === d) return out;
  }
}

/** mountbox's package folder: the nearest one above this module named `mountbox`. */
function findOwnPackageRoot(): string | undefined {
  let here: string;
  try {
    here = real(dirname(fileURLToPath(import.meta.url)));
  } catch {
    return undefined;
  }
  for (const dir of ancestorsOf(here)) {
    const manifest = readManifest(dir);
    if (manifest?.name === "mountbox") return dir;
  }
  return undefined;
}

/**
 * The parts of mountbox's package folder that hold its code: the top
 * folder this module runs from (`dist`, or `src` when run from source) and
 * the top entries its manifest ships (`files`). Not the whole folder: run
 * from a checkout, that is the repository, whose examples may be sandboxes.
 */
function ownPackageParts(pkgRoot: string): string[] {
  const parts = new Set<string>();
  const here = real(fileURLToPath(import.meta.url));
  const rest = here.slice(pkgRoot.length + 1).split(sep)[0];
  if (rest) parts.add(rest);
  const files = readManifest(pkgRoot)?.files;
  if (Array.isArray(files)) {
    for (const f of files) {
      if (typeof f !== "string" || f.startsWith("!")) continue;
      const top = f.replace(/^\.\//, "").split("/")[0];
      if (top && !top.includes("*") && top !== "." && top !== "..") parts.add(top);
    }
  }
  return [...parts];
}

/**
 * The real folders of every package the manifests nearest to `starts`
 * declare, and of everything those declare, found as Node finds them (the
 * nearest `node_modules/<name>` above the declaring package's real folder).
 */
function followPackages(starts: readonly string[]): string[] {
  const seen = new Set<string>();
  const queue: string[] = [];
  for (const s of starts) {
    const top = ancestorsOf(real(s)).find((d) => readManifest(d) !== undefined);
    if (top !== undefined && !seen.has(top)) {
      seen.add(top);
      queue.push(top);
    }
  }
  const found: string[] = [];
  while (queue.length > 0 && seen.size < MAX_PACKAGES) {
    const pkg = queue.shift()!;
    for (const name of declaredPackages(readManifest(pkg))) {
      const dir = locatePackage(pkg, name);
      if (dir === undefined || seen.has(dir)) continue;
      seen.add(dir);
      found.push(dir);
      queue.push(dir);
    }
  }
  return found;
}

function declaredPackages(manifest: Manifest | undefined): string[] {
  if (!manifest) return [];
  const names = new Set<string>();
  for (const field of [
    manifest.dependencies,
    manifest.optionalDependencies,
    manifest.peerDependencies,
  ]) {
    if (field && typeof field === "object") for (const n of Object.keys(field)) names.add(n);
  }
  // A name that could climb out of node_modules is no package.
  return [...names].filter((n) => /^(@[\w.~-]+\/)?[\w.~-]+$/.test(n) && !n.startsWith("."));
}

function locatePackage(from: string, name: string): string | undefined {
  for (const dir of ancestorsOf(from)) {
    const candidate = join(dir, "node_modules", name);
    try {
      if (statSync(candidate, { throwIfNoEntry: false })?.isDirectory()) return real(candidate);
    } catch {
      // unreadable: keep looking above, as Node does
    }
  }
  return undefined;
}

interface Manifest {
  name?: unknown;
  files?: unknown;
  dependencies?: unknown;
  optionalDependencies?: unknown;
  peerDependencies?: unknown;
}

function readManifest(dir: string): Manifest | undefined {
  try {
    const parsed: unknown = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
    return parsed && typeof parsed === "object" ? (parsed as Manifest) : undefined;
  } catch {
    return undefined;
  }
}

/** The pnpm store a `node_modules` was installed from (`.modules.yaml`'s `storeDir`). */
function readStoreDir(nm: string): string | undefined {
  let text: string;
  try {
    text = readFileSync(join(nm, ".modules.yaml"), "utf8");
  } catch {
    return undefined;
  }
  const dir = /^storeDir:\s*['"]?([^'"\n]+?)['"]?\s*$/m.exec(text)?.[1];
  return dir !== undefined && isAbsolute(dir) ? dir : undefined;
}

function real(p: string): string {
  try {
    return realpathLoose(p);
  } catch {
    return p;
  }
}
