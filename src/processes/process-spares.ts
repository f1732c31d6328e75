/**
 * Warm spare processes: agent processes started ahead of need, their module
 * already imported, each waiting for its boot message. One pool per process
 * worker (a spare sees exactly its own worker's files), each spare used by
 * one agent once; taking one skips bubblewrap's setup, Node's start and the
 * module's import on the delegation path.
 */
import { type AgentProcess, startAgentProcess } from "./agent-process-handle.js";
import type { PlannedLaunch } from "./process-code.js";

/** Idle spare processes per worker. */
export class ProcessSpares {
  readonly #size: number;
  readonly #plans: Map<string, PlannedLaunch>;
  readonly #idle = new Map<string, Set<AgentProcess>>();
  #closed = false;

  /**
   * @param size spares kept ready per worker
   * @param plans each process worker's launch, its module imported ahead
   */
  constructor(size: number, plans: Map<string, PlannedLaunch>) {
    this.#size = size;
    this.#plans = plans;
    for (const worker of plans.keys()) {
      this.#idle.set(worker, new Set());
      this.#refill(worker);
    }
  }

  /** An idle spare of `worker` for one agent (replaced in the background), if one is ready. */
  take(worker: string): AgentProcess | undefined {
    const idle = this.#idle.get(worker);
    // One that broke a rule (it spoke before its boot) is being killed.
    for (const s of idle ?? []) if (s.dead) idle!.delete(s);
    const [spare] = idle ?? [];
    if (!spare || this.#closed) return undefined;
    idle!.delete(spare);
    spare.setRef(true);
    setImmediate(() => this.#refill(worker));
    return spare;
  }

  /** Kills every idle spare and waits until they are gone; no new ones are started. */
  async close(): Promise<void> {
    this.#closed = true;
    const idle = [...this.#idle.values()].flatMap((s) => [...s]);
    for (const s of this.#idle.values()) s.clear();
    for (const p of idle) {
      // Held again while they die: a host whose last work is this close()
      // must wait for their exit, not end with it pending.
      p.setRef(true);
      p.kill();
    }
    await Promise.all(idle.map((p) => p.exited));
  }

  #refill(worker: string): void {
    const idle = this.#idle.get(worker)!;
    while (!this.#closed && idle.size < this.#size) {
      let spare: AgentProcess;
      try {
        spare = startAgentProcess(this.#plans.get(worker)!);
      } catch {
        return; // Agents start their own process instead, and report why it fails.
      }
      // An idle spare must not keep the host alive; one that dies leaves the pool.
      spare.setRef(false);
      idle.add(spare);
      void spare.exited.then(() => idle.delete(spare));
    }
  }
}
