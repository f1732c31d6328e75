/**
 * The allowlist of what a port serves: the file operations and `grep` in a
 * null-prototype table, and the hook operations (delegation, model calls,
 * shell commands, git tools) only where the owner gave the hook.
 */
import type { ModelRequestChecker } from "../models/model-request-checks.js";
import type { Handler } from "./arg-checks.js";
import { commandHandler } from "./command-op.js";
import { delegateHandler } from "./delegate-op.js";
import { FILE_OPS } from "./file-ops.js";
import { gitHandler } from "./git-op.js";
import { GREP_OP } from "./grep-op.js";
import { mcpHandler } from "./mcp-op.js";
import { modelHandler } from "./model-op.js";
import type { PortServerOptions } from "./port-options.js";
import {
  DELEGATE_OP,
  GIT_OP,
  MCP_CALL_OP,
  MODEL_GENERATE_OP,
  MODEL_STREAM_OP,
  RUN_COMMAND_OP,
} from "./protocol.js";

/** The allowlist. A null prototype: no inherited key can ever name a handler. */
export const HANDLERS: Record<string, Handler | undefined> = Object.assign(Object.create(null), {
  ...FILE_OPS,
  grep: GREP_OP,
});

/** Operations served by a hook, each waiting on something other than the host's loop. */
export const AWAITING_OPS = new Set([
  DELEGATE_OP,
  MODEL_GENERATE_OP,
  MODEL_STREAM_OP,
  RUN_COMMAND_OP,
  MCP_CALL_OP,
  GIT_OP,
]);

/** The handler of a hook operation whose hook the owner gave, else undefined. */
export function findHookHandler(
  op: string,
  opts: PortServerOptions,
  checkModel: ModelRequestChecker | undefined,
): Handler | undefined {
  if (op === DELEGATE_OP && opts.onDelegate) return delegateHandler(opts);
  if ((op === MODEL_GENERATE_OP || op === MODEL_STREAM_OP) && opts.onModel && checkModel)
    return modelHandler(op === MODEL_GENERATE_OP ? "generate" : "stream", opts.onModel, checkModel);
  if (op === RUN_COMMAND_OP && opts.onRunCommand) return commandHandler(opts.onRunCommand);
  if (op === MCP_CALL_OP && opts.onMcpCall) return mcpHandler(opts.onMcpCall);
  if (op === GIT_OP && opts.onGit) return gitHandler(opts.onGit);
  return undefined;
}
