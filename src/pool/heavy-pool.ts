/**
 * `HeavyPool`: a small piscina pool of trusted host threads for work that
 * would otherwise hold the host's event loop (grep, big listings). The
 * threads run the built `pool-worker.js` next to this module.
 *
 * Nothing here keeps a process alive: piscina unrefs a thread whenever it has
 * no task, `minThreads` is 0 and idle threads exit after `idleTimeoutMs`. On
 * Linux the threads run at a lower priority (`niceIncrement`, +10), so on a busy
 * machine the threads serving agents' requests go first.
 */
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Piscina } from "piscina";
import type { TaskName, TaskOutcome } from "./tasks.js";

/** Options of {@link HeavyPool}. */
export interface HeavyPoolOptions {
  /** Most threads at once. Default 2. */
  maxThreads?: number;
  /** An idle thread exits after this many ms. Default 5 000. */
  idleTimeoutMs?: number;
  /** Added to the threads' nice value (Linux; 0 elsewhere). Default 10. */
  niceIncrement?: number;
  /** Heap limit of each thread, in MiB. Default 512. */
  maxOldGenerationSizeMb?: number;
}

const WORKER_URL = new URL("./pool-worker.js", import.meta.url);

/**
 * True when pool threads can start here: the built thread entry lies beside
 * this module (not so when a TypeScript test runner loads the sources).
 */
export function isPoolBuilt(): boolean {
  return existsSync(fileURLToPath(WORKER_URL));
}

/** A lazily started pool of host threads running the pool tasks. */
export class HeavyPool {
  readonly #opts: Required<HeavyPoolOptions>;
  #piscina: Piscina | undefined;
  #closed = false;

  constructor(opts: HeavyPoolOptions = {}) {
    this.#opts = {
      maxThreads: positive("maxThreads", opts.maxThreads, 2),
      idleTimeoutMs: positive("idleTimeoutMs", opts.idleTimeoutMs, 5_000),
      niceIncrement:
        process.platform === "linux" ? nonNegative("niceIncrement", opts.niceIncrement, 10) : 0,
      maxOldGenerationSizeMb: positive("maxOldGenerationSizeMb", opts.maxOldGenerationSizeMb, 512),
    };
  }

  /** Threads alive right now (0 before the first task and after idling out). */
  get threadCount(): number {
    return this.#piscina?.threads.length ?? 0;
  }

  /**
   * Runs a task in a pool thread. `signal` cancels it: a queued task is
   * dropped, a running one has its thread terminated (piscina's AbortError).
   */
  run<T>(name: TaskName, task: unknown, signal?: AbortSignal): Promise<TaskOutcome<T>> {
    if (this.#closed) return Promise.reject(new Error("the heavy-work pool is closed"));
    this.#piscina ??= this.#start();
    return this.#piscina.run(task, { name, ...(signal ? { signal } : {}) }) as Promise<
      TaskOutcome<T>
    >;
  }

  /** Terminates the threads; later `run` calls reject. */
  async close(): Promise<void> {
    this.#closed = true;
    const p = this.#piscina;
    this.#piscina = undefined;
    await p?.destroy();
  }

  #start(): Piscina {
    const filename = fileURLToPath(WORKER_URL);
    // Under a TypeScript test runner this module is the source file, which
    // has no built thread entry beside it.
    if (!isPoolBuilt())
      throw new Error("the heavy-work pool runs built code: run `npm run build` first");
    const pool = new Piscina({
      filename,
      minThreads: 0,
      maxThreads: this.#opts.maxThreads,
      idleTimeout: this.#opts.idleTimeoutMs,
      niceIncrement: this.#opts.niceIncrement,
      // The threads' event loop stays free between tasks (no Atomics.wait).
      atomics: "disabled",
      resourceLimits: { maxOldGenerationSizeMb: this.#opts.maxOldGenerationSizeMb },
      closeTimeout: 1_000,
    });
    // A thread that dies between tasks is replaced on demand; its tasks, if
    // any, were already rejected. Without a listener the event would crash
    // the host.
    pool.on("error", () => {});
    return pool;
  }
}

function positive(name: string, v: number | undefined, fallback: number): number {
  if (v === undefined) return fallback;
  if (!Number.isInteger(v) || v < 1) throw new TypeError(`${name} must be a positive integer`);
  return v;
}

function nonNegative(name: string, v: number | undefined, fallback: number): number {
  if (v === undefined) return fallback;
  if (!Number.isInteger(v) || v < 0) throw new TypeError(`${name} must be a non-negative integer`);
  return v;
}
