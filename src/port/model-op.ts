/**
 * The port's model calls (`model.generate`, `model.stream`): every field of
 * the request checked by this agent's model request checker before the host's
 * `onModel` sees it.
 */
import type { ModelRequestChecker } from "../models/model-request-checks.js";
import { arity, type Handler } from "./arg-checks.js";
import type { PortServerOptions } from "./port-options.js";

/** A model call operation, served by the owner's `onModel`. */
export function modelHandler(
  kind: "generate" | "stream",
  onModel: NonNullable<PortServerOptions["onModel"]>,
  checkModel: ModelRequestChecker,
): Handler {
  return {
    check(args) {
      const bad = arity(args, 1, 1);
      if (bad) return bad;
      // Every field checked: the host passes only the accepted ones on.
      const checked = checkModel(args[0]);
      if (typeof checked === "string") return checked;
      return { args: [checked.options], bytes: checked.bytes };
    },
    run: (_sb, a) => onModel(kind, a[0] as Record<string, unknown>),
  };
}
