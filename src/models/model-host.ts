/**
 * The host side of LLM workers' model calls (DESIGN §8): models are held by
 * the host (`createHost({ models })`), and an LLM agent's thread reaches its
 * model only through the port (`model.generate` / `model.stream`).
 *
 * - {@link checkModelCallOptions} checks and copies every field a hostile
 *   thread sends; nothing else reaches the real model.
 * - {@link resolveWorkerModels} maps each LLM worker's `model` name to a
 *   model once, at `createHost`; the thread never names one.
 * - {@link serveModelCall} makes the call and answers with plain data, and
 *   {@link ToolCallTracker} derives `tool_call` events from what the model
 *   asked for and what the next call reports back.
 */
import { AgentThreadError, type ConfigIssue, escapeControl } from "../errors/index.js";
import type { HostEvent, LanguageModelLike } from "../host/host-types.js";
import { MODEL_CALL_KEYS } from "../port/protocol.js";

/** Most bytes of one model request (strings count 2 per code unit). */
const MAX_REQUEST_BYTES = 32 * 1024 * 1024;
/** Deepest nesting accepted in a request (JSON schemas, tool results). */
const MAX_DEPTH = 64;
/**
 * Most values (nodes) in one request: checking this many takes a few
 * milliseconds of the host loop (a million took 13 ms alone, 170+ ms with
 * the garbage collection it set off).
 */
export const MAX_NODES = 200_000;
/** Most messages, tools and stop sequences. */
const MAX_MESSAGES = 10_000;
const MAX_TOOLS = 256;
const MAX_STOP_SEQUENCES = 64;
/** Longest name (tool, part type) accepted. */
const MAX_NAME_CHARS = 256;
/** Most stream parts kept from one `doStream`. */
const MAX_STREAM_PARTS = 200_000;
/** Longest model error message passed on. */
const MAX_ERROR_CHARS = 2000;

const CALL_KEYS = new Set<string>(MODEL_CALL_KEYS);

/** Part types each role may send (LanguageModelV3Message). */
const PART_TYPES: Record<string, ReadonlySet<string>> = {
  user: new Set(["text", "file"]),
  assistant: new Set(["text", "file", "reasoning", "tool-call", "tool-result"]),
  tool: new Set(["tool-result", "tool-approval-response"]),
};

/** Budget of one copy: values and bytes seen so far. */
interface Budget {
  nodes: number;
  bytes: number;
}

/**
 * Checks the call options of a `model.generate` / `model.stream` request
 * from a thread and returns a fresh copy of exactly the accepted fields —
 * `LanguageModelV3CallOptions` without `abortSignal`, `headers` and
 * `providerOptions` (the host's to choose) — or a message saying what is
 * wrong. The request must be the host's own structured-clone copy of the
 * message (as the port delivers it): nested data is checked in place, and
 * only byte arrays are copied.
 */
export function checkModelCallOptions(
  raw: unknown,
): { options: Record<string, unknown>; bytes: number } | string {
  if (!isPlainObject(raw)) return "the call options must be an object";
  const budget: Budget = { nodes: 0, bytes: 0 };
  const out: Record<string, unknown> = {};
  for (const key in raw) {
    if (!CALL_KEYS.has(key)) return `unknown call option ${JSON.stringify(key.slice(0, 64))}`;
    const v = raw[key];
    if (v === undefined) continue;
    const checked = checkOption(key, v, budget);
    if (typeof checked === "string") return `${key}: ${checked}`;
    out[key] = checked.value;
    if (budget.bytes > MAX_REQUEST_BYTES)
      return `the request is bigger than ${MAX_REQUEST_BYTES} bytes`;
  }
  if (!("prompt" in out)) return "prompt: required";
  return { options: out, bytes: budget.bytes };
}

/** Checks one model request of one agent; see {@link createModelRequestChecker}. */
export type ModelRequestChecker = (
  raw: unknown,
) => { options: Record<string, unknown>; bytes: number } | string;

/**
 * A checker for one agent's model requests. A tool loop sends the same tool
 * definitions with every step, so a request may say `reuseTools: true`
 * instead of sending `tools`: it then gets the tools of this agent's last
 * request that sent any (already checked). Otherwise as
 * {@link checkModelCallOptions}.
 */
export function createModelRequestChecker(): ModelRequestChecker {
  let lastTools: unknown[] | undefined;
  return (raw) => {
    if (!isPlainObject(raw) || raw.reuseTools === undefined) {
      const checked = checkModelCallOptions(raw);
      if (typeof checked !== "string" && checked.options.tools !== undefined)
        lastTools = checked.options.tools as unknown[];
      return checked;
    }
    const { reuseTools, ...rest } = raw;
    if (reuseTools !== true || rest.tools !== undefined)
      return "reuseTools must be true, and comes without tools";
    if (lastTools === undefined) return "reuseTools: no earlier request sent tools";
    const checked = checkModelCallOptions(rest);
    if (typeof checked === "string") return checked;
    checked.options.tools = lastTools;
    return checked;
  };
}

function checkOption(key: string, v: unknown, budget: Budget): { value: unknown } | string {
  switch (key) {
    case "prompt":
      return checkPrompt(v, budget);
    case "maxOutputTokens":
    case "topK":
    case "seed":
      return Number.isSafeInteger(v) && (key === "seed" || (v as number) > 0)
        ? { value: v }
        : "expected an integer";
    case "temperature":
    case "topP":
    case "presencePenalty":
    case "frequencyPenalty":
      return typeof v === "number" && Number.isFinite(v) ? { value: v } : "expected a number";
    case "includeRawChunks":
      return typeof v === "boolean" ? { value: v } : "expected a boolean";
    case "stopSequences":
      if (!Array.isArray(v) || v.length > MAX_STOP_SEQUENCES || !v.every(isShortText))
        return `expected at most ${MAX_STOP_SEQUENCES} strings`;
      return { value: [...v] };
    case "responseFormat":
      return checkResponseFormat(v, budget);
    case "tools":
      return checkTools(v, budget);
    default: // toolChoice
      return checkToolChoice(v);
  }
}

function checkPrompt(v: unknown, budget: Budget): { value: unknown } | string {
  if (!Array.isArray(v) || v.length > MAX_MESSAGES)
    return `expected an array of at most ${MAX_MESSAGES} messages`;
  const out: unknown[] = [];
  for (const [i, m] of v.entries()) {
    if (!isPlainObject(m)) return `message ${i} must be an object`;
    const role = m.role;
    // Known keys only: `providerOptions` (the host's to choose) and anything
    // else a thread adds are left out of the copy, at every level.
    if (role === "system") {
      if (typeof m.content !== "string") return `message ${i}: system content must be a string`;
      const bad = checkData(m.content, budget, 1);
      if (bad) return `message ${i}: ${bad}`;
      out.push({ role, content: m.content });
      continue;
    }
    const types = typeof role === "string" ? PART_TYPES[role] : undefined;
    if (!types) return `message ${i}: unknown role`;
    if (!Array.isArray(m.content) || m.content.length > MAX_MESSAGES)
      return `message ${i}: content must be an array of at most ${MAX_MESSAGES} parts`;
    const parts: unknown[] = [];
    for (const [j, part] of m.content.entries()) {
      if (!isPlainObject(part) || typeof part.type !== "string" || !types.has(part.type))
        return `message ${i}, part ${j}: not a ${role} part`;
      const copy = pickKnown(part, PART_KEYS[part.type] ?? [], budget);
      if (typeof copy === "string") return `message ${i}, part ${j}: ${copy}`;
      if (part.type === "tool-result") {
        const output = checkToolOutput(part.output, budget);
        if (typeof output === "string") return `message ${i}, part ${j}: output: ${output}`;
        copy.output = output;
      }
      parts.push(copy);
    }
    out.push({ role, content: parts });
  }
  return { value: out };
}

/** Keys each part type keeps (`providerOptions` never; `output` is checked on its own). */
const PART_KEYS: Record<string, readonly string[]> = {
  text: ["type", "text"],
  reasoning: ["type", "text"],
  file: ["type", "filename", "data", "mediaType"],
  "tool-call": ["type", "toolCallId", "toolName", "input", "providerExecuted"],
  "tool-result": ["type", "toolCallId", "toolName"],
  "tool-approval-response": ["type", "approvalId", "approved", "reason"],
};

/** Keys a tool result's output keeps, by its type. */
const OUTPUT_KEYS: Record<string, readonly string[]> = {
  text: ["type", "value"],
  json: ["type", "value"],
  "error-text": ["type", "value"],
  "error-json": ["type", "value"],
  "execution-denied": ["type", "reason"],
  content: ["type"],
};

/** A tool result's output with known keys only; content items lose `providerOptions`. */
function checkToolOutput(v: unknown, budget: Budget): Record<string, unknown> | string {
  if (!isPlainObject(v) || typeof v.type !== "string" || !Object.hasOwn(OUTPUT_KEYS, v.type))
    return "unknown output type";
  const out = pickKnown(v, OUTPUT_KEYS[v.type] as readonly string[], budget);
  if (typeof out === "string" || v.type !== "content") return out;
  if (!Array.isArray(v.value) || v.value.length > MAX_MESSAGES)
    return `value must be an array of at most ${MAX_MESSAGES} items`;
  const items: unknown[] = [];
  for (const item of v.value) {
    if (!isPlainObject(item) || typeof item.type !== "string") return "unknown content item";
    const keys = Object.keys(item).filter((k) => k !== "providerOptions");
    const copy = pickKnown(item, keys, budget);
    if (typeof copy === "string") return copy;
    items.push(copy);
  }
  out.value = items;
  return out;
}

/**
 * A fresh object with only `keys` of `o` (those with a value). Every value
 * is checked as plain data first — those left out too, so a bad request is
 * refused the same whatever it hides where — and byte arrays are copied.
 */
function pickKnown(
  o: Record<string, unknown>,
  keys: readonly string[],
  budget: Budget,
): Record<string, unknown> | string {
  budget.nodes++;
  for (const k in o) {
    if (k === "__proto__") return "the key __proto__ is not accepted";
    const item = o[k];
    if (item instanceof Uint8Array) continue;
    const bad = checkData(item, budget, 2);
    if (bad) return `${k.slice(0, 64)}: ${bad}`;
  }
  const out: Record<string, unknown> = {};
  for (const k of keys) {
    const item = o[k];
    if (item === undefined || !Object.hasOwn(o, k)) continue;
    out[k] = item instanceof Uint8Array ? copyBytes(item, budget) : item;
    budget.bytes += k.length * 2 + 8;
  }
  return out;
}

function checkResponseFormat(v: unknown, budget: Budget): { value: unknown } | string {
  if (!isPlainObject(v)) return "expected an object";
  if (v.type === "text") return size(v) === 1 ? { value: { type: "text" } } : "unknown key";
  if (v.type !== "json") return "type must be 'text' or 'json'";
  for (const k in v)
    if (v[k] !== undefined && !["type", "schema", "name", "description"].includes(k))
      return `unknown key ${JSON.stringify(k.slice(0, 64))}`;
  if (v.name !== undefined && !isShortText(v.name)) return "name must be a string";
  if (v.description !== undefined && typeof v.description !== "string")
    return "description must be a string";
  return copyData(v, budget, 0);
}

function checkTools(v: unknown, budget: Budget): { value: unknown } | string {
  if (!Array.isArray(v) || v.length > MAX_TOOLS) return `expected at most ${MAX_TOOLS} tools`;
  const out: unknown[] = [];
  for (const [i, t] of v.entries()) {
    // Provider-executed tools run with the host's account: not the thread's to ask for.
    if (!isPlainObject(t) || t.type !== "function") return `tool ${i}: only function tools`;
    for (const k in t)
      if (
        t[k] !== undefined &&
        !["type", "name", "description", "inputSchema", "inputExamples", "strict"].includes(k)
      )
        return `tool ${i}: unknown key ${JSON.stringify(k.slice(0, 64))}`;
    if (!isShortText(t.name)) return `tool ${i}: name must be a string`;
    if (t.description !== undefined && typeof t.description !== "string")
      return `tool ${i}: description must be a string`;
    if (!isPlainObject(t.inputSchema)) return `tool ${i}: inputSchema must be a JSON schema`;
    if (t.strict !== undefined && typeof t.strict !== "boolean")
      return `tool ${i}: strict must be a boolean`;
    const copy = copyData(t, budget, 0);
    if (typeof copy === "string") return `tool ${i}: ${copy}`;
    out.push(copy.value);
  }
  return { value: out };
}

function checkToolChoice(v: unknown): { value: unknown } | string {
  if (!isPlainObject(v)) return "expected an object";
  if ((v.type === "auto" || v.type === "none" || v.type === "required") && size(v) === 1)
    return { value: { type: v.type } };
  if (v.type === "tool" && isShortText(v.toolName) && size(v) === 2)
    return { value: { type: "tool", toolName: v.toolName } };
  return "expected { type: 'auto' | 'none' | 'required' } or { type: 'tool', toolName }";
}

/**
 * Checks plain data in place: null, booleans, finite numbers, strings,
 * arrays, plain objects (no `__proto__` key) and byte arrays; bounded in
 * depth, values and bytes. The request is the host's own structured-clone
 * copy, so only byte arrays (whose memory the thread may share) are copied.
 * Returns `{ value }` (the same data) or what is wrong.
 */
function copyData(v: unknown, budget: Budget, depth: number): { value: unknown } | string {
  const bad = checkData(v, budget, depth);
  return bad === undefined ? { value: v } : bad;
}

function checkData(v: unknown, budget: Budget, depth: number): string | undefined {
  if (++budget.nodes > MAX_NODES) return `more than ${MAX_NODES} values`;
  if (depth > MAX_DEPTH) return `nested deeper than ${MAX_DEPTH}`;
  switch (typeof v) {
    case "string":
      budget.bytes += v.length * 2;
      return undefined;
    case "boolean":
    case "undefined":
      return undefined;
    case "number":
      return Number.isFinite(v) ? undefined : "a number must be finite";
    case "object":
      break;
    default:
      return `unsupported value (${typeof v})`;
  }
  if (v === null) return undefined;
  if (Array.isArray(v)) {
    if (Object.getPrototypeOf(v) !== Array.prototype) return "unsupported array";
    for (let i = 0; i < v.length; i++) {
      const item = v[i];
      if (item instanceof Uint8Array) v[i] = copyBytes(item, budget);
      else {
        const bad = checkData(item, budget, depth + 1);
        if (bad) return bad;
      }
    }
    budget.bytes += 8 * v.length;
    return undefined;
  }
  if (v instanceof Uint8Array) return "bytes must sit in an array or object";
  if (!isPlainObject(v)) return "unsupported object";
  for (const k in v) {
    if (k === "__proto__") return "the key __proto__ is not accepted";
    const item = v[k];
    if (item instanceof Uint8Array) v[k] = copyBytes(item, budget);
    else {
      const bad = checkData(item, budget, depth + 1);
      if (bad) return bad;
    }
    budget.bytes += k.length * 2 + 8;
  }
  return undefined;
}

/** A byte array's own copy: the thread may still write to a shared original. */
function copyBytes(b: Uint8Array, budget: Budget): Uint8Array {
  budget.nodes++;
  budget.bytes += b.byteLength;
  return new Uint8Array(b);
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  if (typeof v !== "object" || v === null) return false;
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

function isShortText(v: unknown): v is string {
  return typeof v === "string" && v.length <= MAX_NAME_CHARS;
}

/** Keys with a value (structured clone keeps keys whose value is undefined). */
function size(o: Record<string, unknown>): number {
  return Object.values(o).filter((v) => v !== undefined).length;
}

// ---------------------------------------------------------------------------
// Models: resolved once, at createHost.
// ---------------------------------------------------------------------------

/** An LLM worker's model, resolved host-side. */
export interface WorkerModel {
  /** The worker's `model` name (events show it). */
  name: string;
  model: LanguageModelLike;
}

/** True for a worker the host runs as an LLM worker: instructions and no module. */
export function isLlmWorker(spec: { module?: string; instructions?: string }): boolean {
  return spec.module === undefined && typeof spec.instructions === "string";
}

/**
 * Each LLM worker's model, from `models` (validated here): a key whose value
 * is a language model (`specificationVersion: "v3"`, `doGenerate`,
 * `doStream`), or `key:id` where `models[key]` has `languageModel(id)` (a
 * provider or provider registry). Issues name the worker and the key.
 */
export function resolveWorkerModels(
  models: unknown,
  workers: ReadonlyMap<string, { module?: string; instructions?: string; model?: string }>,
  issues: ConfigIssue[],
): Map<string, WorkerModel> {
  const out = new Map<string, WorkerModel>();
  let table: Record<string, unknown> = {};
  if (models !== undefined) {
    if (!isPlainObject(models)) {
      issues.push({ path: ["models"], message: "expected an object of models by name" });
      return out;
    }
    table = models;
    for (const [k, v] of Object.entries(table))
      if (!isLanguageModel(v) && !hasLanguageModel(v))
        issues.push({
          path: ["models", k],
          message:
            "expected an AI SDK language model (specificationVersion 'v3', doGenerate, doStream) or a provider / provider registry (languageModel(id))",
        });
  }
  const names = Object.keys(table);
  for (const [worker, spec] of workers) {
    if (!isLlmWorker(spec)) continue;
    const at = ["workers", worker, "model"];
    if (spec.model === undefined) {
      issues.push({
        path: at,
        message: `LLM worker '${worker}' has no model: give it 'model' (or program.yaml a default 'model')${names.length ? `; models: ${names.join(", ")}` : ", and createHost({ models })"}`,
      });
      continue;
    }
    const found = findModel(table, spec.model);
    if (typeof found === "string")
      issues.push({ path: at, message: `model '${spec.model}' of worker '${worker}': ${found}` });
    else out.set(worker, { name: spec.model, model: found });
  }
  return out;
}

function findModel(table: Record<string, unknown>, name: string): LanguageModelLike | string {
  const known = Object.keys(table);
  const list = known.length ? `models: ${known.join(", ")}` : "createHost was given no models";
  if (Object.hasOwn(table, name)) {
    const m = table[name];
    return isLanguageModel(m)
      ? m
      : `'${name}' is a provider; name one of its models as '${name}:<id>'`;
  }
  const colon = name.indexOf(":");
  const key = colon > 0 ? name.slice(0, colon) : undefined;
  const provider = key !== undefined && Object.hasOwn(table, key) ? table[key] : undefined;
  if (!hasLanguageModel(provider)) return `not available (${list})`;
  let m: unknown;
  try {
    m = provider.languageModel(name.slice(colon + 1));
  } catch (err) {
    return `not available from '${key}': ${escapeControl(String((err as Error)?.message ?? err)).slice(0, 300)}`;
  }
  return isLanguageModel(m) ? m : `'${key}' did not return a v3 language model`;
}

function isLanguageModel(v: unknown): v is LanguageModelLike {
  if (typeof v !== "object" || v === null) return false;
  const m = v as Record<string, unknown>;
  return (
    m.specificationVersion === "v3" &&
    typeof m.doGenerate === "function" &&
    typeof m.doStream === "function"
  );
}

function hasLanguageModel(v: unknown): v is { languageModel(id: string): unknown } {
  return (
    typeof v === "object" &&
    v !== null &&
    typeof (v as { languageModel?: unknown }).languageModel === "function"
  );
}

// ---------------------------------------------------------------------------
// Serving one call.
// ---------------------------------------------------------------------------

/** What {@link serveModelCall} needs. */
export interface ModelCall {
  kind: "generate" | "stream";
  /** Checked by {@link checkModelCallOptions}. */
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

// ---------------------------------------------------------------------------
// tool_call events.
// ---------------------------------------------------------------------------

/** How a tool call ended, as the next model call reported it. */
export type ToolCallOutcome = "ok" | "error" | "denied" | "unknown";

type ToolCallEvent = Extract<HostEvent, { type: "tool_call" }>;

/**
 * Derives one agent's tool calls host-side: the tool-call parts of its
 * model's answers (tool name, virtual path argument), and their outcomes
 * from the tool-result parts the thread sends with its next call. Only
 * calls the model made are reported, so a thread cannot invent events.
 */
export class ToolCallTracker {
  readonly #pending = new Map<string, { tool: string; path?: string }>();
  readonly #emit: (e: ToolCallEvent) => void;
  readonly #agentId: string;

  constructor(agentId: string, emit: (e: ToolCallEvent) => void) {
    this.#agentId = agentId;
    this.#emit = emit;
  }

  /** Records the tool calls in a model's answer (content parts or stream parts). */
  observeAnswer(parts: unknown): void {
    if (!Array.isArray(parts)) return;
    for (const p of parts) {
      if (!isPlainObject(p) || p.type !== "tool-call") continue;
      if (typeof p.toolCallId !== "string" || typeof p.toolName !== "string") continue;
      if (this.#pending.size >= 10_000) return;
      const entry: { tool: string; path?: string } = {
        tool: escapeControl(p.toolName.slice(0, MAX_NAME_CHARS)),
      };
      const path = pathArgument(p.input);
      if (path !== undefined) entry.path = path;
      this.#pending.set(p.toolCallId, entry);
    }
  }

  /** Reports calls whose results the thread sends back in `prompt`. */
  observePrompt(prompt: unknown): void {
    if (!Array.isArray(prompt) || this.#pending.size === 0) return;
    for (const m of prompt) {
      if (!isPlainObject(m) || !Array.isArray(m.content)) continue;
      for (const part of m.content) {
        if (!isPlainObject(part) || part.type !== "tool-result") continue;
        const id = part.toolCallId;
        const call = typeof id === "string" ? this.#pending.get(id) : undefined;
        if (!call) continue;
        this.#pending.delete(id as string);
        this.#report(call, outcomeOf(part.output));
      }
    }
  }

  /** Reports calls whose results never came back (the loop stopped) as `unknown`. */
  flush(): void {
    for (const call of this.#pending.values()) this.#report(call, "unknown");
    this.#pending.clear();
  }

  #report(call: { tool: string; path?: string }, outcome: ToolCallOutcome): void {
    this.#emit({
      type: "tool_call",
      agentId: this.#agentId,
      tool: call.tool,
      ...(call.path !== undefined ? { path: call.path } : {}),
      outcome,
      time: Date.now(),
    });
  }
}

/** The virtual path a tool call names (`path`, else `source`), escaped for events. */
function pathArgument(input: unknown): string | undefined {
  let args: unknown = input;
  if (typeof input === "string") {
    if (input.length > 1024 * 1024) return undefined;
    try {
      args = JSON.parse(input);
    } catch {
      return undefined;
    }
  }
  if (!isPlainObject(args)) return undefined;
  const p = typeof args.path === "string" ? args.path : args.source;
  return typeof p === "string" ? escapeControl(p.slice(0, 4096)) : undefined;
}

/** `error` for an error output or a tool's own `Error…` text, `denied`, else `ok`. */
function outcomeOf(output: unknown): ToolCallOutcome {
  if (!isPlainObject(output)) return "unknown";
  if (output.type === "error-text" || output.type === "error-json") return "error";
  if (output.type === "execution-denied") return "denied";
  if (
    output.type === "text" &&
    typeof output.value === "string" &&
    output.value.startsWith("Error")
  )
    return "error";
  return "ok";
}
