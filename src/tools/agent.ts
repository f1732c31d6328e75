/**
 * The tools that reach beyond file I/O, offered only when the caller passes
 * the function that does the work: `shell` (`opts.runCommand`) and
 * `call_worker` (`opts.delegate`).
 */
import { z } from "zod";
import { capText, defineTool } from "./format.js";
import type { DelegateFunction, RunCommandFunction, ToolDefinition, ToolEnv } from "./types.js";

/** Longest `timeoutMs` a model may ask for (10 minutes). */
const MAX_SHELL_TIMEOUT_MS = 600_000;

/** `shell`: a command in the OS sandbox. */
export function shellTool(env: ToolEnv, runCommand: RunCommandFunction): ToolDefinition {
  const max = env.limits.outputMaxChars;
  const areas =
    env.description.readable.length === 0 ? "none" : env.description.readable.join(", ");
  return defineTool({
    name: "shell",
    description: `Run a shell command (sh -c) in an isolated sandbox. The working directory is the sandbox root; the sandbox's files are at their virtual paths relative to it (readable: ${areas}), and only the writable paths can be changed. There is no network unless the host allowed it, and nothing of the host's environment. Returns the exit code, stdout and stderr (cut at ${max} characters each). Default timeout 60 s.`,
    inputSchema: z.strictObject({
      command: z.string().min(1).describe("The command line, e.g. 'npm test'"),
      timeoutMs: z
        .number()
        .int()
        .min(1)
        .max(MAX_SHELL_TIMEOUT_MS)
        .optional()
        .describe("Time limit in ms (default 60000)"),
    }),
    annotations: { readOnlyHint: false, destructiveHint: true },
    async run(a, ctx) {
      const opts: { timeoutMs?: number; signal?: AbortSignal } = {};
      if (a.timeoutMs !== undefined) opts.timeoutMs = a.timeoutMs;
      if (ctx.signal) opts.signal = ctx.signal;
      const r = await runCommand(a.command, opts);
      const lines = [`exit code: ${r.exitCode}${r.timedOut ? " (timed out)" : ""}`];
      lines.push(`stdout:\n${capText(r.stdout, max, "stdout")}`);
      if (r.stderr !== "") lines.push(`stderr:\n${capText(r.stderr, max, "stderr")}`);
      for (const note of r.notes ?? []) lines.push(`note: ${note}`);
      return lines.join("\n");
    },
  });
}

/** `call_worker`: hands a task to another worker and returns its result. */
export function callWorkerTool(env: ToolEnv, delegate: DelegateFunction): ToolDefinition {
  const max = env.limits.outputMaxChars;
  const workers = env.opts.workers ?? [];
  const list =
    workers.length === 0
      ? ""
      : ` Workers you can call: ${workers.map((w) => (w.description ? `${w.name} (${w.description})` : w.name)).join("; ")}.`;
  return defineTool({
    name: "call_worker",
    description: `Hand a task to another worker (an agent with its own, narrower sandbox) and get its result as text. Pass the worker's name, its input (usually the task as a string), and optionally attachments: virtual paths of your files to hand to it.${list}`,
    inputSchema: z.strictObject({
      worker: z.string().min(1).describe("Name of the worker to call"),
      input: z.unknown().describe("The worker's input: usually the task as a string"),
      attachments: z
        .array(z.string())
        .optional()
        .describe("Virtual paths of files to hand to the worker"),
    }),
    annotations: { readOnlyHint: false, destructiveHint: true },
    async run(a) {
      const opts: { attachments?: string[] } = {};
      if (a.attachments !== undefined) opts.attachments = a.attachments;
      const result = await delegate(a.worker, a.input, opts);
      const text =
        typeof result === "string"
          ? result
          : result === undefined
            ? "(no result)"
            : // Compact: indenting a deeply nested result of 1 MB made a
              // string of hundreds of MB (found by an adversarial review).
              (JSON.stringify(result) ?? String(result));
      return capText(text, max, "The worker's result");
    },
  });
}
