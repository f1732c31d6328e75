/**
 * The checks of a model request (DESIGN §8): {@link checkModelCallOptions}
 * checks and copies every field a hostile thread sends with
 * `model.generate` / `model.stream`; nothing else reaches the real model.
 */

import { isPlainObject } from "../port/arg-checks.js";
import { MODEL_CALL_KEYS } from "../port/protocol.js";
import { checkPrompt } from "./model-prompt-checks.js";
import { type Budget, copyData, isShortText, size } from "./plain-data.js";

/** Most bytes of one model request (strings count 2 per code unit). */
const MAX_REQUEST_BYTES = 32 * 1024 * 1024;
/** Most tools and stop sequences. */
const MAX_TOOLS = 256;
const MAX_STOP_SEQUENCES = 64;

const CALL_KEYS = new Set<string>(MODEL_CALL_KEYS);

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
