/**
 * The port's `delegate`: a worker's `ctx.delegate(worker, input, options)`,
 * sized and shape-checked here; the host's delegation decides the rest.
 */
import { measureMessage } from "../threads/message-size.js";
import { arity, asString, type Handler, isPlainObject } from "./arg-checks.js";
import type { PortServerOptions } from "./port-options.js";

/** Most bytes of `ctx.delegate` options accepted (a sandbox spec and attachment paths). */
const MAX_OPTION_BYTES = 1 << 20;

/** The `delegate` operation, served by the owner's `onDelegate`. */
export function delegateHandler(opts: PortServerOptions): Handler {
  return {
    check(args) {
      const bad = arity(args, 2, 3);
      if (bad) return bad;
      const [worker, input, options] = args;
      if (typeof worker !== "string" || worker.length > 256) return "worker must be a name";
      if (options !== undefined && !isPlainObject(options)) return "options must be an object";
      // Validated in full by the host's delegate handler; sized here. A port
      // in the input could not be passed on to the callee's thread.
      let hasPort = false;
      const flag = () => {
        hasPort = true;
      };
      const optionBytes = measureMessage(options, MAX_OPTION_BYTES, undefined, flag);
      if (optionBytes > MAX_OPTION_BYTES) return "options must be at most 1 MiB";
      const bytes = measureMessage(input, Number.MAX_SAFE_INTEGER, undefined, flag) + optionBytes;
      if (hasPort) return "input and options must not contain message ports";
      return { args, bytes };
    },
    run: (_sb, a) =>
      opts.onDelegate?.(asString(a[0]), a[1], (a[2] as Record<string, unknown> | undefined) ?? {}),
  };
}
