/**
 * A worker module that can never load, found when the host is created: on
 * a Node without in-thread module hooks (20, 22 before 22.15), an ES module
 * named `.js` in a package that says `"type": "commonjs"` (what `npm init
 * -y` writes) fails in every thread. Where Node has the hooks, the thread
 * loads it as an ES module (`workers/esm-hook.ts`), and nothing is refused.
 */
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import {
  canLoadModulesAsEsm,
  describeModuleLoadedAsCommonJs,
  usesModuleSyntax,
} from "../../workers/module-format.js";

/**
 * The message of a worker module at the real path `path` that this Node
 * would load as CommonJS although it is written as an ES module, naming
 * the package.json that makes it CommonJS; undefined if it will load.
 */
export function checkModuleType(path: string): string | undefined {
  if (canLoadModulesAsEsm() || !/\.[jt]s$/.test(path)) return undefined;
  const pkg = findPackageScope(path);
  // No "type" (or none found): Node ≥ 20.19 detects module syntax itself.
  if (pkg?.type !== "commonjs") return undefined;
  let source: string;
  try {
    source = readFileSync(path, "utf8");
  } catch {
    return undefined; // the thread reports what it cannot read
  }
  if (!usesModuleSyntax(source, path.endsWith(".ts"))) return undefined;
  return describeModuleLoadedAsCommonJs(path, pkg.path);
}

/**
 * The package.json Node reads for a file's module type: the nearest one
 * above it, as Node looks (up to a `node_modules` folder's own boundary).
 */
function findPackageScope(file: string): { path: string; type: unknown } | undefined {
  for (let dir = dirname(file); ; dir = dirname(dir)) {
    const path = join(dir, "package.json");
    if (existsSync(path)) {
      try {
        return { path, type: (JSON.parse(readFileSync(path, "utf8")) as { type?: unknown }).type };
      } catch {
        return undefined; // Node reports an invalid package.json itself
      }
    }
    if (dir.endsWith("/node_modules") || dirname(dir) === dir) return undefined;
  }
}
