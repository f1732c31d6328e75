// examples/readme/typed/workers/analyzer.js — its input and result typed by JSDoc
import { defineWorker } from "mountbox/worker";

export default defineWorker(
  /** @param {{ text: string }} input */
  async (input) => ({ words: input.text.split(/\s+/).filter(Boolean).length }),
);
