/**
 * Demo worker (runs in its own hardened thread): reads a file, is refused a
 * write, then delegates a review to a narrower worker.
 */
import { defineWorker, PathNotWritableError } from "../../workers/index.js";

export default defineWorker(async (_input: unknown, ctx) => {
  const app = await ctx.sandbox.readFile("/src/app.ts");
  let refused = "";
  try {
    await ctx.sandbox.writeFile("/cache/deps.json", "{}");
  } catch (e) {
    if (!(e instanceof PathNotWritableError)) throw e;
    refused = e.message.split("\n")[0] ?? "";
  }
  const review = await ctx.delegate(
    "reviewer",
    { focus: "greeting" },
    { sandbox: { allowRead: "/src" } },
  );
  return { appLines: app.split("\n").length - 1, refused, review };
});
