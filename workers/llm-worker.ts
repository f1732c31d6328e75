/**
 * The built-in module of LLM workers (DESIGN §8): the host runs it as the
 * worker module of every agent whose worker has `instructions` and no
 * `module`, with an {@link LlmWorkerInput} built from the worker's spec.
 *
 * It runs the AI SDK's tool loop in the agent's thread: the model is a proxy
 * whose calls cross the port (the host holds the real one), and the tools
 * are the tool layer's over `ctx.sandbox`, `call_worker` bound to
 * `ctx.delegate` and `shell` to `ctx.runCommand`.
 */
import { generateText, stepCountIs } from "ai";
import { createSandboxTools } from "../src/ai-sdk/index.js";
import type { LlmWorkerInput } from "../src/port/protocol.js";
import type { ToolName, ToolOptions } from "../src/tools/index.js";
import { defineWorker, type WorkerContext } from "./index.js";
import { createProxyModel, MODEL_CALL, type ModelCallFunction } from "./model-client.js";

/** Model steps of one run when the worker sets no `max_steps`. */
const DEFAULT_MAX_STEPS = 20;

export default defineWorker(async (raw: unknown, ctx: WorkerContext) => {
  const cfg = raw as LlmWorkerInput;
  const call = (ctx as unknown as Record<symbol, ModelCallFunction | undefined>)[MODEL_CALL];
  if (typeof call !== "function") throw new Error("This thread has no model connection.");
  const opts: ToolOptions = { workers: cfg.workers };
  if (cfg.toolNames) opts.tools = cfg.toolNames as ToolName[];
  if (cfg.workers.length > 0)
    opts.delegate = (worker, input, o) =>
      ctx.delegate(worker, input, o.attachments ? { attachments: o.attachments } : undefined);
  if (cfg.shell)
    opts.runCommand = (command, o) =>
      ctx.runCommand(command, o.timeoutMs === undefined ? undefined : { timeoutMs: o.timeoutMs });
  const tools = await createSandboxTools(ctx.sandbox, opts);
  const result = await generateText({
    model: createProxyModel(call),
    system: cfg.instructions,
    prompt: typeof cfg.input === "string" ? cfg.input : (JSON.stringify(cfg.input) ?? ""),
    tools,
    stopWhen: stepCountIs(cfg.maxSteps ?? DEFAULT_MAX_STEPS),
    abortSignal: ctx.signal,
    // A retry would resend to the host's model; the host's provider decides on retries.
    maxRetries: 0,
  });
  return result.text;
});
