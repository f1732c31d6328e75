/**
 * Runs first in an agent thread, before its lockdown takes the hook
 * functions away: where Node has in-thread module hooks
 * (`module.registerHooks`, Node ≥ 22.15), a file outside `node_modules`
 * that Node would load as CommonJS but that is written as an ES module is
 * loaded as an ES module (TypeScript ones too). So the README's
 * `workers/main.js` runs in an app made with `npm init -y`
 * (`"type": "commonjs"`), and so do the helper files it imports. Files
 * that are CommonJS (`module.exports`, `require`) stay CommonJS, and
 * packages stay as their authors made them.
 *
 * Nothing is granted by this: Node loads (and the permission model checks)
 * each file before the hook looks at it. Where Node lacks the hooks, the
 * thread reports such a file with what to do (`entry.ts`), and `createHost`
 * refuses a worker module it can tell will fail.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { canLoadModulesAsEsm, usesModuleSyntax } from "./module-format.js";

const require = createRequire(import.meta.url);

/** What a load hook gets from, and gives to, Node. */
interface LoadResult {
  format?: string | null;
  source?: string | ArrayBuffer | ArrayBufferView | null;
  shortCircuit?: boolean;
}
type NextLoad = (url: string, context?: object) => LoadResult;

/** The ES module format of each CommonJS one. */
const AS_MODULE = new Map([
  ["commonjs", "module"],
  ["commonjs-typescript", "module-typescript"],
]);

/** A load hook: Node's result, with the format of an ES module Node calls CommonJS corrected. */
function loadModulesAsEsm(url: string, context: object, nextLoad: NextLoad): LoadResult {
  const loaded = nextLoad(url, context);
  const format = typeof loaded.format === "string" ? AS_MODULE.get(loaded.format) : undefined;
  if (format === undefined || !url.startsWith("file:") || url.includes("/node_modules/"))
    return loaded;
  // Node leaves a CommonJS file's source to its CommonJS loader (null here).
  const source = loaded.source ?? readFileSync(new URL(url));
  const text = typeof source === "string" ? source : Buffer.from(toBytes(source)).toString("utf8");
  if (!usesModuleSyntax(text, format === "module-typescript")) return loaded;
  return { ...loaded, format, source: text };
}

function toBytes(source: ArrayBuffer | ArrayBufferView): Uint8Array {
  return ArrayBuffer.isView(source)
    ? new Uint8Array(source.buffer, source.byteOffset, source.byteLength)
    : new Uint8Array(source);
}

if (canLoadModulesAsEsm()) {
  const { registerHooks } = require("node:module") as {
    registerHooks: (hooks: { load: typeof loadModulesAsEsm }) => unknown;
  };
  registerHooks({ load: loadModulesAsEsm });
}
