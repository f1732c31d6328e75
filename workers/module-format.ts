/**
 * ES modules in CommonJS apps: `npm init -y` writes `"type": "commonjs"`,
 * so Node loads a worker module named `.js` (or `.ts`) written with
 * `import`/`export` as CommonJS, and fails with a message that says nothing
 * useful (`Cannot require() ES Module … in a cycle`). These helpers tell such
 * a file apart (as Node's own module-syntax detection does: it fails to
 * compile as CommonJS for a reason only ES module syntax gives) and say what
 * to do. Used by the thread (`esm-hook.ts`, `entry.ts`) and by `createHost`.
 */
import { createRequire } from "node:module";
import { compileFunction } from "node:vm";

const require = createRequire(import.meta.url);

/** What `node:module` has on the Nodes that have it (not in Node 20's types). */
interface ModuleHooksApi {
  registerHooks?: unknown;
  stripTypeScriptTypes?: (code: string, options?: { mode?: "strip" }) => string;
}
const moduleApi = require("node:module") as ModuleHooksApi;
/** Taken now: the thread's lockdown replaces `node:module`'s hook functions later. */
const stripTypes = moduleApi.stripTypeScriptTypes;

/**
 * Syntax errors of a CommonJS compile that only ES module syntax causes
 * (V8's texts, the ones Node's own detection looks for); top-level `await`
 * too, which CommonJS can never run.
 */
const MODULE_ONLY_SYNTAX = [
  "Cannot use import statement outside a module",
  "Unexpected token 'export'",
  "Cannot use 'import.meta' outside a module",
  "await is only valid in async functions and the top level bodies of modules",
];

/** The parameters of Node's CommonJS wrapper: a file declaring one of them is still CommonJS. */
const COMMONJS_PARAMS = ["exports", "require", "module", "__filename", "__dirname"];

/**
 * True where this Node can load an ES module that its package calls
 * CommonJS as an ES module, in a thread under the permission model:
 * `module.registerHooks` (Node ≥ 22.15, 23.5) runs hooks in the thread
 * itself; `module.register` needs a hooks thread, which the permission
 * model refuses (no `--allow-worker`).
 */
export function canLoadModulesAsEsm(): boolean {
  return typeof moduleApi.registerHooks === "function";
}

/**
 * True if `source` is written as an ES module: it does not compile as
 * CommonJS, for a reason only module syntax gives. `typescript` strips its
 * types first (where this Node can; else false).
 */
export function usesModuleSyntax(source: string, typescript = false): boolean {
  try {
    let code = source;
    if (typescript) {
      if (!stripTypes) return false;
      code = stripTypes(source, { mode: "strip" });
    }
    compileFunction(code, COMMONJS_PARAMS);
    return false;
  } catch (err) {
    return err instanceof SyntaxError && MODULE_ONLY_SYNTAX.some((m) => err.message.includes(m));
  }
}

/**
 * The file an import failed on because Node loaded an ES module as
 * CommonJS — its path as Node names it (`fallback` where Node does not) —
 * or undefined for any other error. Only where this Node cannot load such
 * a file as an ES module: elsewhere the thread's hook already does, and a
 * cycle is a cycle.
 */
export function findModuleLoadedAsCommonJs(err: unknown, fallback: string): string | undefined {
  if (canLoadModulesAsEsm() || err === null || typeof err !== "object") return undefined;
  const { code, message, stack } = err as { code?: unknown; message?: unknown; stack?: unknown };
  if (code === "ERR_REQUIRE_CYCLE_MODULE" && typeof message === "string") {
    const file = /ES Module (\S+) in a cycle/.exec(message)?.[1];
    return file !== undefined && /\.[jt]s$/.test(file) ? file : undefined;
  }
  if (!(err instanceof SyntaxError) || !MODULE_ONLY_SYNTAX.some((m) => err.message.includes(m)))
    return undefined;
  // A CommonJS compile error's stack starts with "<file>:<line>".
  const at = typeof stack === "string" ? /^(?:file:\/\/)?(\/[^\n]*?):\d+\n/.exec(stack) : null;
  return at?.[1] ?? fallback;
}

/**
 * What to do about `file`, an ES module that Node loads as CommonJS: its
 * name only (a thread, and a model calling it, learns no host folder);
 * `packageJson`, the host path of the package.json that makes it CommonJS,
 * only in setup errors for the host's own code.
 */
export function describeModuleLoadedAsCommonJs(file: string, packageJson?: string): string {
  const name = file.slice(file.lastIndexOf("/") + 1);
  const renamed = name.replace(/\.(js|ts)$/, (_, ext: string) => `.m${ext}`);
  const rename = renamed === name ? "give it the .mjs extension" : `rename it to '${renamed}'`;
  const where =
    packageJson === undefined ? "its nearest package.json" : `its package.json (${packageJson})`;
  const later = canLoadModulesAsEsm()
    ? ""
    : ` (Node.js 22.15 and later run it as it is; this is ${process.version})`;
  return `'${name}' is an ES module (it uses import/export), but Node.js loads it as CommonJS: ${where} does not say "type": "module" (npm init writes "type": "commonjs"). To run it, ${rename}, or set "type": "module" in that package.json${later}.`;
}
