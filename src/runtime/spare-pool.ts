/**
 * Warm spare threads: hardened agent threads started ahead of need, each
 * handed to exactly one agent and never reused. A spare has loaded the thread
 * entry and waits for its boot message (module, input, sandbox port); taking
 * one skips thread start-up on the delegation path.
 */
import { type ResourceLimits, Worker } from "node:worker_threads";
import { threadEntryUrl } from "./permissions.js";

/** A small pool of idle, never-used agent threads. */
export class SparePool {
  readonly #size: number;
  readonly #execArgv: string[];
  readonly #limits: ResourceLimits;
  readonly #idle = new Set<Worker>();
  #closed = false;

  /**
   * @param size how many spares to keep ready
   * @param execArgv hardening flags; their read grants must cover every module a spare may run
   */
  constructor(size: number, execArgv: string[], limits: ResourceLimits) {
    this.#size = size;
    this.#execArgv = execArgv;
    this.#limits = limits;
    for (let i = 0; i < size; i++) this.#start();
  }

  /** An idle spare for one agent (removed from the pool and replaced), if any. */
  take(): Worker | undefined {
    const [spare] = this.#idle;
    if (!spare) return undefined;
    this.#idle.delete(spare);
    spare.ref();
    if (!this.#closed) setImmediate(() => this.#refill());
    return spare;
  }

  /** Terminates every idle spare; no new ones are started. */
  async close(): Promise<void> {
    this.#closed = true;
    const all = [...this.#idle];
    this.#idle.clear();
    await Promise.all(all.map((w) => w.terminate()));
  }

  #refill(): void {
    while (!this.#closed && this.#idle.size < this.#size) this.#start();
  }

  #start(): void {
    const w = new Worker(threadEntryUrl(), {
      workerData: { warm: true },
      execArgv: this.#execArgv,
      env: {},
      argv: [],
      stdout: true,
      stderr: true,
      stdin: false,
      resourceLimits: this.#limits,
    });
    // Idle spares must not keep the process alive, and a spare that dies
    // before use simply leaves the pool. Their stdout/stderr are read only
    // once an agent takes them: reading a worker's stdio refs its port,
    // which would keep an idle spare's process alive.
    w.unref();
    const drop = () => this.#idle.delete(w);
    w.once("error", drop);
    w.once("exit", drop);
    this.#idle.add(w);
  }
}
