// examples/readme/program/workers/main.js
import { readFileSync } from "node:fs";
import { defineWorker } from "mountbox/worker";

export default defineWorker(async (input, ctx) => {
  let direct; // the thread may read its own module files, not the folder around them
  try {
    direct = readFileSync("program.yaml", "utf8");
  } catch (e) {
    direct = e.code;
  }
  const summary = await ctx.delegate("summarizer", { topic: input.topic });
  return { summary, direct, writable: await ctx.sandbox.canWrite("/cache/notes.md") };
});
