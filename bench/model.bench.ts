/**
 * Issue 12 model benchmark: one model step of an LLM agent — `generateText`
 * in a real agent thread with the tool layer's 12 tools — with its model
 * held by the host (the proxy model: every call crosses the port to the
 * host's mock model, answering text at once) beside the same step with the
 * same mock model inside the thread, interleaved in one thread. Goal: at
 * most 1.2× the time (≥ 0.83× the steps per second). A second row compares
 * a bare `doGenerate` round trip with the direct call (no goal: it is the
 * port's fixed cost, which a real model's latency dwarfs).
 */
import { fileURLToPath } from "node:url";
import { MockLanguageModelV3 } from "ai/test";
import { createSandbox, type Sandbox } from "../src/index.js";
import { serveModelCall } from "../src/models/model-calls.js";
import { runAgentThread } from "../src/threads/agent-thread.js";
import { llmWorkerCode } from "../src/threads/permissions.js";
import { type BenchRow, CI_MODE } from "./lib.js";
import { makeBenchTree } from "./tree.js";

// Relative to dist/bench/ once built.
const fixture = fileURLToPath(new URL("../../test/fixtures/llm/bench-steps.js", import.meta.url));
const STEPS = CI_MODE ? 200 : 3000;
const WARMUP = CI_MODE ? 50 : 500;
/** Rounds per figure; the median is reported. */
const ROUNDS = CI_MODE ? 1 : 5;

/** A model that answers with text at once (the SDK's own mock). */
function textModel(): MockLanguageModelV3 {
  return new MockLanguageModelV3({
    doGenerate: async () => ({
      content: [{ type: "text", text: "Hello." }],
      finishReason: { unified: "stop", raw: "stop" },
      usage: {
        inputTokens: { total: 3, noCache: 3, cacheRead: undefined, cacheWrite: undefined },
        outputTokens: { total: 2, text: 2, reasoning: undefined },
      },
      warnings: [],
    }),
  });
}

/** Milliseconds per step, per round: the host's model via the port, and the model in the thread. */
async function measure(
  sandbox: Sandbox,
  raw: boolean,
): Promise<{ proxy: number[]; local: number[] }> {
  const model = textModel();
  const controller = new AbortController();
  const { value } = await runAgentThread({
    module: fixture,
    dependencies: [...(llmWorkerCode().dependencies ?? [])],
    input: { steps: STEPS, warmup: WARMUP, rounds: ROUNDS, raw },
    sandbox,
    onModel: (kind, options) => {
      // Keep the mock's call log from growing without bound.
      if (model.doGenerateCalls.length > 1000) model.doGenerateCalls.length = 0;
      return serveModelCall({
        kind,
        options,
        model: { name: "mock", model, maxRetries: 0 },
        signal: controller.signal,
        onDone: () => {},
      });
    },
    timeoutMs: 600_000,
  });
  return value as { proxy: number[]; local: number[] };
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? Number.NaN;
}

export default async function benchModel(): Promise<BenchRow[]> {
  const { base, cleanup } = makeBenchTree();
  try {
    const sandbox = createSandbox({ root: "root" }, { basePath: base });
    const rows: BenchRow[] = [];
    for (const raw of [false, true]) {
      const { proxy, local } = await measure(sandbox, raw);
      const hz = 1000 / median(proxy);
      const baselineHz = 1000 / median(local);
      rows.push({
        name: raw
          ? "doGenerate of the proxy model: a round trip to the host's mock"
          : "one model step: generateText in an agent thread, model held by the host (mock, 12 tools)",
        baseline: raw
          ? "the mock's doGenerate in the thread"
          : "the same step with the same mock model in the thread",
        hz,
        baselineHz,
        ratio: hz / baselineHz,
        ...(raw ? {} : { goal: "≥ 0.83× (≤ 1.2× the time)" }),
      });
    }
    return rows;
  } finally {
    cleanup();
  }
}
