/**
 * The model benchmark's floor, the thread side: the same `generateText`
 * step as the agent thread's (same 12 tools, same mock answer), in a plain
 * worker, with the model answered over a bare `MessagePort` by a host that
 * only posts a fixed reply — no checks, no port server, no lockdown. What is
 * left is what any design pays that keeps the model on the host's thread:
 * a message each way and the wakes of two threads. Interleaved with the
 * same step with the mock in this worker, as the agent thread's fixture.
 */
import { type MessagePort, parentPort, workerData } from "node:worker_threads";
import { generateText, type LanguageModel } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { createSandboxTools } from "../src/ai-sdk/index.js";
import { createSandbox } from "../src/index.js";
import { mockAnswer, timeRounds } from "./model-steps.js";

interface FloorInput {
  port: MessagePort;
  base: string;
  steps: number;
  warmup: number;
  rounds: number;
}

const { port, base, steps, warmup, rounds } = workerData as FloorInput;
const tools = await createSandboxTools(createSandbox({ root: "root" }, { basePath: base }));

const pending = new Map<number, (value: Record<string, unknown>) => void>();
let nextId = 0;
port.on("message", (m: { id: number; value: Record<string, unknown> }) => {
  const resolve = pending.get(m.id);
  pending.delete(m.id);
  resolve?.(m.value);
});

/** A model whose every call is one message to the host and one back, as small as the proxy's. */
const bare = {
  specificationVersion: "v3",
  provider: "bench.bare-port",
  modelId: "bare",
  supportedUrls: {},
  async doGenerate(options: { prompt: unknown; toolChoice?: unknown }) {
    const id = nextId++;
    const value = await new Promise<Record<string, unknown>>((resolve) => {
      pending.set(id, resolve);
      port.postMessage({ id, args: [{ prompt: options.prompt, toolChoice: options.toolChoice }] });
    });
    return { ...value, response: { timestamp: new Date() } };
  },
  doStream() {
    throw new Error("not used");
  },
} as unknown as LanguageModel;

// One answer object for every call, as the agent thread's fixture does.
const answer = mockAnswer();
const local = new MockLanguageModelV3({ doGenerate: async () => answer });
const step = (model: LanguageModel) =>
  generateText({ model, prompt: "Say hello.", tools, maxRetries: 0 });
const out = await timeRounds(local, bare, step, { warmup, steps, rounds });
port.close();
parentPort?.postMessage(out);
