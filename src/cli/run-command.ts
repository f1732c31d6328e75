/**
 * `mountbox run <program-dir> [worker]`: loads a program folder, runs one
 * of its workers (and whatever it delegates to), prints one line per event
 * that matters (or, with `--json`, every event as a JSON line), the result
 * and a summary. Approvals follow `--approve` (`none` by default: what needs
 * an approval is refused, with the message the agent's model would see).
 *
 * Exit status: 0 on success, 1 on a failed run, 2 on bad usage or config,
 * 130 when interrupted (SIGINT/SIGTERM: every agent stopped, the host
 * closed).
 */
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import type { ApprovalDecision } from "../approvals/approval-types.js";
import { escapeControl, SandboxError } from "../errors/index.js";
import { createHost } from "../host/host.js";
import type { HostEvent } from "../host/host-types.js";
import { loadProgramDefinition } from "../host/load-program.js";
import { type CliIo, UsageError } from "./cli-io.js";

/** Help of `mountbox run`. */
export const RUN_HELP = `Usage: mountbox run <program-dir> [worker] [options]

Runs [worker] of the program in <program-dir> (default: 'main', or the only
worker), with every agent in its own thread or process as program.yaml says.
Prints one line per agent started, finished or failed, per refusal and per
log line, then the result and a summary.

Options:
  --input JSON|@FILE   The worker's input: JSON text, or a file of JSON (default: null)
  --approve none|all   Requests that need an approval (read_approval/write_approval
                       areas, dynamic expansion): refuse them (none, the default)
                       or grant each once (all)
  --audit FILE         Append the audit log (one JSON line per operation, request,
                       decision and denial) to FILE
  --timeout MS         Stop the whole run after MS milliseconds
  --json               One JSON line per event, then {"type":"result",…}
  -h, --help           Show this help

Exit status: 0 on success, 1 if the run failed, 2 on bad usage or a
configuration error, 130 if interrupted (every agent is stopped first).
`;

/** Exit status of an interrupted run (128 + SIGINT, as shells report it). */
const EXIT_INTERRUPTED = 130;

/** Counts for the closing summary. */
interface RunStats {
  agents: number;
  operations: number;
  denials: number;
  modelSteps: number;
  tokens: number;
}

/** Runs `mountbox run`; returns the exit status. */
export async function runRun(argv: readonly string[], io: CliIo): Promise<number> {
  let parsed: ReturnType<typeof parseRunArgs>;
  try {
    parsed = parseRunArgs(argv);
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  const { values, positionals } = parsed;
  if (values.help) {
    io.stdout(RUN_HELP);
    return 0;
  }
  const [dir, named, ...extra] = positionals;
  if (dir === undefined) throw new UsageError("run needs a program folder");
  if (extra.length > 0) throw new UsageError(`unexpected argument '${extra[0]?.slice(0, 40)}'`);
  const approve = values.approve ?? "none";
  if (approve !== "none" && approve !== "all")
    throw new UsageError(`--approve takes 'none' or 'all', not '${approve.slice(0, 20)}'`);
  const timeoutMs = values.timeout === undefined ? undefined : Number(values.timeout);
  if (timeoutMs !== undefined && (!Number.isSafeInteger(timeoutMs) || timeoutMs < 1))
    throw new UsageError("--timeout takes a positive number of milliseconds");
  const input = readInput(values.input);

  const def = await loadProgramDefinition(resolve(dir));
  const workers = Object.keys(def.options.workers);
  const worker =
    named ??
    (workers.includes("main") ? "main" : workers.length === 1 ? (workers[0] as string) : undefined);
  if (worker === undefined || !workers.includes(worker))
    throw new UsageError(
      `${named === undefined ? "name the worker to run" : `no worker named '${escapeControl(named.slice(0, 60))}'`}; workers: ${workers.join(", ") || "none"}`,
    );

  const json = values.json === true;
  const stats: RunStats = { agents: 0, operations: 0, denials: 0, modelSteps: 0, tokens: 0 };
  const names = new Map<string, string>();
  const onEvent = (e: HostEvent) => {
    count(stats, e);
    if (e.type === "agent_started") names.set(e.agentId, e.worker);
    if (json) io.stdout(`${JSON.stringify(e)}\n`);
    else {
      const line = describeEvent(e, names);
      if (line !== undefined) io.stdout(`${line}\n`);
    }
  };
  const host = await createHost({
    ...def.options,
    onEvent,
    onApproval: (): ApprovalDecision => (approve === "all" ? "once" : "deny"),
    ...(values.audit === undefined ? {} : { auditLog: resolve(values.audit) }),
  });
  const stop = new AbortController();
  const interrupt = () => stop.abort();
  process.once("SIGINT", interrupt);
  process.once("SIGTERM", interrupt);
  const started = Date.now();
  try {
    const result = await host.run(worker, input, {
      signal: stop.signal,
      ...(timeoutMs === undefined ? {} : { timeoutMs }),
    });
    await host.close();
    if (json) io.stdout(`${JSON.stringify({ type: "result", ok: true, value: result ?? null })}\n`);
    else {
      io.stdout(`\nResult:\n${showValue(result)}\n`);
      io.stdout(`\n${summarize(stats, Date.now() - started, host.suggestedSandboxes())}`);
    }
    return 0;
  } catch (err) {
    await host.close();
    if (stop.signal.aborted) {
      io.stderr("mountbox: interrupted; every agent was stopped.\n");
      return EXIT_INTERRUPTED;
    }
    if (!(err instanceof SandboxError)) throw err;
    if (json) io.stdout(`${JSON.stringify({ type: "result", ok: false, error: err.toJSON() })}\n`);
    else {
      io.stdout(`\n✖ The run failed: ${err.message}\n`);
      io.stdout(`\n${summarize(stats, Date.now() - started, {})}`);
    }
    return 1;
  } finally {
    process.off("SIGINT", interrupt);
    process.off("SIGTERM", interrupt);
  }
}

function parseRunArgs(argv: readonly string[]) {
  return parseArgs({
    args: [...argv],
    allowPositionals: true,
    strict: true,
    options: {
      input: { type: "string" },
      approve: { type: "string" },
      audit: { type: "string" },
      timeout: { type: "string" },
      json: { type: "boolean" },
      help: { type: "boolean", short: "h" },
    },
  });
}

/** `--input`: JSON text, or `@file` holding JSON; null when absent. */
function readInput(raw: string | undefined): unknown {
  if (raw === undefined) return null;
  let text = raw;
  if (raw.startsWith("@")) {
    try {
      text = readFileSync(resolve(raw.slice(1)), "utf8");
    } catch (err) {
      throw new UsageError(
        `--input: cannot read '${escapeControl(raw.slice(1, 200))}' (${(err as NodeJS.ErrnoException).code ?? "error"})`,
      );
    }
  }
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new UsageError(
      `--input takes JSON (a string is written with quotes: --input '"review src"'), or @FILE`,
    );
  }
}

function count(stats: RunStats, e: HostEvent): void {
  if (e.type === "agent_started") stats.agents++;
  else if (e.type === "operation") stats.operations++;
  else if (e.type === "denial") stats.denials++;
  else if (e.type === "model_call") {
    stats.modelSteps++;
    stats.tokens += (e.inputTokens ?? 0) + (e.outputTokens ?? 0);
  }
}

/** One line for an event that matters to a person watching, else undefined. */
function describeEvent(e: HostEvent, names: Map<string, string>): string | undefined {
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
function showValue(v: unknown): string {
  const text = typeof v === "string" ? v : (JSON.stringify(v, null, 2) ?? String(v));
  return text
    .split("\n")
    .map((line) => escapeControl(line))
    .join("\n");
}

function summarize(s: RunStats, ms: number, suggested: Record<string, { yaml: string }>): string {
  const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;
  const lines = [
    `${plural(s.agents, "agent")}, ${plural(s.operations, "operation")}, ${plural(s.denials, "denial")}, ${plural(s.modelSteps, "model step")} (${s.tokens} tokens), ${(ms / 1000).toFixed(1)} s`,
  ];
  const entries = Object.entries(suggested);
  if (entries.length > 0) {
    lines.push("", "Grants given in this run, as sandbox blocks that would make them permanent:");
    for (const [w, b] of entries) lines.push(`# ${escapeControl(w)}`, b.yaml.trimEnd());
  }
  return `${lines.join("\n")}\n`;
}
