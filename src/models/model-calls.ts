/**
 * Serving one model call of an LLM worker (DESIGN §8): the agent's thread
 * reaches its model only through the port (`model.generate` /
 * `model.stream`); {@link serveModelCall} makes the call — retried as the
 * AI SDK retries (`model-retries.ts`), in v4 form for a v4 model
 * (`model-v4.ts`) — and answers with plain data. A failure is told without
 * secrets (`model-errors.ts`).
 */
import { escapeControl } from "../errors/index.js";
import {
  describeModelFailure,
  MAX_ERROR_CHARS,
  type ModelErrorCode,
  scrubbedMessage,
} from "./model-errors.js";
import { callWithRetries } from "./model-retries.js";
import { scrubSecrets } from "./model-secrets.js";
import { fromV4Part, fromV4Parts, toV4Options } from "./model-v4.js";
import { MAX_DEPTH } from "./plain-data.js";
import type { WorkerModel } from "./worker-models.js";

/** Most stream parts kept from one `doStream`. */
const MAX_STREAM_PARTS = 200_000;

/** How a model call ended (for the `model_call` event). */
export type ModelCallInfo =
  | {
      status: "ok";
      attempts: number;
      inputTokens?: number;
      outputTokens?: number;
      finishReason: string;
      ms: number;
    }
  | {
      status: "error";
      attempts: number;
      errorCode: ModelErrorCode;
      statusCode?: number;
      isRetryable: boolean;
      ms: number;
    };

/** What {@link serveModelCall} needs. */
export interface ModelCall {
  kind: "generate" | "stream";
  /** Checked by `checkModelCallOptions` (model-request-checks.ts). */
  options: Record<string, unknown>;
  model: WorkerModel;
  /** The agent's signal: a stopped agent stops its model call (and its retries). */
  signal: AbortSignal;
  /** Epoch ms of the agent's deadline: no retry waits past it. */
  deadlineAt?: number;
  /** Reports the finished call, or the failed one (for the `model_call` event). */
  onDone(info: ModelCallInfo): void;
  /** Each piece of text (or reasoning) a streamed answer brings, as it arrives. */
  onText?(kind: "text" | "reasoning", delta: string): void;
}

/**
 * Calls the worker's real model with the checked options and returns the
 * result as plain data: `response.body`, `request` and headers dropped,
 * dates as ISO strings, a stream read to its end (its parts, errors as
 * messages). Retryable failures are retried (`model.maxRetries`); a failure
 * becomes an `AgentThreadError` (reason `threw`) carrying only the model's
 * message — secrets removed — its `statusCode` and `isRetryable`.
 */
export async function serveModelCall(call: ModelCall): Promise<unknown> {
  const started = performance.now();
  const { model } = call.model;
  const v4 = model.specificationVersion === "v4";
  const base = v4 ? toV4Options(call.options) : call.options;
  const options = { ...base, abortSignal: call.signal };
  const tries = { attempts: 0 };
  const policy = {
    maxRetries: call.model.maxRetries,
    signal: call.signal,
    ...(call.deadlineAt !== undefined ? { deadlineAt: call.deadlineAt } : {}),
  };
  try {
    if (call.kind === "generate") {
      const r = (await callWithRetries(
        async () => (await model.doGenerate(options as never)) as Record<string, unknown>,
        policy,
        tries,
      )) as Record<string, unknown>;
      call.onDone({
        status: "ok",
        attempts: tries.attempts,
        ...tokensOf(r.usage as UsageLike | undefined),
        finishReason: finishOf(r.finishReason),
        ms: performance.now() - started,
      });
      return {
        content: toPlain(v4 ? fromV4Parts(r.content ?? []) : (r.content ?? []), 0),
        finishReason: toPlain(r.finishReason, 0),
        usage: toPlain(r.usage, 0),
        ...(r.providerMetadata ? { providerMetadata: toPlain(r.providerMetadata, 0) } : {}),
        response: responseMeta(r.response),
        warnings: toPlain(r.warnings ?? [], 0),
      };
    }
    // Only starting the stream is retried (as the SDK does): once parts
    // have arrived, their text has been shown.
    const r = (await callWithRetries(
      async () => (await model.doStream(options as never)) as { stream?: unknown },
      policy,
      tries,
    )) as { stream?: unknown };
    const parts = await readStream(r.stream, call, v4);
    const finish = parts.find((p) => (p as { type?: unknown }).type === "finish") as
      | { usage?: UsageLike; finishReason?: unknown }
      | undefined;
    call.onDone({
      status: "ok",
      attempts: tries.attempts,
      ...tokensOf(finish?.usage),
      finishReason: finishOf(finish?.finishReason),
      ms: performance.now() - started,
    });
    return { parts };
  } catch (err) {
    const aborted = call.signal.aborted;
    const failure = await describeModelFailure(
      call.model.name,
      model,
      err,
      Math.max(tries.attempts, 1),
      aborted,
    );
    call.onDone({
      status: "error",
      attempts: Math.max(tries.attempts, 1),
      errorCode: failure.errorCode,
      ...(failure.statusCode !== undefined ? { statusCode: failure.statusCode } : {}),
      isRetryable: failure.isRetryable,
      ms: performance.now() - started,
    });
    if (aborted) throw err;
    throw failure.error;
  }
}

async function readStream(stream: unknown, call: ModelCall, v4: boolean): Promise<unknown[]> {
  if (!(stream instanceof ReadableStream)) throw new Error("doStream returned no stream");
  const reader = stream.getReader();
  const parts: unknown[] = [];
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (parts.length >= MAX_STREAM_PARTS)
        throw new Error(`the stream has more than ${MAX_STREAM_PARTS} parts`);
      const part = (v4 ? fromV4Part(value) : value) as Record<string, unknown> | undefined;
      if (part === undefined) continue;
      if (part?.type === "error")
        parts.push({ type: "error", error: await scrubbedMessage(part.error, call.model.model) });
      else if (part?.type === "response-metadata")
        parts.push({ type: "response-metadata", ...responseMeta(part) });
      else {
        if (
          (part?.type === "text-delta" || part?.type === "reasoning-delta") &&
          typeof part.delta === "string" &&
          part.delta !== ""
        )
          call.onText?.(part.type === "text-delta" ? "text" : "reasoning", part.delta);
        parts.push(toPlain(part, 0));
      }
    }
  } catch (err) {
    // Let the provider close its connection (a hung stream, a stopped agent).
    await reader.cancel().catch(() => {});
    throw err;
  } finally {
    reader.releaseLock();
  }
  return parts;
}

/** An error inside a result, as text: key-shaped text removed (held keys are the failure path's). */
function errorText(e: unknown): string {
  const text = e instanceof Error ? e.message : String(e);
  return escapeControl(scrubSecrets(text, [])).slice(0, MAX_ERROR_CHARS);
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
