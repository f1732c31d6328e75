/**
 * The port's `git`: a worker's `ctx.git(tool, args)` — a git tool's name
 * and its arguments, checked here (a hostile thread may send anything); the
 * host checks the arguments against the tool's schema and runs git.
 */
import { GIT_TOOL_NAMES, type GitToolName } from "../tools/types.js";
import { arity, type Handler, isPlainObject } from "./arg-checks.js";
import type { PortServerOptions } from "./port-options.js";

/** Most bytes of a call's arguments as JSON (strings count 2 per code unit). */
export const MAX_GIT_ARGS_BYTES = 1024 * 1024;

/** The `git` operation, served by the owner's `onGit`. */
export function gitHandler(onGit: NonNullable<PortServerOptions["onGit"]>): Handler {
  return {
    check(args) {
      const bad = arity(args, 1, 2);
      if (bad) return bad;
      const [tool, input] = args;
      if (typeof tool !== "string" || !(GIT_TOOL_NAMES as readonly string[]).includes(tool))
        return `tool must be one of ${GIT_TOOL_NAMES.join(", ")}`;
      if (input !== undefined && !isPlainObject(input)) return "arguments must be a plain object";
      // A JSON copy: plain data only, bounded, and nothing the thread can still change.
      let json: string | undefined;
      try {
        json = JSON.stringify(input ?? {});
      } catch {
        return "arguments must be plain JSON data";
      }
      if (json === undefined || json.length * 2 > MAX_GIT_ARGS_BYTES)
        return `arguments must be at most ${MAX_GIT_ARGS_BYTES} bytes as JSON`;
      return { args: [tool, JSON.parse(json)], bytes: json.length * 2 };
    },
    run: (_sb, a) => onGit(a[0] as GitToolName, a[1] as Record<string, unknown>),
  };
}
