/**
 * Language models of specification v4 (AI SDK 7, `@ai-sdk/provider` 4)
 * held by the host (issue 20). The port speaks v3 — the thread's proxy is a
 * v3 model, which AI SDK 7 in the thread adapts itself — so the host turns a
 * checked v3 request into v4 for a v4 model, and its answer back into v3:
 * the inverse of AI SDK 7's own `asLanguageModelV4` adapter. The two
 * versions differ only in how file data is held (v4 wraps it:
 * `{ type: "data", data }`) and in a few v4-only parts, left out here.
 */

type Obj = Record<string, unknown>;

const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

/** v4 content and stream parts a v3 reader has no type for. */
const V4_ONLY_PARTS = new Set(["reasoning-file", "custom", "ping"]);

/**
 * The v4 form of checked v3 call options: file parts' data as `{ type:
 * "data", data }`, tool results' `file-data` / `image-data` items as v4
 * `file` items. A fresh object; `options` is not changed.
 */
export function toV4Options(options: Obj): Obj {
  if (!Array.isArray(options.prompt)) return options;
  const prompt = options.prompt.map((m: unknown) => {
    if (!isObj(m) || !Array.isArray(m.content)) return m;
    return { ...m, content: m.content.map(toV4PromptPart) };
  });
  return { ...options, prompt };
}

function toV4PromptPart(part: unknown): unknown {
  if (!isObj(part)) return part;
  if (part.type === "file") return { ...part, data: { type: "data", data: part.data } };
  if (part.type === "tool-result" && isObj(part.output) && part.output.type === "content") {
    const value = Array.isArray(part.output.value) ? part.output.value : [];
    return { ...part, output: { ...part.output, value: value.map(toV4ContentItem) } };
  }
  return part;
}

function toV4ContentItem(item: unknown): unknown {
  if (!isObj(item) || (item.type !== "file-data" && item.type !== "image-data")) return item;
  return {
    type: "file",
    data: { type: "data", data: item.data },
    mediaType: item.mediaType,
    ...(item.filename !== undefined ? { filename: item.filename } : {}),
  };
}

/**
 * The v3 form of a v4 answer's content (or stream) parts: a file's data
 * unwrapped (bytes or base64 text; a file given by URL or reference is left
 * out, v3 has no place for it), v4-only parts left out.
 */
export function fromV4Parts(parts: unknown): unknown {
  if (!Array.isArray(parts)) return parts;
  const out: unknown[] = [];
  for (const p of parts) {
    const v3 = fromV4Part(p);
    if (v3 !== undefined) out.push(v3);
  }
  return out;
}

/** One part in v3 form, or undefined for a part v3 cannot hold. */
export function fromV4Part(p: unknown): unknown {
  if (!isObj(p)) return p;
  if (typeof p.type === "string" && V4_ONLY_PARTS.has(p.type)) return undefined;
  if (p.type !== "file") return p;
  const data = p.data;
  if (!isObj(data)) return p;
  if (data.type !== "data") return undefined;
  return { ...p, data: data.data };
}
