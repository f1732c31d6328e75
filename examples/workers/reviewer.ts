/** Demo worker: a read-only reviewer that only sees /src. */
import { defineWorker } from "../../workers/index.js";

export default defineWorker(async (input: { focus: string }, ctx) => {
  const files = await ctx.sandbox.listFiles("/");
  let docs = "";
  try {
    await ctx.sandbox.readFile("/docs/readme.md");
  } catch (e) {
    docs = (e as Error).message.split("\n")[0] ?? "";
  }
  return { focus: input.focus, sees: files, canWrite: await ctx.sandbox.writableRoots(), docs };
});
