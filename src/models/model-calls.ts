/**
 * Serving one model call of an LLM worker (DESIGN §8): the agent's thread
 * reaches its model only through the port (`model.generate` /
 * `model.stream`); {@link serveModelCall} makes the call and answers with
 * plain data.
 */
import { AgentThreadError, escapeControl } from "../errors/index.js";
import { MAX_DEPTH } from "./plain-data.js";
import type { WorkerModel } from "./worker-models.js";

/** Most stream parts kept from one `doStream`. */
const MAX_STREAM_PARTS = 200_000;
/** Longest model error message passed on. */
const MAX_ERROR_CHARS = 2000;

/** What {@link serveModelCall} needs. */
export interface ModelCall {
  kind: "generate" | "stream";
  /** Checked by `checkModelCallOptions` (model-request-checks.ts). */
  options: Record<string, unknown>;
  model: WorkerModel;
  /** The agent's signal: a stopped agent stops its model call. */
  signal: AbortSignal;
  /** Reports the finished call (for the `model_call` event). */
  onDone(info: {
    inputTokens?: number;
    outputTokens?: number;
    finishReason: string;
    ms: number;
  }): void;
}

/**
 * Calls the worker's real model with the checked options and returns the
 * result as plain data: `response.body`, `request` and headers dropped,
 * dates as ISO strings, a stream read to its end (its parts, errors as
 * messages). A model error becomes an `AgentThreadError` (reason `threw`)
 * carrying only the model's message.
 */
export async function serveModelCall(call: ModelCall): Promise<unknown> {
  const started = performance.now();
  const options = { ...call.options, abortSignal: call.signal };
  try {
    if (call.kind === "generate") {
      const r = (await call.model.model.doGenerate(options as never)) as Record<string, unknown>;
      const usage = r.usage as UsageLike | undefined;
      call.onDone({
        ...tokensOf(usage),
        finishReason: finishOf(r.finishReason),
        ms: performance.now() - started,
      });
      return {
        content: toPlain(r.content ?? [], 0),
        finishReason: toPlain(r.finishReason, 0),
        usage: toPlain(r.usage, 0),
        ...(r.providerMetadata ? { providerMetadata: toPlain(r.providerMetadata, 0) } : {}),
        response: responseMeta(r.response),
        warnings: toPlain(r.warnings ?? [], 0),
      };
    }
    const r = (await call.model.model.doStream(options as never)) as { stream?: unknown };
    const parts = await readStream(r.stream);
    const finish = parts.find((p) => (p as { type?: unknown }).type === "finish") as
      | { usage?: UsageLike; finishReason?: unknown }
      | undefined;
    call.onDone({
      ...tokensOf(finish?.usage),
      finishReason: finishOf(finish?.finishReason),
      ms: performance.now() - started,
    });
    return { parts };
  } catch (err) {
    if (call.signal.aborted) throw err;
    throw modelFailure(call.model.name, err);
  }
}

/** The error an agent gets for a failed model call: the model's message, nothing else. */
function modelFailure(name: string, err: unknown): AgentThreadError {
  const message = err instanceof Error ? err.message : String(err);
  return new AgentThreadError(
    "threw",
    `The model '${name}' failed: ${escapeControl(message).slice(0, MAX_ERROR_CHARS)}`,
  );
}

async function readStream(stream: unknown): Promise<unknown[]> {
  if (!(stream instanceof ReadableStream)) throw new Error("doStream returned no stream");
  const reader = stream.getReader();
  const parts: unknown[] = [];
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (parts.length >= MAX_STREAM_PARTS)
        throw new Error(`the stream has more than ${MAX_STREAM_PARTS} parts`);
      const part = value as Record<string, unknown>;
      if (part?.type === "error") parts.push({ type: "error", error: errorText(part.error) });
      else if (part?.type === "response-metadata")
        parts.push({ type: "response-metadata", ...responseMeta(part) });
      else parts.push(toPlain(part, 0));
    }
  } finally {
    reader.releaseLock();
  }
  return parts;
}

function errorText(e: unknown): string {
  return escapeControl(e instanceof Error ? e.message : String(e)).slice(0, MAX_ERROR_CHARS);
}

/** `id`, `modelId` and `timestamp` (ISO string) of a response; headers and body stay here. */
function responseMeta(r: unknown): Record<string, unknown> {
  if (typeof r !== "object" || r === null) return {};
  const { id, modelId, timestamp } = r as { id?: unknown; modelId?: unknown; timestamp?: unknown };
  const out: Record<string, unknown> = {};
  if (typeof id === "string") out.id = id;
  if (typeof modelId === "string") out.modelId = modelId;
  if (timestamp instanceof Date && !Number.isNaN(timestamp.getTime()))
    out.timestamp = timestamp.toISOString();
  return out;
}

/**
 * Plain data of a model's result: Dates as ISO strings, errors as messages,
 * functions and symbols dropped, byte arrays copied; depth bounded.
 */
function toPlain(v: unknown, depth: number): unknown {
  if (depth > MAX_DEPTH) return undefined;
  if (v === null || typeof v === "string" || typeof v === "boolean") return v;
  if (typeof v === "number") return Number.isFinite(v) ? v : null;
  if (v === undefined || typeof v !== "object") return undefined;
  if (v instanceof Date) return Number.isNaN(v.getTime()) ? undefined : v.toISOString();
  if (v instanceof Error) return errorText(v);
  if (v instanceof Uint8Array) return new Uint8Array(v);
  if (v instanceof URL) return v.href;
  if (Array.isArray(v)) return v.map((x) => toPlain(x, depth + 1) ?? null);
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) {
    const p = toPlain(x, depth + 1);
    if (p !== undefined) out[k] = p;
  }
  return out;
}

interface UsageLike {
  inputTokens?: { total?: unknown } | number;
  outputTokens?: { total?: unknown } | number;
}

function tokensOf(u: UsageLike | undefined): { inputTokens?: number; outputTokens?: number } {
  const total = (t: unknown): number | undefined => {
    const n = typeof t === "object" && t !== null ? (t as { total?: unknown }).total : t;
    return typeof n === "number" && Number.isFinite(n) ? n : undefined;
  };
  const out: { inputTokens?: number; outputTokens?: number } = {};
  const i = total(u?.inputTokens);
  const o = total(u?.outputTokens);
  if (i !== undefined) out.inputTokens = i;
  if (o !== undefined) out.outputTokens = o;
  return out;
}

function finishOf(f: unknown): string {
  const unified = typeof f === "object" && f !== null ? (f as { unified?: unknown }).unified : f;
  return typeof unified === "string" ? escapeControl(unified.slice(0, 64)) : "unknown";
}
