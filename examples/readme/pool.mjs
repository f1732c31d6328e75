// examples/readme/pool.mjs — node pool.mjs
import { closeSharedPool, createSandbox, grepSandbox, listFilesPooled } from "mountbox";

const sandbox = createSandbox({ root: "./project" }, { basePath: import.meta.dirname });
const { matches, truncated } = await grepSandbox(sandbox, {
  pattern: "export const (\\w+)", // a JavaScript regular expression, tested line by line
  flags: "i",
  path: "/src", // a folder, or a single file
  glob: "**/*.ts",
  maxMatches: 100, // defaults: 100 matches, 64 MiB read, 8 MiB per file, 10 s
});
console.log(JSON.stringify({ matches, truncated }));
console.log(await listFilesPooled(sandbox, "/", "**/*.pdf")); // = sandbox.listFiles("/", "**/*.pdf")
await closeSharedPool();
