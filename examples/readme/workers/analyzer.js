// examples/readme/workers/analyzer.js
import { defineWorker } from "mountbox/worker";
import { countWords } from "./lib/words.js";

export default defineWorker(async (input, ctx) => ({
  words: countWords(input.text),
  sees: await ctx.sandbox.listFiles("/"),
  attachments: ctx.attachments.map((a) => `${a.path} (${a.mediaType}, ${a.bytes.byteLength} B)`),
}));
