/**
 * The prompt of a model request (DESIGN §8): its messages, their parts by
 * role, and the tool results a thread sends back, copied with known keys
 * only.
 */
import { isPlainObject } from "../port/arg-checks.js";
import { type Budget, checkData, isShortText, pickKnown } from "./plain-data.js";

/** Most messages (and parts of a message, items of a tool result's content). */
const MAX_MESSAGES = 10_000;

/** Part types each role may send (LanguageModelV3Message). */
const PART_TYPES: Record<string, ReadonlySet<string>> = {
  user: new Set(["text", "file"]),
  assistant: new Set(["text", "file", "reasoning", "tool-call", "tool-result"]),
  tool: new Set(["tool-result", "tool-approval-response"]),
};

/** Checks a request's `prompt` and returns its copy with known keys only, or what is wrong. */
export function checkPrompt(v: unknown, budget: Budget): { value: unknown } | string {
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
      if (part.type === "file" && !isFileData(part.data))
        return `message ${i}, part ${j}: ${NOT_FILE_DATA}`;
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
  for (const [k, item] of v.value.entries()) {
    if (!isPlainObject(item) || typeof item.type !== "string")
      return `content item ${k}: not an object with a type`;
    const bad = checkContentItem(item);
    if (bad) return `content item ${k}: ${bad}`;
    const copy = pickKnown(item, CONTENT_ITEM_KEYS[item.type] as readonly string[], budget);
    if (typeof copy === "string") return `content item ${k}: ${copy}`;
    items.push(copy);
  }
  out.value = items;
  return out;
}

/**
 * Content items a thread's tool result may hold, and the keys each keeps
 * (issue 18). The rest — `file-url`, `image-url`, `file-id`,
 * `image-file-id`, `custom` — are refused: a URL would make the provider
 * (or the host) fetch what the thread names, and could carry data out in
 * its query; a provider file id reaches files of the host's account that
 * the agent was never given. A thread sends the data itself.
 */
const CONTENT_ITEM_KEYS: Record<string, readonly string[]> = {
  text: ["type", "text"],
  "file-data": ["type", "data", "mediaType", "filename"],
  "image-data": ["type", "data", "mediaType"],
};

/** Base64 (standard or URL-safe, line breaks allowed): never a URL. */
const BASE64 = /^[A-Za-z0-9+/=_\-\s]*$/;
const NOT_FILE_DATA =
  "data must be bytes or base64 text; a URL is not accepted from an agent thread (the provider would fetch it)";

/** True for a file part's data a thread may send: bytes or base64 text. */
function isFileData(v: unknown): boolean {
  return v instanceof Uint8Array || (typeof v === "string" && BASE64.test(v));
}

/** What is wrong with one content item of a tool result, or undefined. */
function checkContentItem(item: Record<string, unknown>): string | undefined {
  const type = item.type as string;
  if (!Object.hasOwn(CONTENT_ITEM_KEYS, type))
    return `type ${JSON.stringify(type.slice(0, 64))} is not accepted from an agent thread (URLs and provider file ids never are); send "text", or the data itself as "file-data" or "image-data" (base64)`;
  if (type === "text") return typeof item.text === "string" ? undefined : "text must be a string";
  if (typeof item.data !== "string" || !BASE64.test(item.data)) return NOT_FILE_DATA;
  if (!isShortText(item.mediaType)) return "mediaType must be a short string";
  if (item.filename !== undefined && !isShortText(item.filename))
    return "filename must be a short string";
  return undefined;
}
