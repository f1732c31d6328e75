/**
 * `mountbox/ai-sdk`: mountbox's tools as a Vercel AI SDK `ToolSet`, for hosts
 * that run their own `generateText` / `streamText` loop in-process.
 *
 * `ai` (>= 6) is an optional peer dependency: it is imported when
 * {@link createSandboxTools} is first called, so importing this module never
 * fails, and a missing `ai` is an error that says what to install.
 */
import type { Tool, ToolExecutionOptions, ToolSet } from "ai";
import {
  createToolDefinitions,
  type ToolDefinition,
  type ToolName,
  type ToolOptions,
  type ToolSandbox,
} from "../tools/index.js";

/** Decides per call whether a tool call needs the user's approval (the SDK's approval flow). */
export type NeedsApprovalFunction = (
  toolName: ToolName,
  input: unknown,
  options: { toolCallId: string },
) => boolean | PromiseLike<boolean>;

/** Options of {@link createSandboxTools}: those of the tool layer, plus approvals. */
export interface SandboxToolsOptions extends ToolOptions {
  /**
   * Passed to each tool's `needsApproval`: `true` for every tool, a record
   * per tool name (e.g. `{ write_file: true, delete_file: true }`), or a
   * function of the tool name and its input. Default: no approvals.
   */
  needsApproval?: boolean | Partial<Record<ToolName, boolean>> | NeedsApprovalFunction | undefined;
}

/** What to install when `ai` is missing. */
export const MISSING_AI_MESSAGE =
  "mountbox/ai-sdk needs the Vercel AI SDK, an optional peer dependency: install it with `npm install ai@^6` (any version >= 6).";

type AiModule = typeof import("ai");

/**
 * The AI SDK tools over `sandbox` (an in-process `Sandbox` or `ctx.sandbox`):
 * one `tool({ description, inputSchema, execute })` per tool the tool layer
 * defines, keyed by name (`read_file`, `edit_file`, …). Every `execute`
 * resolves with text, refusals included, so the model sees what was refused
 * and can adapt.
 * @throws Error naming what to install when `ai` is missing
 * @throws ConfigError for bad `opts.tools`
 */
export async function createSandboxTools(
  sandbox: ToolSandbox,
  opts: SandboxToolsOptions = {},
): Promise<ToolSet> {
  const ai = await loadAi();
  const defs = await createToolDefinitions(sandbox, opts);
  const tools: ToolSet = {};
  for (const def of defs) tools[def.name] = toAiTool(ai, def, opts.needsApproval);
  return tools;
}

/** Imports `ai`, turning "not installed" into an error that says what to install. */
async function loadAi(): Promise<AiModule> {
  let mod: AiModule;
  try {
    mod = await import("ai");
  } catch (err) {
    if (isNotFound(err, "ai")) throw new Error(MISSING_AI_MESSAGE, { cause: err });
    throw err;
  }
  if (typeof mod.tool !== "function") {
    throw new Error(`${MISSING_AI_MESSAGE} The installed 'ai' has no tool() function.`);
  }
  return mod;
}

function isNotFound(err: unknown, specifier: string): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  const message = err instanceof Error ? err.message : "";
  return (
    (code === "ERR_MODULE_NOT_FOUND" || code === "MODULE_NOT_FOUND") &&
    message.includes(`'${specifier}'`)
  );
}

function toAiTool(
  ai: AiModule,
  def: ToolDefinition,
  needsApproval: SandboxToolsOptions["needsApproval"],
): Tool {
  const approval = approvalFor(def.name, needsApproval);
  return ai.tool<Record<string, unknown>, string>({
    description: def.description,
    inputSchema: def.inputSchema,
    execute: (input: Record<string, unknown>, options: ToolExecutionOptions) =>
      def.execute(input, { signal: options.abortSignal }),
    ...(approval === undefined ? {} : { needsApproval: approval }),
  }) as Tool;
}

function approvalFor(
  name: ToolName,
  needsApproval: SandboxToolsOptions["needsApproval"],
): Tool<Record<string, unknown>, string>["needsApproval"] {
  if (needsApproval === undefined) return undefined;
  if (typeof needsApproval === "boolean") return needsApproval;
  if (typeof needsApproval === "function") {
    return (input, options) => needsApproval(name, input, { toolCallId: options.toolCallId });
  }
  return needsApproval[name];
}
