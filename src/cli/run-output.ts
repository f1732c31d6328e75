/**
 * What `mountbox run` prints without its live view: a line per event that
 * matters, JSON lines, the result and the closing summary — every string
 * an agent could have chosen escaped for a terminal.
 */
import { escapeControl } from "../errors/index.js";
import type { HostEvent } from "../host/host-types.js";

/** Counts for the closing summary. */
export interface RunStats {
  agents: number;
  operations: number;
  denials: number;
  modelSteps: number;
  tokens: number;
}

/**
 * A value as one line of JSON, with the characters JSON leaves raw but a
 * terminal acts on — C1 controls, line and paragraph separators, bidi and
 * other format controls — written as `\\uXXXX` escapes (still the same JSON).
 */
export function toJsonLine(v: unknown): string {
  return JSON.stringify(v).replace(
    /[\u007f-\u009f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff\ufff9-\ufffb]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}

/** Counts `e` into `stats`. */
export function count(stats: RunStats, e: HostEvent): void {
  if (e.type === "agent_started") stats.agents++;
  else if (e.type === "operation") stats.operations++;
  else if (e.type === "denial") stats.denials++;
  else if (e.type === "model_call") {
    stats.modelSteps++;
    stats.tokens += (e.inputTokens ?? 0) + (e.outputTokens ?? 0);
  }
}

/** One line for an event that matters to a person watching, else undefined. */
export function describeEvent(e: HostEvent, names: Map<string, string>): string | undefined {
  const who = (id: string) => escapeControl(names.get(id) ?? id);
  switch (e.type) {
    case "agent_started":
      return `${"  ".repeat(e.depth - 1)}▶ ${escapeControl(e.worker)} started`;
    case "agent_finished":
      return `✔ ${escapeControl(e.worker)} finished (${e.durationMs} ms)`;
    case "agent_failed":
      return `✖ ${escapeControl(e.worker)} failed (${e.reason}): ${escapeControl(e.message)}`;
    case "denial":
      return `✖ ${who(e.agentId)}: ${e.op}${e.path === undefined ? "" : ` ${e.path}`} refused (${e.code})`;
    case "log":
      return e.dropped === undefined
        ? `  ${escapeControl(e.worker)}: ${escapeControl(e.message)}`
        : undefined;
    case "model_call":
      return `  ${escapeControl(e.worker)}: model step, ${e.status}${e.outputTokens === undefined ? "" : ` (${(e.inputTokens ?? 0) + e.outputTokens} tokens)`}`;
    default:
      return undefined;
  }
}

/** A result for a terminal: a string as it is, anything else as indented JSON; line by line escaped. */
export function showValue(v: unknown): string {
  const text = typeof v === "string" ? v : (JSON.stringify(v, null, 2) ?? String(v));
  return text
    .split("\n")
    .map((line) => escapeControl(line))
    .join("\n");
}

/** The closing summary, with the grants given as sandbox blocks. */
export function summarize(
  s: RunStats,
  ms: number,
  suggested: Record<string, { yaml: string }>,
): string {
  const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;
  const lines = [
    `${plural(s.agents, "agent")}, ${plural(s.operations, "operation")}, ${plural(s.denials, "denial")}, ${plural(s.modelSteps, "model step")} (${s.tokens} tokens), ${(ms / 1000).toFixed(1)} s`,
  ];
  const entries = Object.entries(suggested);
  if (entries.length > 0) {
    lines.push("", "Grants given in this run, as sandbox blocks that would make them permanent:");
    for (const [w, b] of entries)
      lines.push(
        `# ${escapeControl(w)}`,
        ...b.yaml
          .trimEnd()
          .split("\n")
          .map((l) => escapeControl(l)),
      );
  }
  return `${lines.join("\n")}\n`;
}
