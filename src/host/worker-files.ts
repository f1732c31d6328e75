/**
 * The files a worker spec names, checked at \`createHost\`: its \`module\`
 * (exists, loadable by this Node, of the module type its package says) and
 * its \`dependencies\` (package names, or files and folders that exist).
 * Issues name host paths: they go to the host's own developer.
 */
import { existsSync, realpathSync } from "node:fs";
import { isAbsolute, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { type ConfigIssue, escapeControl } from "../errors/index.js";
import { isPathLike } from "../threads/module-grants.js";
import { checkModuleType } from "./module-type.js";

/** TypeScript modules run where Node strips types (22.18+, 23.6+). */
const TS_MODULE = /\.(ts|mts|cts)$/;

/** A worker's `module`: its real path, or undefined with an issue pushed. */
export function checkModule(
  module: unknown,
  basePath: string,
  at: (string | number)[],
  issues: ConfigIssue[],
): string | undefined {
  if (typeof module !== "string") {
    issues.push({ path: at, message: "expected a path" });
    return undefined;
  }
  const p = module.startsWith("file:")
    ? fileURLToPath(module)
    : isAbsolute(module)
      ? module
      : resolve(basePath, module);
  if (!existsSync(p)) {
    issues.push({ path: at, message: `no module at ${describeHostPath(module, p, basePath)}` });
    return undefined;
  }
  if (TS_MODULE.test(p) && !canStripTypes()) {
    issues.push({
      path: at,
      message: `'${module}' is TypeScript, which this Node.js (${process.version}) cannot load; build it to .js (tsc), or use Node 22.18+ where Node strips types`,
    });
    return undefined;
  }
  const real = realpathSync(p);
  const wrongType = checkModuleType(real);
  if (wrongType !== undefined) {
    issues.push({ path: at, message: wrongType });
    return undefined;
  }
  return real;
}

/** True where Node runs `.ts` files by stripping their types. */
export function canStripTypes(): boolean {
  const ts = (process.features as { typescript?: unknown }).typescript;
  return ts === "strip" || ts === "transform";
}

/** A worker's `dependencies`: package names kept, paths made real; undefined with an issue when malformed. */
export function checkDependencies(
  deps: unknown,
  basePath: string,
  at: (string | number)[],
  issues: ConfigIssue[],
): string[] | undefined {
  if (!Array.isArray(deps) || !deps.every((d) => typeof d === "string" && d !== "")) {
    issues.push({ path: at, message: "expected a list of package names or file/folder paths" });
    return undefined;
  }
  const out: string[] = [];
  deps.forEach((d: string, i) => {
    if (!isPathLike(d)) {
      out.push(d);
      return;
    }
    const p = d.startsWith("file:") ? fileURLToPath(d) : resolve(basePath, d);
    if (!existsSync(p))
      issues.push({
        path: [...at, i],
        message: `no file or folder at ${describeHostPath(d, p, basePath)}`,
      });
    else out.push(realpathSync(p));
  });
  return out;
}

/**
 * A host path for a setup error (thrown to the host's own code, whose
 * developer needs it): where it was looked for and, for a relative path,
 * what it was resolved against.
 */
function describeHostPath(written: string, resolved: string, basePath: string): string {
  const at = `'${escapeControl(resolved)}'`;
  return written.startsWith("file:") || isAbsolute(written)
    ? at
    : `${at} ('${escapeControl(written)}' resolved against basePath '${escapeControl(basePath)}')`;
}
