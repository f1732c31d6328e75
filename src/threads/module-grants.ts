/**
 * What an agent thread may read: its module, the thread's own code, and the
 * packages the module imports — computed the way Node's resolver will look
 * for them, so a real install works in every layout (npm, `npm link`, a
 * pnpm store, workspaces).
 *
 * Facts this relies on (seen on Node 20.20, 22.23, 24.21, 26.10):
 * - A bare specifier is looked up in `node_modules` folders at their *link*
 *   paths, then realpath'd: the thread must be able to read the link and the
 *   package's `package.json` at the link path, and the files at the real path.
 * - A granted file is exact; a granted folder covers everything below it.
 * - Granting a folder and also a file inside it can make Node 20's grant tree
 *   refuse the folder itself, so grants inside a granted folder are dropped.
 */
import { existsSync, readFileSync, realpathSync, statSync } from "node:fs";
import { dirname, isAbsolute, join, sep } from "node:path";

/** A package as the resolver finds it. */
export interface PackageLocation {
  /** Its name (`zod`, `@ai-sdk/provider`). */
  name: string;
  /** The folder at the path the resolver asks for (may be a link). */
  path: string;
  /** The folder's real path. */
  real: string;
}

/** Most packages one worker's declared dependencies may pull in. */
const MAX_PACKAGES = 2000;

/** True for a dependency written as a path (`./lib`, `/abs`, `file:`) rather than a package name. */
export function isPathLike(dependency: string): boolean {
  return dependency.startsWith(".") || isAbsolute(dependency) || dependency.startsWith("file:");
}

/**
 * The package name of a bare specifier (`zod/v4` → `zod`,
 * `@scope/pkg/x` → `@scope/pkg`), or undefined if it is not one.
 */
export function toPackageName(specifier: string): string | undefined {
  if (specifier === "" || specifier.startsWith(".") || specifier.startsWith("/")) return undefined;
  if (specifier.includes("\\") || specifier.includes(":") || specifier.includes("\0"))
    return undefined;
  const parts = specifier.split("/");
  const name = specifier.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0];
  if (!name || (specifier.startsWith("@") && parts.length < 2)) return undefined;
  if (name.split("/").some((p) => p === "" || p === "." || p === "..")) return undefined;
  return name;
}

/**
 * Finds package `name` as Node's resolver would from a file in `fromDir`:
 * `fromDir/node_modules/name`, then each parent folder's.
 */
export function findPackage(name: string, fromDir: string): PackageLocation | undefined {
  let dir = fromDir;
  for (;;) {
    const candidate = join(dir, "node_modules", name);
    if (existsSync(join(candidate, "package.json")))
      return { name, path: candidate, real: realpathSync(candidate) };
    const up = dirname(dir);
    if (up === dir) return undefined;
    dir = up;
  }
}

/**
 * The nearest `package.json` above `fromDir` whose `name` is `name` and that
 * has `exports` — a package importing itself by name (self-reference), which
 * Node tries before `node_modules`.
 */
export function findSelfReference(name: string, fromDir: string): string | undefined {
  let dir = fromDir;
  for (;;) {
    const file = join(dir, "package.json");
    if (existsSync(file)) {
      const pkg = readPackageJson(file);
      return pkg?.name === name && pkg.exports !== undefined ? file : undefined;
    }
    const up = dirname(dir);
    if (up === dir) return undefined;
    dir = up;
  }
}

/**
 * Package `names` as found from `fromDir`, plus — recursively — the packages
 * they depend on (`dependencies`, `optionalDependencies`,
 * `peerDependencies`), each looked up from its importer's real folder as
 * Node does. A declared name the module's folder cannot see is looked up
 * from the folders of the packages found (a package's undeclared import,
 * which the thread's refusal tells the user to declare). A declared name
 * that cannot be found at all is reported in `missing`; a
 * dependency of a dependency that is not installed is skipped (optional and
 * peer dependencies often are not).
 */
export function collectPackages(
  names: readonly string[],
  fromDir: string,
): { found: PackageLocation[]; missing: string[] } {
  const found: PackageLocation[] = [];
  const missing: string[] = [];
  const seen = new Set<string>();
  const queue: { name: string; from: string; declared: boolean }[] = names.map((name) => ({
    name,
    from: fromDir,
    declared: true,
  }));
  const unfound: string[] = [];
  while (found.length < MAX_PACKAGES) {
    const next = queue.shift();
    if (!next) {
      // A declared package the module's folder cannot see may be one a
      // package imports without declaring it, found from that package's
      // folder (pnpm hoists every package into node_modules/.pnpm/
      // node_modules): the advice "add it to 'dependencies'" must work there.
      for (const name of unfound.splice(0)) {
        const from = found.find((p) => findPackage(name, p.real))?.real;
        if (from) queue.push({ name, from, declared: false });
        else missing.push(name);
      }
      if (queue.length === 0) break;
      continue;
    }
    const loc = findPackage(next.name, next.from);
    if (!loc) {
      if (next.declared) unfound.push(next.name);
      continue;
    }
    const key = `${loc.path}\0${loc.real}`;
    if (seen.has(key)) continue;
    seen.add(key);
    found.push(loc);
    const pkg = readPackageJson(join(loc.real, "package.json"));
    for (const field of ["dependencies", "optionalDependencies", "peerDependencies"] as const) {
      const deps = pkg?.[field];
      if (typeof deps !== "object" || deps === null) continue;
      for (const dep of Object.keys(deps))
        if (toPackageName(dep) === dep) queue.push({ name: dep, from: loc.real, declared: false });
    }
  }
  missing.push(...unfound);
  return { found, missing };
}

/**
 * Where Node looks when code in `dir` imports a package or reads its
 * package's settings (`"type"`, `"imports"`, a self-reference): the
 * `node_modules` folder and the `package.json` of `dir` and of every folder
 * above it, present or not. What an agent could plant at one of them would
 * be granted and loaded by the next thread of that worker.
 */
export function listLookupPlaces(dir: string): string[] {
  const out: string[] = [];
  for (let d = dir; ; d = dirname(d)) {
    out.push(join(d, "node_modules"), join(d, "package.json"));
    if (dirname(d) === d) return out;
  }
}

/**
 * Drops duplicates and every path inside another granted folder (see the
 * module note on Node 20's grant tree), keeping the order otherwise.
 */
export function compactGrants(paths: readonly string[]): string[] {
  const unique = [...new Set(paths)];
  const folders = unique.filter((p) => isFolder(p));
  return unique.filter((p) => !folders.some((f) => f !== p && isWithin(p, f)));
}

/** True if `path` is `dir` or lies below it (whole segments). */
export function isWithin(path: string, dir: string): boolean {
  return path === dir || path.startsWith(dir.endsWith(sep) ? dir : dir + sep);
}

function isFolder(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
}

interface PackageJson {
  name?: unknown;
  exports?: unknown;
  dependencies?: Record<string, unknown>;
  optionalDependencies?: Record<string, unknown>;
  peerDependencies?: Record<string, unknown>;
}

function readPackageJson(file: string): PackageJson | undefined {
  try {
    const v = JSON.parse(readFileSync(file, "utf8")) as unknown;
    return typeof v === "object" && v !== null ? (v as PackageJson) : undefined;
  } catch {
    return undefined;
  }
}
