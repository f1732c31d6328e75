// examples/readme/host.mjs — node host.mjs, from any folder
import { createHost } from "mountbox";

const host = await createHost({
  sandbox: { root: "./project", mounts: ["./cache:/cache:ro"] }, // a SandboxConfig or a Sandbox
  basePath: import.meta.dirname, // what relative paths are relative to
  workers: {
    main: { module: "./workers/main.js", delegates: ["analyzer"] }, // the root sandbox, unchanged
    analyzer: {
      module: "./workers/analyzer.js",
      sandbox: { restrict: "/src", readonly: true },
      timeoutMs: 60_000,
      maxOldGenerationSizeMb: 256,
      dependencies: ["./workers/lib"], // its own helper files; packages by name: ["zod"]
    },
  },
  maxDepth: 5,
  maxAgents: 32,
  onEvent: (e) => {
    if (e.type === "denial") console.error(`refused: ${e.op} ${e.path}`);
  },
});
const out = await host.run("main", { task: "review" }, { timeoutMs: 120_000 });
console.log(JSON.stringify(out, null, 2));
await host.close();
