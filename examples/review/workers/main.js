// examples/review/workers/main.js — surveys /src, fans out one analyser per file
// (in parallel), then hands every review to the reporter.
import { defineWorker } from "mountbox/worker";

export default defineWorker(async (_input, ctx) => {
  const files = await ctx.sandbox.listFiles("/src", "**/*.ts"); // sorted, virtual paths
  ctx.log(`reviewing ${files.length} files`);

  // One analyser per file, all at once: each is its own agent, in its own thread.
  // The call site narrows each one's sandbox further, to the single file it reviews.
  const reviews = await Promise.all(
    files.map((file) => ctx.delegate("analyser", { file }, { sandbox: { allowRead: [file] } })),
  );

  const report = await ctx.delegate("reporter", { reviews });
  // A code analyser says which fix it was refused; an LLM analyser says so in its text.
  const refused = reviews.flatMap((r) => (r?.fix?.refused ? [`${r.file}: ${r.fix.refused}`] : []));
  return { reviewed: files, refused, report };
});
