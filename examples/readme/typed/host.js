// examples/readme/typed/host.js — node host.js; tsc --checkJs checks every name and input
import { createHost } from "mountbox";

/**
 * The host's workers by name, each typed by its module.
 * @typedef {{
 *   main: typeof import("./workers/main.js"),
 *   analyzer: typeof import("./workers/analyzer.js"),
 * }} Workers
 */

/** @type {import("mountbox").Host<Workers>} */
const host = await createHost({
  sandbox: { root: "../project", readonly: true },
  basePath: import.meta.dirname,
  workers: {
    main: { module: "./workers/main.js", delegates: ["analyzer"] },
    analyzer: { module: "./workers/analyzer.js" },
  },
});
const { path, words } = await host.run("main", { path: "/src/a.ts" });
console.log(`${path}: ${words} words`);
// Type errors: host.run("mian", …), host.run("main", { file: "/x" }), host.run("main").
await host.close();
