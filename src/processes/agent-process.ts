/**
 * Runs one agent in its own confined Node process (`isolation: "process"`)
 * and supervises it exactly as a thread is supervised (`supervisor.ts`):
 * the same port server, gate, scheduler, approvals, audit and budgets,
 * over the process's channel instead of a `MessagePort`. A process that
 * throws, exits, crashes, runs out of memory, floods its channel, runs past
 * its deadline or is aborted is killed with everything it started, and
 * reported with an {@link AgentThreadError}; the host goes on.
 */
import { pathToFileURL } from "node:url";
import { hideHostPaths } from "../errors/index.js";
import type { FrameViolation } from "../port/frames.js";
import { superviseAgent } from "../threads/supervisor.js";
import type { AgentThreadOptions, AgentThreadResult } from "../threads/thread-options.js";
import { createOutputSink } from "../threads/thread-output.js";
import { resolveModulePath } from "../threads/thread-start.js";
import { type AgentProcess, type ProcessEnd, startAgentProcess } from "./agent-process-handle.js";
import { type PlannedLaunch, type ProcessConfinement, planAgentProcess } from "./process-code.js";

/** Options of {@link runAgentProcess}: a thread's, plus how processes are confined. */
export interface AgentProcessOptions extends AgentThreadOptions {
  confinement: ProcessConfinement;
  /** A warm spare started (and its module imported) for this worker, used once. */
  processSpare?: AgentProcess;
  /** The launch planned for this worker at setup (else planned now). */
  plan?: PlannedLaunch;
}

/**
 * Starts a confined process for one agent (or boots a warm spare), runs its
 * module's worker function with `input`, and resolves with its result. The
 * process is killed afterwards, whatever happened.
 * @throws AgentThreadError when the agent fails (the host is unaffected)
 */
export async function runAgentProcess(opts: AgentProcessOptions): Promise<AgentThreadResult> {
  let exitReported = false;
  let started = false;
  const reportExit = (): void => {
    if (exitReported) return;
    exitReported = true;
    opts.onThreadExit?.();
  };
  try {
    const modulePath = resolveModulePath(opts.module);
    return await superviseAgent(opts, "channel", (s) => {
      const proc =
        opts.processSpare ??
        startAgentProcess(
          opts.plan ??
            planAgentProcess(opts.confinement, {
              module: modulePath,
              dependencies: opts.dependencies ?? [],
              sandbox: opts.sandbox,
              network: opts.network === true,
              maxOldGenerationSizeMb: opts.resourceLimits?.maxOldGenerationSizeMb,
            }),
          opts.maxMessageBytes,
        );
      started = true;
      const sink = createOutputSink(s.out, s.maxOutput, s.offerOutput);
      proc.attach({
        onOutput: (stream, text) => sink.push(stream, text),
        // Only what its runtime sends: anything else is not a slip.
        onControl: (msg) =>
          isControlMessage(msg)
            ? s.onControl(msg)
            : s.fail(
                "threw",
                "The agent sent a message on its channel that its runtime never sends; it was stopped.",
              ),
        onViolation: (v) => s.fail("oversize", describeViolation(v)),
        onControlError: () =>
          s.fail(
            "threw",
            "The agent sent a message that could not be read (malformed, or too deeply nested).",
          ),
      });
      void proc.exited.then((end) => {
        sink.end("stdout");
        sink.end("stderr");
        reportExit();
        s.fail(end.reason, describeEnd(end, s.out.stderr));
      });
      const boot = {
        moduleUrl: pathToFileURL(modulePath).href,
        input: opts.input,
        port: null,
        ...(opts.attachments && opts.attachments.length > 0
          ? { attachments: opts.attachments }
          : {}),
      };
      try {
        proc.control.postMessage({ kind: "boot", boot });
      } catch (err) {
        proc.kill();
        throw err;
      }
      return {
        body: {
          tellAbort: (reason) => proc.control.postMessage({ kind: "abort", reason }),
          end: () => proc.kill(),
        },
        sandboxPort: proc.sandbox,
      };
    });
  } finally {
    if (!started) reportExit();
  }
}

/** What an agent's process ending without a result means, in its failure's message. */
function describeEnd(end: ProcessEnd, stderr: string): string {
  if (end.reason === "out_of_memory") return "The agent ran out of memory and was stopped.";
  // bubblewrap's own complaint, before the agent's runtime ever spoke (the
  // agent could print such a line itself, but only after it has).
  const bwrap = end.silent ? /^bwrap: (.*)$/m.exec(stderr) : null;
  if (bwrap !== null)
    return `The agent's process could not be started: ${hideHostPaths(bwrap[1]!)}`;
  return end.reason === "crashed"
    ? `The agent's process crashed (exit status ${end.exitCode}).`
    : `The agent's process exited (code ${end.exitCode}) without a result.`;
}

/** Why a frame stopped the agent. */
function describeViolation(v: FrameViolation): string {
  switch (v.kind) {
    case "oversize":
      return `The agent sent a message of ${v.bytes} bytes on its channel; it was stopped.`;
    case "no_lane":
      return "The agent sent a message for no port on its channel; it was stopped.";
    case "unexpected":
      return "The agent's process sent a message before it was given an agent; it was stopped.";
    case "stalled":
      return "The agent began a message on its channel and did not finish it; it was stopped.";
    case "refused":
      return `The agent sent a message the host will not read (${v.reason}); it was stopped.`;
  }
}

/** The three kinds of control message a process's runtime sends. */
function isControlMessage(msg: unknown): boolean {
  const kind = (msg as { kind?: unknown } | null)?.kind;
  return kind === "log" || kind === "result" || kind === "error";
}
