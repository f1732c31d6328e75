// examples/readme/program/workers/summarizer.js
import { defineWorker } from "mountbox/worker";

export default defineWorker(async (input, ctx) => {
  const files = await ctx.sandbox.listFiles("/docs", "**/*.md");
  const first = files.length > 0 ? await ctx.sandbox.readFile(files[0]) : "";
  return { topic: input.topic, files, firstLine: first.split("\n")[0] };
});
