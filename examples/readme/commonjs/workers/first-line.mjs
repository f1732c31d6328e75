// examples/readme/commonjs/workers/first-line.mjs — an ES module in a CommonJS app
import { defineWorker } from "mountbox/worker";

export default defineWorker(async (path, ctx) => (await ctx.sandbox.readFile(path)).split("\n")[0]);
