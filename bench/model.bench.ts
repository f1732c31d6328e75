/**
 * Issue 12 model benchmark: one model step of an LLM agent — `generateText`
 * in a real agent thread with the tool layer's 12 tools — with its model
 * held by the host (the proxy model: every call crosses the port to the
 * host's mock model, answering text at once) beside the same step with the
 * same mock model inside the thread, interleaved in one thread. Goal: at
 * most 1.2× the time (≥ 0.83× the steps per second). A second row compares
 * a bare `doGenerate` round trip with the direct call (no goal: it is the
 * port's fixed cost, which a real model's latency dwarfs). A third row is
 * the floor (issue 25): the same step in a plain worker whose model is
 * answered over a bare `MessagePort` by this thread, posting a fixed reply —
 * what any design pays that keeps the model on the host's thread.
 */
import { fileURLToPath } from "node:url";
import { MessageChannel, Worker } from "node:worker_threads";
import { MockLanguageModelV3 } from "ai/test";
import { createSandbox, type Sandbox } from "../src/index.js";
import { serveModelCall } from "../src/models/model-calls.js";
import { runAgentThread } from "../src/threads/agent-thread.js";
import { llmWorkerCode } from "../src/threads/permissions.js";
import { type BenchRow, CI_MODE } from "./lib.js";
import { mockAnswer } from "./model-steps.js";
import { makeBenchTree } from "./tree.js";

// Relative to dist/bench/ once built.
const fixture = fileURLToPath(new URL("../../test/fixtures/llm/bench-steps.js", import.meta.url));
const answerModule = fileURLToPath(new URL("./model-steps.js", import.meta.url));
const STEPS = CI_MODE ? 200 : 3000;
const WARMUP = CI_MODE ? 50 : 500;
/** Rounds per figure; the median is reported. */
const ROUNDS = CI_MODE ? 1 : 5;

/** A model that answers with text at once (the SDK's own mock). */
function textModel(): MockLanguageModelV3 {
  return new MockLanguageModelV3({ doGenerate: async () => mockAnswer() });
}

/** Milliseconds per step, per round: the host's model via the port, and the model in the thread. */
async function measure(
  sandbox: Sandbox,
  raw: boolean,
): Promise<{ remote: number[]; local: number[] }> {
  const model = textModel();
  const controller = new AbortController();
  const { value } = await runAgentThread({
    module: fixture,
    // The fixture takes its answer from the same module as this file's mocks.
    dependencies: [...(llmWorkerCode().dependencies ?? []), answerModule],
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
  return value as { remote: number[]; local: number[] };
}

/**
 * Milliseconds per step, per round, in a plain worker: the model answered
 * over a bare port by this thread (a fixed reply, nothing checked), and the
 * mock in the worker.
 */
async function measureFloor(base: string): Promise<{ remote: number[]; local: number[] }> {
  const { port1, port2 } = new MessageChannel();
  port1.on("message", (m: { id: number }) => {
    port1.postMessage({ id: m.id, value: { ...mockAnswer(), response: {} } });
  });
  const worker = new Worker(new URL("./model-floor-worker.js", import.meta.url), {
    workerData: { port: port2, base, steps: STEPS, warmup: WARMUP, rounds: ROUNDS },
    transferList: [port2],
  });
  try {
    return await new Promise((resolve, reject) => {
      worker.once("message", resolve);
      worker.once("error", reject);
      worker.once("exit", (code) => reject(new Error(`the floor worker exited (${code})`)));
    });
  } finally {
    port1.close();
    await worker.terminate();
  }
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
      const { remote, local } = await measure(sandbox, raw);
      const hz = 1000 / median(remote);
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
    const { remote: bare, local } = await measureFloor(base);
    rows.push({
      name: "floor: the same step in a plain worker, model answered over a bare MessagePort by the host's thread (no checks)",
      baseline: "the same step with the same mock model in that worker",
      hz: 1000 / median(bare),
      baselineHz: 1000 / median(local),
      ratio: median(local) / median(bare),
    });
    return rows;
  } finally {
    cleanup();
  }
}
