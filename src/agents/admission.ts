/**
 * Admission of the agents of one host: at most `maxAgents` running code, at
 * most `maxThreads` threads alive (counting callers waiting on their callees
 * and stopped threads that have not exited yet), none once the host is
 * closed. A refusal names the limit to raise.
 */
import { DelegationRefusedError } from "../errors/index.js";
import type { Agent } from "./agent.js";

/** How long a terminated thread may take to exit before it counts as stuck. */
const STUCK_AFTER_MS = 1000;

/** One agent's thread, watched from the moment it is handed over. */
export interface ThreadWatch {
  /** Called once when the thread has really exited. */
  onThreadExit: () => void;
  /** Called when its agent is done, whether or not the thread has exited. */
  onAgentDone: () => void;
}

/** Counts the agents and threads of one host, and refuses those beyond its limits. */
export class Admission {
  readonly #maxAgents: number;
  readonly #maxThreads: number;
  readonly #live = new Set<Agent>();
  /**
   * Threads of finished agents still running a while after `terminate()`
   * (blocked in native code, e.g. a read on an inherited descriptor).
   */
  #stuck = 0;
  /** Agents running (not waiting on a callee). */
  #active = 0;
  #closed = false;

  constructor(limits: { maxAgents: number; maxThreads: number }) {
    this.#maxAgents = limits.maxAgents;
    this.#maxThreads = limits.maxThreads;
  }

  /** Refuses new agents and aborts every live one (with `reason`, if given). */
  close(reason?: Error): void {
    this.#closed = true;
    for (const a of this.#live) a.controller.abort(reason ?? new Error("host closed"));
  }

  /**
   * Checks that one more agent may start: the host is open, fewer than
   * `maxAgents` run code, and fewer than `maxThreads` threads are alive (a
   * caller waiting on its callee gives its `maxAgents` slot back, so deep
   * chains never deadlock, but its thread lives on and can still run code).
   * @throws DelegationRefusedError when it may not
   */
  check(worker: string): void {
    if (this.#closed) throw new DelegationRefusedError("The host is closed.");
    // Refused, never queued: the message names the limit to raise, with
    // the values of both, so a fan-out of deep chains knows what to change.
    if (this.#active >= this.#maxAgents)
      throw new DelegationRefusedError(
        `Cannot start '${worker}': ${this.#maxAgents} agents are already running (maxAgents). Wait for one to finish, or raise maxAgents (createHost option; maxAgents is ${this.#maxAgents}, maxThreads is ${this.#maxThreads}).`,
      );
    if (this.#live.size + this.#stuck >= this.#maxThreads)
      throw new DelegationRefusedError(
        `Cannot start '${worker}': ${this.#maxThreads} agent threads are already alive, counting callers waiting on their callees and stopped threads that have not exited yet (maxThreads). Wait for one to finish, or raise maxThreads (createHost option; maxThreads is ${this.#maxThreads}, maxAgents is ${this.#maxAgents}; a chain of depth d holds d threads, so n chains at once need n × d).`,
      );
  }

  /** Admits `agent` (see {@link check}): it counts as running and alive. */
  enter(agent: Agent): void {
    this.check(agent.worker);
    this.#active++;
    this.#live.add(agent);
  }

  /** Counts `agent` out: it no longer runs (its thread may live on, see {@link watchThread}). */
  leave(agent: Agent): void {
    this.#active--;
    this.#live.delete(agent);
  }

  /**
   * Marks `caller` waiting on one more callee. A caller waiting on its
   * callees does not hold a slot they need: it gives its own slot back
   * once, however many callees it waits on.
   */
  startWaiting(caller: Agent): void {
    if (caller.waiting++ === 0) this.#active--;
  }

  /** Marks `caller` done waiting on one callee; with none left it runs again. */
  stopWaiting(caller: Agent): void {
    if (--caller.waiting === 0) this.#active++;
  }

  /**
   * Watches one agent's thread: a thread still running STUCK_AFTER_MS after
   * its agent finished is counted against maxThreads until it really exits.
   */
  watchThread(): ThreadWatch {
    let exited = false;
    let stuck = false;
    return {
      onThreadExit: () => {
        exited = true;
        if (stuck) this.#stuck--;
      },
      onAgentDone: () => {
        if (exited) return;
        setTimeout(() => {
          if (exited) return;
          stuck = true;
          this.#stuck++;
        }, STUCK_AFTER_MS).unref();
      },
    };
  }
}
