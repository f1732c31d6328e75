/**
 * `tool_call` events of an LLM agent (DESIGN §8): {@link ToolCallTracker}
 * derives them from what the model asked for and what the next call
 * reports back.
 */
import { escapeControl } from "../errors/index.js";
import type { HostEvent } from "../host/host-types.js";
import { isPlainObject } from "../port/arg-checks.js";
import { MAX_NAME_CHARS } from "./plain-data.js";

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
