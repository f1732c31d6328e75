/**
 * Build step after `tsc`: the two entries an agent starts from
 * (`dist/workers/entry.js` for a thread, `dist/workers/process-entry.js`
 * for a process) become one file each, holding the thread-side code they
 * import — the lockdown, the module-format hook, the runner, the sandbox
 * and model clients, the wire protocol.
 *
 * Why: every agent thread loads this code afresh. As 17 ES modules it cost
 * ≈ 5 ms more per thread and ≈ 0.36 MiB more per idle thread than as one
 * (bench/RESULTS.md, issue 25). Nothing else changes: the code is tsc's own
 * output, in the same evaluation order (the hook, then the lockdown, before
 * any worker code), and the files it came from stay in `dist/workers/`
 * (a thread's read grants and the import-graph test cover them).
 *
 * `mountbox/worker` (`workers/index.js`) and the error classes stay outside:
 * a worker module imports them itself, and `instanceof SandboxError` must
 * see the very classes the sandbox client throws.
 */
import { rmSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { build } from "rolldown";

const dist = fileURLToPath(new URL("../dist/workers/", import.meta.url));
const SHARED = [/^node:/, /^\.\/index\.js$/, /^\.\.\/src\/errors\/index\.js$/];

for (const name of ["entry.js", "process-entry.js"]) {
  const file = `${dist}${name}`;
  await build({
    input: file,
    external: SHARED,
    platform: "node",
    logLevel: "warn",
    output: { file, format: "esm", comments: { legal: false, annotation: false, jsdoc: false } },
    write: true,
  });
  // tsc's map describes the file before bundling.
  rmSync(`${file}.map`, { force: true });
}
