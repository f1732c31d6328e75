/**
 * The port's `runCommand`: a worker's `ctx.runCommand(command, { timeoutMs })`,
 * checked here; the host runs it under OS confinement.
 */
import { arity, asString, type Handler, isPlainObject, quoteKey } from "./arg-checks.js";
import type { PortServerOptions } from "./port-options.js";
import type { RunCommandRequest } from "./protocol.js";

/** Longest command `runCommand` accepts. */
const MAX_COMMAND_CHARS = 64 * 1024;

/** The `runCommand` operation, served by the owner's `onRunCommand`. */
export function commandHandler(
  onRunCommand: NonNullable<PortServerOptions["onRunCommand"]>,
): Handler {
  return {
    check(args) {
      const bad = arity(args, 1, 2);
      if (bad) return bad;
      const [command, options] = args;
      if (typeof command !== "string" || command === "" || command.length > MAX_COMMAND_CHARS)
        return `command must be a non-empty string of at most ${MAX_COMMAND_CHARS} characters`;
      const out: RunCommandRequest = {};
      if (options !== undefined) {
        if (!isPlainObject(options)) return "options must be an object";
        for (const k in options) {
          if (k !== "timeoutMs") return `unknown option ${quoteKey(k)}`;
          const t = options[k];
          if (t === undefined) continue;
          if (typeof t !== "number" || !Number.isInteger(t) || t < 1)
            return "timeoutMs must be a positive integer";
          out.timeoutMs = t;
        }
      }
      return { args: [command, out], bytes: command.length * 2 };
    },
    run: (_sb, a) => onRunCommand(asString(a[0]), a[1] as RunCommandRequest),
  };
}
