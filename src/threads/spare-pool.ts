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

/**
 * One {@link SparePool} per set of read grants (in practice one per worker,
 * since each has its own module): a spare serves only workers whose grants
 * are exactly the ones it was started with — a spare with every worker's
 * grants would let one worker read another's helper files and packages.
 */
export class SparePools {
  /** Worker name → its execArgv (only workers that may use spares). */
  readonly #argvOf: Map<string, string[]>;
  readonly #pools = new Map<string, SparePool>();
  #closed = false;

  constructor(size: number, argvOf: Map<string, string[]>, limits: ResourceLimits) {
    this.#argvOf = argvOf;
    for (const argv of argvOf.values()) {
      const key = argv.join("\0");
      if (!this.#pools.has(key)) this.#pools.set(key, new SparePool(size, argv, limits));
    }
  }

  /** A spare for `worker`, if one is ready (never one started with other grants). */
  take(worker: string): Worker | undefined {
    const argv = this.#argvOf.get(worker);
    if (!argv || this.#closed) return undefined;
    return this.#pools.get(argv.join("\0"))?.take();
  }

  /** Closes every pool. */
  async close(): Promise<void> {
    this.#closed = true;
    await Promise.all([...this.#pools.values()].map((p) => p.close()));
  }
}
