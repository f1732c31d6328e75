/**
 * The built-in module of LLM workers (DESIGN §8): the host runs it as the
 * worker module of every agent whose worker has `instructions` and no
 * `module`, with an {@link LlmWorkerInput} built from the worker's spec.
 *
 * It runs the AI SDK's tool loop in the agent's thread (`generateText`, or
 * `streamText` for a worker with `stream: true`): the model is a proxy
 * whose calls cross the port (the host holds the real one), and the tools
 * are the tool layer's over `ctx.sandbox`, `call_worker` bound to
 * `ctx.delegate`, `shell` to `ctx.runCommand` and the git tools to `ctx.git`.
 */
import { generateText, jsonSchema, stepCountIs, streamText, type Tool, tool } from "ai";
import { createSandboxTools } from "../src/ai-sdk/index.js";
import type { LlmWorkerInput } from "../src/port/protocol.js";
import type { ToolName, ToolOptions } from "../src/tools/index.js";
import { defineWorker, type WorkerContext } from "./index.js";
import {
  createProxyModel,
  MCP_CALL,
  type McpCallFunction,
  MODEL_CALL,
  type ModelCallFunction,
} from "./model-client.js";

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
  // The host runs git (the thread never does): each call crosses the port.
  if (cfg.git) opts.git = (tool, args) => ctx.git(tool, args);
  const tools: Record<string, Tool> = { ...(await createSandboxTools(ctx.sandbox, opts)) };
  // MCP tools of the servers this agent may use (the host chose them): each
  // call crosses the port; the host holds the connection.
  const callMcp = (ctx as unknown as Record<symbol, McpCallFunction | undefined>)[MCP_CALL];
  for (const t of cfg.mcpTools ?? []) {
    if (typeof callMcp !== "function" || Object.hasOwn(tools, t.name)) continue;
    tools[t.name] = tool({
      ...(t.description !== undefined ? { description: t.description } : {}),
      inputSchema: jsonSchema(t.inputSchema as Parameters<typeof jsonSchema>[0]),
      execute: (args: unknown) =>
        callMcp(t.server, t.tool, (args ?? {}) as Record<string, unknown>),
    });
  }
  const settings = {
    model: createProxyModel(call),
    system: cfg.instructions,
    prompt: typeof cfg.input === "string" ? cfg.input : (JSON.stringify(cfg.input) ?? ""),
    tools,
    stopWhen: stepCountIs(cfg.maxSteps ?? DEFAULT_MAX_STEPS),
    abortSignal: ctx.signal,
    // Retries are the host's job: it retries a failed call of its model
    // (createHost's `modelRetries`, the AI SDK's policy) where the provider
    // answers. A retry here would send the call again through the port and
    // multiply the host's.
    maxRetries: 0,
  };
  if (!cfg.stream) return (await generateText(settings)).text;
  // Streaming: the host reads the model's stream and reports its text as
  // it arrives. streamText hands an error to onError (and would log it);
  // the first one is the agent's failure, as generateText would throw it.
  let failure: { error: unknown } | undefined;
  const result = streamText({
    ...settings,
    onError: ({ error }) => {
      failure ??= { error };
    },
  });
  let text: string;
  try {
    text = await result.text;
  } catch (err) {
    throw failure ? failure.error : err;
  }
  if (failure) throw failure.error;
  return text;
});
