/**
 * Warm spare threads: hardened agent threads started ahead of need, each
 * handed to exactly one agent and never reused. A spare has loaded the thread
 * entry, locked itself down, imported its worker's module, and waits for its
 * boot message (input, sandbox port); taking one skips thread start-up and
 * the module's import on the delegation path.
 */
import { type ResourceLimits, Worker } from "node:worker_threads";
import { threadEntryUrl } from "./permissions.js";

/** A small pool of idle, never-used agent threads. */
export class SparePool {
  readonly #size: number;
  readonly #execArgv: string[];
  readonly #limits: ResourceLimits;
  readonly #moduleUrl: string;
  readonly #idle = new Set<Worker>();
  #closed = false;

  /**
   * @param size how many spares to keep ready
   * @param execArgv hardening flags: exactly the read grants of the worker(s) it serves
   * @param moduleUrl the `file:` URL of the module every spare imports ahead (its agents' module)
   */
  constructor(size: number, execArgv: string[], limits: ResourceLimits, moduleUrl: string) {
    this.#size = size;
    this.#execArgv = execArgv;
    this.#limits = limits;
    this.#moduleUrl = moduleUrl;
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
      // The entry imports `preload` only once its lockdown is complete.
      workerData: { warm: true, preload: this.#moduleUrl },
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

/** How the spares of one worker start: its hardening flags and its module. */
export interface SpareLaunch {
  /** The worker's execArgv (its exact read grants). */
  execArgv: string[];
  /** The `file:` URL of the worker's module (real path), imported ahead. */
  moduleUrl: string;
}

/** The pool key of a launch: workers share spares only when module and grants are the same. */
function keyOf(launch: SpareLaunch): string {
  return [launch.moduleUrl, ...launch.execArgv].join("\0");
}

/**
 * One {@link SparePool} per module and set of read grants (in practice one
 * per worker, since each has its own module): a spare serves only workers
 * whose grants are exactly the ones it was started with — a spare with every
 * worker's grants would let one worker read another's helper files and
 * packages — and whose module is the one it imported.
 */
export class SparePools {
  /** Worker name → how its spares start (only workers that may use spares). */
  readonly #launchOf: Map<string, SpareLaunch>;
  readonly #pools = new Map<string, SparePool>();
  #closed = false;

  constructor(size: number, launchOf: Map<string, SpareLaunch>, limits: ResourceLimits) {
    this.#launchOf = launchOf;
    for (const launch of launchOf.values()) {
      const key = keyOf(launch);
      if (!this.#pools.has(key))
        this.#pools.set(key, new SparePool(size, launch.execArgv, limits, launch.moduleUrl));
    }
  }

  /** A spare for `worker`, if one is ready (never one started with other grants or another module). */
  take(worker: string): Worker | undefined {
    const launch = this.#launchOf.get(worker);
    if (!launch || this.#closed) return undefined;
    return this.#pools.get(keyOf(launch))?.take();
  }

  /** Closes every pool. */
  async close(): Promise<void> {
    this.#closed = true;
    await Promise.all([...this.#pools.values()].map((p) => p.close()));
  }
}
