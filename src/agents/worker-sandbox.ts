/**
 * How a worker's `sandbox` key narrows the sandbox it receives (DESIGN §3):
 * no key → unchanged; only `restrict`/`readonly` → `restrict()`; any
 * `allow*` or `inherit` → `restrict()` first if asked, then `derive()`
 * (with `inherit` defaulting to false); `secrets` are added to the
 * received sandbox's by whichever of the two applies. Used for a callee's
 * configured narrowing and again for the call site's.
 */
import { configError, quotePath } from "../errors/index.js";
import type { WorkerSandboxSpec } from "../host/host-types.js";
import type { Sandbox } from "../sandbox/sandbox.js";

const KEYS = new Set(["restrict", "readonly", "allowRead", "allowWrite", "inherit", "secrets"]);

/**
 * Applies a worker sandbox spec to `sandbox`. The spec may come from a
 * hostile worker (the call site), so its shape is checked here; values are
 * checked by `restrict()`/`derive()`.
 * @throws ConfigError for a malformed spec, SandboxPermissionEscalationError for a widening one
 */
export function applyWorkerSandbox(sandbox: Sandbox, spec: unknown): Sandbox {
  if (spec === undefined || spec === null) return sandbox;
  if (
    typeof spec !== "object" ||
    Array.isArray(spec) ||
    Object.getPrototypeOf(spec) !== Object.prototype
  ) {
    throw configError([
      {
        path: ["sandbox"],
        message:
          "expected an object with restrict, readonly, allowRead, allowWrite, inherit or secrets",
      },
    ]);
  }
  const s = spec as Record<string, unknown>;
  const unknown = Object.keys(s).filter((k) => !KEYS.has(k));
  if (unknown.length > 0) {
    throw configError(
      unknown.map((k) => ({ path: ["sandbox", k], message: `unknown key ${quotePath(k)}` })),
    );
  }
  const w = s as WorkerSandboxSpec;
  const narrowing =
    w.allowRead !== undefined || w.allowWrite !== undefined || w.inherit !== undefined;
  let out = sandbox;
  // `secrets` only: a restrict to `/`, which keeps everything else.
  const restricting =
    w.restrict !== undefined ||
    (!narrowing && (w.readonly !== undefined || w.secrets !== undefined));
  if (restricting) {
    const opts: Parameters<Sandbox["restrict"]>[0] = {};
    if (w.restrict !== undefined) opts.restrict = w.restrict;
    if (w.readonly !== undefined) opts.readonly = w.readonly;
    if (w.secrets !== undefined) opts.secrets = w.secrets;
    out = out.restrict(opts);
  }
  if (!narrowing) return out;
  const derive: Parameters<Sandbox["derive"]>[0] = { inherit: w.inherit ?? false };
  if (w.allowRead !== undefined) derive.allowRead = w.allowRead;
  if (w.allowWrite !== undefined) derive.allowWrite = w.allowWrite;
  if (w.readonly !== undefined) derive.readonly = w.readonly;
  if (w.secrets !== undefined && !restricting) derive.secrets = w.secrets;
  return out.derive(derive);
}
