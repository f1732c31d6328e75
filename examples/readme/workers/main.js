// examples/readme/workers/main.js — plain JS (built output), runs in its own thread
import { defineWorker, PathNotWritableError } from "mountbox/worker";

export default defineWorker(async (input, ctx) => {
  const text = await ctx.sandbox.readFile("/src/a.ts"); // served by the host
  let refused = "";
  try {
    await ctx.sandbox.writeFile("/cache/x", text); // a read-only mount
  } catch (e) {
    if (!(e instanceof PathNotWritableError)) throw e; // class kept across threads
    refused = e.code;
  }
  const analysis = await ctx.delegate(
    "analyzer",
    { text },
    {
      sandbox: { allowRead: ["/src/lib"] }, // narrows further; can never widen
      attachments: ["/docs/spec.pdf"], // read through *this* sandbox, handed over as bytes
    },
  );
  return { task: input.task, refused, analysis };
});
