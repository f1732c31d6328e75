/**
 * Supervising one agent, whatever runs it (a thread, or a confined process):
 * its sandbox served on its port, what it posts on its control channel read
 * as from a hostile sender, its log budget, its deadline and signal, and
 * exactly one outcome. The thread (`agent-thread.ts`) and the process
 * (`src/processes/agent-process.ts`) only start the agent and say how to
 * tell it to stop and how to end it.
 */
import { type AgentFailure, AgentThreadError } from "../errors/index.js";
import type { PortLike } from "../port/frames.js";
import type { PortServer } from "../port/port-options.js";
import { serveSandbox } from "../port/port-server.js";
import { createFloodGuard, FLOOD_BYTES, FLOOD_MESSAGES, LogBudget } from "./log-budget.js";
import { readThreadMessage } from "./thread-messages.js";
import {
  type AgentLogEntry,
  type AgentThreadOptions,
  type AgentThreadResult,
  pickPortServerOptions,
} from "./thread-options.js";
import { DEFAULT_MAX_OUTPUT_BYTES, type ThreadOutput } from "./thread-output.js";

/** Most log lines kept from one agent in its result (the events get them all). */
const MAX_LOG_LINES = 10_000;
/** Longest delay setTimeout honours (≈ 24.8 days). */
const MAX_TIMER_MS = 2_147_483_647;

/**
 * The abort reason of an agent whose deadline passed. Callees inherit their
 * caller's signal, so the whole subtree fails with reason `timeout` at once,
 * whatever any agent in it catches.
 */
export class DeadlineExceeded extends Error {
  constructor(readonly timeoutMs: number) {
    super(`deadline of ${timeoutMs} ms exceeded`);
    this.name = "DeadlineExceeded";
  }
}

/** What the supervisor needs of a running agent. */
export interface AgentBody {
  /** Asks the agent to stop (its `ctx.signal` aborts); it is ended right after. */
  tellAbort(reason: string): void;
  /** Ends the agent for good (a thread terminated, a process killed). */
  end(): void;
}

/** An agent just started: how to stop it, and the port its sandbox is served on. */
export interface StartedAgent {
  body: AgentBody;
  sandboxPort: PortLike;
}

/** What the starter of an agent hands on to its supervisor. */
export interface Supervision {
  /** What the agent wrote to its stdout and stderr (filled by the starter). */
  readonly out: ThreadOutput;
  /** Its stdout/stderr lines go here (the starter splits them). */
  offerOutput(entry: AgentLogEntry): void;
  /** A message the agent posted on its control channel. */
  onControl(msg: unknown): void;
  /** Ends the agent as failed (first outcome wins). */
  fail(reason: AgentFailure, message: string, cause?: unknown): void;
  /** Cap on each captured stream. */
  readonly maxOutput: number;
  /** True once the agent has an outcome. */
  readonly settled: boolean;
}

/**
 * Supervises the agent `start` makes, serving `opts.sandbox` on the port it
 * hands back, until its one outcome: the result it posts, or a failure (it threw,
 * crashed, exited, flooded, ran past its deadline or was aborted). The agent
 * is ended in every case; the promise settles once every operation it
 * started has ended and been reported. `channel` names where its control
 * messages come from, in failures ("parent port", "channel").
 */
export function superviseAgent(
  opts: AgentThreadOptions,
  channel: string,
  start: (s: Supervision) => StartedAgent,
): Promise<AgentThreadResult> {
  if (opts.signal?.aborted) return Promise.reject(abortFailure(opts.signal.reason, emptyOut()));
  const out = emptyOut();
  const logs: AgentLogEntry[] = [];
  const maxOutput = opts.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES;
  let logChars = 0;
  // ctx.log lines and stdout/stderr lines share one budget; the result keeps
  // ctx.log lines (and summaries) up to MAX_LOG_LINES and as many characters
  // as the stdout cap.
  const budget = new LogBudget((entry) => {
    if (entry.stream === undefined && logs.length < MAX_LOG_LINES && logChars < maxOutput) {
      logChars += entry.message.length;
      logs.push(entry);
    }
    opts.onLog?.(entry);
  });
  const flood = createFloodGuard();

  return new Promise<AgentThreadResult>((resolve, reject) => {
    let settled = false;
    let timer: NodeJS.Timeout | undefined;
    let body: AgentBody | undefined;
    let server: PortServer | undefined;

    const finish = (err: AgentThreadError | null, value?: unknown): void => {
      if (settled) return;
      settled = true;
      if (timer) clearTimeout(timer);
      opts.signal?.removeEventListener("abort", onAbort);
      const ended = server?.close() ?? Promise.resolve();
      budget.flush();
      // End it in every case: an agent that returned may still have timers
      // or pending work, and an agent's thread or process is never reused.
      body?.end();
      opts.onStop?.();
      // The run settles once every operation it started has ended and been
      // reported (issue 26): nothing of a stopped agent happens afterwards.
      void ended.then(() => {
        if (err) reject(err);
        else resolve({ value, stdout: out.stdout, stderr: out.stderr, logs });
      });
    };
    const fail = (reason: AgentFailure, message: string, cause?: unknown): void =>
      finish(new AgentThreadError(reason, message, out, cause));

    const onControl = (msg: unknown): void => {
      // After the end (or a flood) every further message costs as little as can be.
      if (settled) return;
      let flooding = false;
      const m = readThreadMessage(msg, (bytes) => {
        flooding = !flood.count(bytes);
      });
      if (flooding) {
        fail(
          "oversize",
          `The agent posted more than ${FLOOD_MESSAGES} messages or ${FLOOD_BYTES} bytes on its ${channel} within a second; it was stopped (ctx.log drops lines past its budget instead).`,
        );
        return;
      }
      if (m === "oversize") {
        fail("oversize", `The agent sent an oversized message on its ${channel}; it was stopped.`);
        return;
      }
      if (m === null) return; // not ours to act on; a hostile agent may post anything
      if (m.kind === "log") {
        const { level, message, dropped } = m;
        budget.offer(dropped === undefined ? { level, message } : { level, message, dropped });
      } else if (m.kind === "result") finish(null, m.value);
      else fail("threw", `The agent failed: ${m.error.name}: ${m.error.message}`, m.cause);
    };

    let started: StartedAgent;
    try {
      started = start({
        out,
        maxOutput,
        offerOutput: (entry) => budget.offer(entry),
        onControl,
        fail,
        get settled() {
          return settled;
        },
      });
    } catch (err) {
      settled = true;
      reject(err);
      return;
    }
    body = started.body;
    if (settled) {
      // Failed while starting: it ends now.
      body.end();
      return;
    }
    // Its first requests are read on a later turn of the event loop.
    server = serveSandbox(started.sandboxPort, opts.sandbox, {
      ...pickPortServerOptions(opts),
      onViolation: (v) =>
        fail(
          "oversize",
          `The agent sent a message of ${v.bytes} bytes (limit ${v.limit}); it was stopped.`,
        ),
    });

    const onAbort = (): void => {
      const err = abortFailure(opts.signal?.reason, out);
      body?.tellAbort(err.reason);
      finish(err);
    };
    opts.signal?.addEventListener("abort", onAbort, { once: true });
    if (opts.timeoutMs !== undefined)
      timer = setTimeout(
        () => {
          body?.tellAbort("timeout");
          fail("timeout", `The agent did not finish within ${opts.timeoutMs} ms and was stopped.`);
        },
        Math.min(opts.timeoutMs, MAX_TIMER_MS),
      ); // setTimeout fires at once past 2^31-1 ms
  });
}

function emptyOut(): ThreadOutput {
  return { stdout: "", stderr: "" };
}

/** The failure of an agent stopped through its signal: a deadline, or an abort. */
function abortFailure(reason: unknown, out: ThreadOutput): AgentThreadError {
  return reason instanceof DeadlineExceeded
    ? new AgentThreadError(
        "timeout",
        `The agent did not finish within ${reason.timeoutMs} ms and was stopped.`,
        out,
      )
    : new AgentThreadError("aborted", "The agent was aborted.", out, reason);
}
