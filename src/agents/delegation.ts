/**
 * One delegation (`ctx.delegate`): refused unless the caller may call the
 * worker within `maxDepth` and the host admits one more agent; otherwise the
 * callee's sandbox is narrowed from the caller's (callee config, then call
 * site), its attachments are read through the caller's gate, and it runs
 * under the caller's deadline and signal.
 */
import { portTargets } from "../approvals/gate-targets.js";
import { DelegationRefusedError, escapeControl, SandboxError } from "../errors/index.js";
import type { WorkerSpec } from "../host/host-types.js";
import type { Attachment } from "../port/protocol.js";
import type { Admission } from "./admission.js";
import { type Agent, createAgent, pickDeadline } from "./agent.js";
import { checkCallOptions, readAttachments } from "./delegation-options.js";
import { toVirtualOrUndefined } from "./operation-report.js";
import { applyWorkerSandbox } from "./worker-sandbox.js";

/** What a delegation needs from the agents of its host. */
export interface DelegationContext {
  workers: Map<string, WorkerSpec>;
  maxDepth: number;
  admission: Admission;
  /** A fresh agent id. */
  nextId: () => string;
  /** Runs the callee in its own thread. */
  runAgent: (
    agent: Agent,
    input: unknown,
    parent: Agent,
    attachments: Attachment[] | undefined,
  ) => Promise<unknown>;
}

/** Serves `ctx.delegate` for `caller`: checks, narrows, runs the callee. */
export async function delegate(
  ctx: DelegationContext,
  caller: Agent,
  name: string,
  input: unknown,
  raw: Record<string, unknown>,
): Promise<unknown> {
  const allowed = caller.spec.delegates ?? [];
  if (!allowed.includes(name)) {
    throw new DelegationRefusedError(
      `Worker '${caller.worker}' may not delegate to '${escapeControl(name.slice(0, 100))}'. It may call: ${allowed.length ? allowed.join(", ") : "no workers"}.`,
    );
  }
  const spec = ctx.workers.get(name)!;
  const maxDepth = ctx.maxDepth;
  if (caller.depth + 1 > maxDepth) {
    throw new DelegationRefusedError(
      `Cannot delegate to '${name}': the chain would be ${caller.depth + 1} agents deep (maxDepth ${maxDepth}). Do the work here, or return to your caller.`,
    );
  }
  const callOpts = checkCallOptions(raw);
  const sandbox = applyWorkerSandbox(
    applyWorkerSandbox(caller.sandbox, spec.sandbox),
    callOpts.sandbox,
  );
  ctx.admission.startWaiting(caller);
  let charged = 0;
  try {
    ctx.admission.check(name); // before any costly work (attachments)
    const read = await readGatedAttachments(caller, callOpts.attachments);
    charged = read.charged;
    const child = createAgent(
      {
        id: ctx.nextId(),
        worker: name,
        spec,
        sandbox,
        depth: caller.depth + 1,
        deadline: pickDeadline(caller.deadline, spec.timeoutMs, callOpts.timeoutMs),
      },
      caller.controller.signal,
    );
    return await ctx.runAgent(child, input, caller, read.attachments);
  } finally {
    caller.attachedBytes -= charged;
    ctx.admission.stopWaiting(caller);
  }
}

/**
 * Reads a caller's attachments like its reads: through its gate (each
 * asks approval where a read would) and written to the audit log.
 */
async function readGatedAttachments(
  caller: Agent,
  paths: string[] | undefined,
): ReturnType<typeof readAttachments> {
  const gate = caller.gate;
  if (!gate || !paths || paths.length === 0) return readAttachments(caller, paths);
  const audit = (err: unknown) => {
    const refused = err instanceof SandboxError ? err : undefined;
    for (const p of paths) {
      const v = toVirtualOrUndefined(caller.sandbox, p);
      // Every attachment's line says the read failed; the denial is the
      // refused path's alone (or every one's, when the error names none).
      const mine = refused && (refused.path === undefined || refused.path === (v ?? p));
      gate.audit(
        "readAttachment",
        v,
        err === undefined ? undefined : mine ? refused : { code: refused?.code ?? "io_error" },
      );
    }
  };
  try {
    const sandbox = await gate.check(paths.flatMap((p) => portTargets("readFile", [p])));
    const read = await readAttachments(caller, paths, sandbox);
    audit(undefined);
    return read;
  } catch (err) {
    audit(err);
    throw err;
  }
}
