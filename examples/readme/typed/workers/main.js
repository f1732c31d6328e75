// examples/readme/typed/workers/main.js — ctx.delegate typed by the workers it may call
import { defineWorker } from "mountbox/worker";

/** @typedef {{ analyzer: typeof import("./analyzer.js") }} Delegates */

export default defineWorker(
  /**
   * @param {{ path: string }} input
   * @param {import("mountbox/worker").WorkerContext<Delegates>} ctx
   */
  async (input, ctx) => {
    const text = await ctx.sandbox.readFile(input.path);
    const { words } = await ctx.delegate("analyzer", { text }); // { words: number }
    return { path: input.path, words };
  },
);
