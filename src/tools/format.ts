/**
 * How every tool turns success and failure into text for a model: one
 * wrapper validates the arguments and catches everything, so a tool never
 * rejects and never shows a host path or a stack trace.
 */
import type { z } from "zod";
import { escapeControl, quotePath, SandboxError, type SandboxErrorCode } from "../errors/index.js";
import type { ToolAnnotations, ToolContext, ToolDefinition, ToolName } from "./types.js";

// Errors from another copy of mountbox (a thread's, a bundled one) fail
// `instanceof`: they are recognised by their code too. Node's own errors carry
// upper-case E-codes and host paths, so they never match.
const CODES: Record<SandboxErrorCode, true> = {
  path_not_in_sandbox: true,
  path_not_writable: true,
  suffix_not_allowed: true,
  file_too_large: true,
  permission_escalation: true,
  invalid_path: true,
  not_found: true,
  already_exists: true,
  secret_withheld: true,
  edit_failed: true,
  approval_denied: true,
  io_error: true,
  invalid_config: true,
  invalid_request: true,
  agent_failed: true,
  delegation_refused: true,
  os_sandbox_unavailable: true,
};

/** True for a mountbox error, from this copy of mountbox or another. */
export function isSandboxError(err: unknown): err is SandboxError {
  if (err instanceof SandboxError) return true;
  if (!(err instanceof Error)) return false;
  const code = (err as { code?: unknown }).code;
  return typeof code === "string" && Object.hasOwn(CODES, code);
}

/** The text a model sees for a refusal or failure: the error's code and message. */
export function formatError(tool: ToolName, path: string | undefined, err: unknown): string {
  if (isSandboxError(err)) return `Error [${err.code}]: ${adaptHints(tool, err.message)}`;
  // Anything else may hold a host path (Node's fs messages do): say only what failed.
  const where = path === undefined ? "" : ` on ${quotePath(path)}`;
  return `Error: ${tool} failed${where} for an unexpected reason. Try again, or try another path.`;
}

/**
 * The sandbox's hints name its API (`listFiles`, `overwrite: true`); a model
 * holding tools needs the tool that does it instead.
 */
const HINTS: [from: string, to: (tool: ToolName) => string][] = [
  ["(use listFiles)", () => "(use list_files)"],
  ["(use readFile)", () => "(use read_file)"],
  [
    "Pass overwrite: true to replace it.",
    (tool) =>
      tool === "move_file"
        ? "Delete it first with delete_file, or choose another destination."
        : "Delete it first, or choose another path.",
  ],
];

function adaptHints(tool: ToolName, message: string): string {
  let out = message;
  for (const [from, to] of HINTS) if (out.includes(from)) out = out.replace(from, to(tool));
  return out;
}

/** Quotes a path the model gave, for a result line (control characters escaped). */
export function showPath(path: string): string {
  return quotePath(path);
}

/** Escapes control characters in text shown back to a model on one line. */
export function oneLine(text: string): string {
  return escapeControl(text);
}

/** Cuts `text` to `max` characters, saying so. */
export function capText(text: string, max: number, what: string): string {
  if (text.length <= max) return text;
  return `${text.slice(0, max)}\n[${what} cut at ${max} of ${text.length} characters.]`;
}

/** What a tool is made of before {@link defineTool} wraps it. */
export interface ToolSpec<S extends z.ZodType> {
  name: ToolName;
  description: string;
  inputSchema: S;
  annotations: ToolAnnotations;
  /** The virtual path an error is about, for the generic message. */
  pathOf?: (args: z.output<S>) => string | undefined;
  run(args: z.output<S>, ctx: ToolContext): Promise<string>;
}

/**
 * Builds a {@link ToolDefinition}: `execute` validates its arguments (a
 * framework may not have), runs the tool, and turns any failure into text.
 */
export function defineTool<S extends z.ZodType>(spec: ToolSpec<S>): ToolDefinition<z.output<S>> {
  return {
    name: spec.name,
    description: spec.description,
    inputSchema: spec.inputSchema as unknown as z.ZodType<z.output<S>>,
    annotations: spec.annotations,
    async execute(args, ctx = {}) {
      // A call without arguments (list_allowed_paths) may arrive as undefined.
      const parsed = spec.inputSchema.safeParse(args ?? {});
      if (!parsed.success) return formatIssues(spec.name, parsed.error);
      let path: string | undefined;
      try {
        path = spec.pathOf?.(parsed.data);
        return await spec.run(parsed.data, ctx);
      } catch (err) {
        return formatError(spec.name, path, err);
      }
    },
  };
}

function formatIssues(tool: ToolName, error: z.ZodError): string {
  const lines = error.issues.map((i) => {
    const at = i.path.length > 0 ? ` (at ${i.path.join(".")})` : "";
    return `- ${oneLine(i.message)}${at}`;
  });
  return `Error [invalid_request]: invalid arguments for ${tool}:\n${lines.join("\n")}`;
}

/** Runs `tasks` at most `limit` at a time, keeping their order. */
export async function mapLimited<T, R>(
  items: readonly T[],
  limit: number,
  task: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const lane = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await task(items[i] as T, i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
  return out;
}
