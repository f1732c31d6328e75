/**
 * Build step after `tsc`: the two entries an agent starts from
 * (`dist/workers/entry.js` for a thread, `dist/workers/process-entry.js`
 * for a process) become one file each, holding the thread-side code they
 * import — the lockdown, the module-format hook, the runner, the sandbox
 * and model clients, the wire protocol — and the error family
 * (`dist/src/errors/index.js`) becomes one file too.
 *
 * Why: every agent thread loads this code afresh, and on Node 20 each ES
 * module costs a thread ≈ 0.05–0.3 MiB and ≈ 0.5 ms however small it is. As
 * 17 modules it cost ≈ 5 ms more per thread and ≈ 0.56 MiB more per idle
 * thread than as three (bench/RESULTS.md, issue 25). Nothing else changes:
 * the code is tsc's own output, in the same evaluation order (the hook,
 * then the lockdown, before any worker code), and the files it came from
 * stay in `dist/` (a thread's read grants and the import-graph test cover
 * them).
 *
 * `mountbox/worker` (`workers/index.js`) and the error family stay outside
 * the entries: a worker module imports them itself, and `instanceof
 * SandboxError` must see the very classes the sandbox client throws. Every
 * importer of the error family goes through its `index.js`, so the bundled
 * one is the only copy of the classes, host side too.
 */
import { rmSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { build } from "rolldown";

const dist = fileURLToPath(new URL("../dist/", import.meta.url));
const SHARED = [/^node:/, /^\.\/index\.js$/, /^\.\.\/src\/errors\/index\.js$/];

for (const name of ["workers/entry.js", "workers/process-entry.js", "src/errors/index.js"]) {
  const file = `${dist}${name}`;
  await build({
    input: file,
    // The error family imports only Node's modules and its own files.
    external: name.startsWith("src/errors/") ? [/^node:/] : SHARED,
    platform: "node",
    logLevel: "warn",
    output: { file, format: "esm", comments: { legal: false, annotation: false, jsdoc: false } },
    write: true,
  });
  // tsc's map describes the file before bundling.
  rmSync(`${file}.map`, { force: true });
}
