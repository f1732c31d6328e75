/**
 * The model of an LLM agent's thread: a proxy `LanguageModelV3` whose
 * `doGenerate` / `doStream` cross the port to the host, which holds the real
 * model (and its API key) and picks it from the worker's spec. The thread
 * sends plain call options (no abort signal, headers or functions) and gets
 * plain data back; a stream is read to its end host-side and re-emitted here.
 */
import type {
  LanguageModelV3,
  LanguageModelV3CallOptions,
  LanguageModelV3GenerateResult,
  LanguageModelV3StreamPart,
} from "@ai-sdk/provider";
import { MODEL_CALL_KEYS, MODEL_GENERATE_OP, MODEL_STREAM_OP } from "../src/port/protocol.js";
import { type DataSnapshot, matchesSnapshot, takeSnapshot } from "./data-snapshot.js";

/** Sends one model operation on the agent's port; resolves with the host's reply. */
export type ModelCallFunction = (op: string, options: Record<string, unknown>) => Promise<unknown>;

/**
 * Where the thread entry puts the model call function on `ctx` (a registry
 * symbol, not part of the public context). The host serves model operations
 * for LLM workers only.
 */
export const MODEL_CALL: unique symbol = Symbol.for("mountbox.modelCall") as never;

/** Sends one MCP tool call on the agent's port; resolves with the tool's content as text. */
export type McpCallFunction = (
  server: string,
  tool: string,
  args: Record<string, unknown>,
) => Promise<string>;

/** Where the thread entry puts the MCP call function on `ctx` (served for LLM workers only). */
export const MCP_CALL: unique symbol = Symbol.for("mountbox.mcpCall") as never;

/** Creates the proxy model that sends its calls through `call`. */
export function createProxyModel(call: ModelCallFunction): LanguageModelV3 {
  /**
   * The tools the host holds from an earlier call (a snapshot: a caller
   * changing its objects later changes nothing here): a step that sends
   * equal tools sends `reuseTools` instead.
   */
  let hostTools: DataSnapshot | undefined;
  /** Calls that sent tools in full so far: only the latest one's tools are the host's. */
  let fullSends = 0;
  const send = async (op: string, options: LanguageModelV3CallOptions): Promise<unknown> => {
    // Compared before any other work: most steps send the same tools, in
    // fresh objects (the SDK builds them each step). A walk that builds no
    // text: JSON text of a dozen schemas cost more than the rest of the
    // call's own work on this side.
    const tools = options.tools;
    const same =
      tools !== undefined && hostTools !== undefined && matchesSnapshot(tools, hostTools);
    const wire = toWireOptions(same ? { ...options, tools: undefined } : options);
    if (same) wire.reuseTools = true;
    let sent: DataSnapshot | undefined;
    let mine = 0;
    if (!same && Array.isArray(wire.tools)) {
      // A snapshot of what the host is given (the caller may change its
      // objects later). Until this call is answered, the host's tools are
      // not known here: a call sent meanwhile sends its tools in full.
      sent = takeSnapshot(wire.tools);
      hostTools = undefined;
      mine = ++fullSends;
    }
    try {
      const r = await call(op, wire);
      // A later call that sent tools in full is the one the host now holds.
      if (sent !== undefined && mine === fullSends) hostTools = sent;
      return r;
    } catch (err) {
      // The host may not have taken these tools: send them in full next time.
      hostTools = undefined;
      throw err;
    }
  };
  return {
    specificationVersion: "v3",
    provider: "mountbox.host",
    modelId: "host-held",
    // The host's model fetches URLs itself if it can; the thread has no network.
    supportedUrls: {},
    async doGenerate(options: LanguageModelV3CallOptions): Promise<LanguageModelV3GenerateResult> {
      options.abortSignal?.throwIfAborted();
      const r = (await send(MODEL_GENERATE_OP, options)) as Record<string, unknown>;
      return { ...r, response: reviveResponse(r.response) } as LanguageModelV3GenerateResult;
    },
    async doStream(options: LanguageModelV3CallOptions) {
      options.abortSignal?.throwIfAborted();
      const r = (await send(MODEL_STREAM_OP, options)) as { parts: unknown[] };
      const parts = r.parts.map(revivePart);
      return {
        stream: new ReadableStream<LanguageModelV3StreamPart>({
          start(controller) {
            for (const p of parts) controller.enqueue(p);
            controller.close();
          },
        }),
      };
    },
  };
}

/**
 * The call options as plain data: known keys only. The SDK's options are
 * plain already (prompt, JSON schemas), so they are sent as they are after a
 * scan that allocates nothing; only options holding a function, Date or URL
 * are rebuilt (functions dropped, dates as ISO strings, URLs refused).
 */
function toWireOptions(options: LanguageModelV3CallOptions): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of MODEL_CALL_KEYS) {
    const v = options[k];
    if (v === undefined || typeof v === "function") continue;
    out[k] = isPlainData(v, 0) ? v : toWire(v, k);
  }
  return out;
}

/** True if `v` clones as itself: primitives, byte arrays, arrays and plain objects of them. */
function isPlainData(v: unknown, depth: number): boolean {
  if (v === null) return true;
  const t = typeof v;
  if (t === "string" || t === "number" || t === "boolean" || t === "undefined") return true;
  if (t !== "object" || depth > 100) return false;
  if (v instanceof Uint8Array) return true;
  if (Array.isArray(v)) {
    for (const x of v) if (!isPlainData(x, depth + 1)) return false;
    return true;
  }
  const proto = Object.getPrototypeOf(v);
  if (proto !== Object.prototype && proto !== null) return false;
  for (const k in v as Record<string, unknown>)
    if (!isPlainData((v as Record<string, unknown>)[k], depth + 1)) return false;
  return true;
}

function toWire(v: unknown, at: string): unknown {
  if (v === null || typeof v !== "object") return typeof v === "function" ? undefined : v;
  if (v instanceof Uint8Array) return v;
  if (v instanceof URL)
    throw new TypeError(
      `A file given by URL (${at}) cannot be sent to the host's model from an agent thread; pass its bytes instead.`,
    );
  if (v instanceof Date) return v.toISOString();
  if (Array.isArray(v)) return v.map((x) => toWire(x, at) ?? null);
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) {
    const w = toWire(x, at);
    if (w !== undefined) out[k] = w;
  }
  return out;
}

/** `timestamp` back to the Date the SDK expects. */
function reviveResponse(r: unknown): unknown {
  if (typeof r !== "object" || r === null) return r;
  const t = (r as { timestamp?: unknown }).timestamp;
  return typeof t === "string" ? { ...r, timestamp: new Date(t) } : r;
}

function revivePart(p: unknown): LanguageModelV3StreamPart {
  const part = p as { type?: unknown; error?: unknown };
  if (part.type === "response-metadata") return reviveResponse(p) as LanguageModelV3StreamPart;
  // The host sends a stream's error as its message; the SDK expects an error value.
  if (part.type === "error") return { type: "error", error: new Error(String(part.error)) };
  return p as LanguageModelV3StreamPart;
}
