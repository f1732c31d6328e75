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
  /**
   * A task that has run this long is stopped when another owner waits for a
   * thread and none is free (a {@link PoolTimeoutError}, phase
   * `preempted`): slow tasks of a few owners never starve the rest. Default 2 000.
   */
  fairSliceMs?: number;
}

/** How one call of {@link HeavyPool.run} is scheduled. */
export interface PoolRunOptions {
  /** Whose task it is (one agent, one server): one running task per owner, owners in turn. */
  owner?: object | undefined;
  /** Most ms the task may run, counted from its start. */
  timeoutMs?: number | undefined;
  /** Most ms the task may wait for a thread. */
  queueTimeoutMs?: number | undefined;
}

/** A task that ran too long, or waited too long for a thread. */
export class PoolTimeoutError extends Error {
  constructor(
    readonly phase: "queued" | "running" | "preempted",
    readonly limitMs: number,
  ) {
    super(
      phase === "queued"
        ? `the task waited ${limitMs} ms for a pool thread and was not started`
        : phase === "preempted"
          ? `the task ran past ${limitMs} ms while others waited for a pool thread, and was stopped`
          : `the task ran for ${limitMs} ms and was stopped`,
    );
    this.name = "PoolTimeoutError";
  }
}

/** A running task, as far as sharing the threads goes. */
interface Running {
  started: number;
  /** Stops the task because another owner waits. */
  preempt: () => void;
}

/** A task waiting for a thread. */
interface Queued {
  name: TaskName;
  task: unknown;
  signal: AbortSignal | undefined;
  timeoutMs: number | undefined;
  resolve: (v: unknown) => void;
  reject: (err: unknown) => void;
  /** Removes the abort listener and the queue timer. */
  cleanup: () => void;
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
  /** Per owner, its tasks waiting for a thread (owners in turn order). */
  readonly #queues = new Map<object, Queued[]>();
  /** Owners with a task running, and how to stop that task for another owner. */
  readonly #running = new Map<object, Running>();
  /** Wakes {@link #pump} when a running task reaches its fair slice. */
  #sliceTimer: NodeJS.Timeout | undefined;

  constructor(opts: HeavyPoolOptions = {}) {
    this.#opts = {
      maxThreads: positive("maxThreads", opts.maxThreads, 2),
      idleTimeoutMs: positive("idleTimeoutMs", opts.idleTimeoutMs, 5_000),
      niceIncrement:
        process.platform === "linux" ? nonNegative("niceIncrement", opts.niceIncrement, 10) : 0,
      maxOldGenerationSizeMb: positive("maxOldGenerationSizeMb", opts.maxOldGenerationSizeMb, 512),
      fairSliceMs: positive("fairSliceMs", opts.fairSliceMs, 2_000),
    };
  }

  /** Threads alive right now (0 before the first task and after idling out). */
  get threadCount(): number {
    return this.#piscina?.threads.length ?? 0;
  }

  /**
   * Runs a task in a pool thread. `signal` cancels it: a queued task is
   * dropped, a running one has its thread terminated (piscina's AbortError).
   *
   * Fair across owners (`call.owner`, e.g. one agent): at most one task of
   * an owner runs at a time, the rest wait in the owner's own queue, and free
   * threads go to owners in turn — one owner's many slow tasks never hold
   * every thread; and when every thread is busy and another owner waits,
   * the longest-running task past `fairSliceMs` is stopped (a
   * {@link PoolTimeoutError}, `phase: "preempted"`) — so a few owners' slow
   * tasks never starve the rest. A task without an owner is an owner of its own.
   * `call.timeoutMs` counts from when the task starts running (it rejects
   * with a {@link PoolTimeoutError}, `phase: "running"`, and its thread is
   * terminated); `call.queueTimeoutMs` bounds the wait for a thread
   * (`phase: "queued"`).
   */
  run<T>(
    name: TaskName,
    task: unknown,
    signal?: AbortSignal,
    call: PoolRunOptions = {},
  ): Promise<TaskOutcome<T>> {
    if (this.#closed) return Promise.reject(new Error("the heavy-work pool is closed"));
    if (signal?.aborted) return Promise.reject(signal.reason);
    // Started now, so a pool that cannot start (no build) throws here.
    this.#piscina ??= this.#startPiscina();
    return new Promise<TaskOutcome<T>>((resolve, reject) => {
      const owner = call.owner ?? {};
      const entry: Queued = {
        name,
        task,
        signal,
        timeoutMs: call.timeoutMs,
        resolve: resolve as (v: unknown) => void,
        reject,
        cleanup: () => {},
      };
      const drop = (reason: unknown): void => {
        const q = this.#queues.get(owner);
        const i = q?.indexOf(entry) ?? -1;
        if (!q || i < 0) return;
        q.splice(i, 1);
        if (q.length === 0) this.#queues.delete(owner);
        entry.cleanup();
        reject(reason);
      };
      const onAbort = () => drop(signal?.reason);
      signal?.addEventListener("abort", onAbort, { once: true });
      const queueTimer =
        call.queueTimeoutMs === undefined
          ? undefined
          : setTimeout(
              () => drop(new PoolTimeoutError("queued", call.queueTimeoutMs as number)),
              call.queueTimeoutMs,
            );
      queueTimer?.unref();
      entry.cleanup = () => {
        signal?.removeEventListener("abort", onAbort);
        if (queueTimer) clearTimeout(queueTimer);
      };
      const q = this.#queues.get(owner);
      if (q) q.push(entry);
      else this.#queues.set(owner, [entry]);
      this.#pump();
    });
  }

  /** Tasks waiting for a thread, over all owners. */
  get queued(): number {
    let n = 0;
    for (const q of this.#queues.values()) n += q.length;
    return n;
  }

  /** Starts queued tasks while threads are free: owners in turn, one task each. */
  #pump(): void {
    while (!this.#closed && this.#running.size < this.#opts.maxThreads) {
      // Owners in insertion order: an owner that started a task goes to the back.
      let picked: object | undefined;
      for (const owner of this.#queues.keys()) {
        if (!this.#running.has(owner)) {
          picked = owner;
          break;
        }
      }
      if (picked === undefined) break;
      const q = this.#queues.get(picked) as Queued[];
      const entry = q.shift() as Queued;
      this.#queues.delete(picked);
      if (q.length > 0) this.#queues.set(picked, q);
      entry.cleanup();
      this.#start(picked, entry);
    }
    this.#shareThreads();
  }

  /**
   * All threads are busy. If an owner without a running task waits, stops
   * the longest-running task past its fair slice — or looks again when the
   * first one reaches it.
   */
  #shareThreads(): void {
    if (this.#closed || this.#sliceTimer || this.#running.size < this.#opts.maxThreads) return;
    let starved = false;
    for (const owner of this.#queues.keys()) if (!this.#running.has(owner)) starved = true;
    if (!starved) return;
    let oldest: Running | undefined;
    for (const r of this.#running.values()) if (!oldest || r.started < oldest.started) oldest = r;
    if (!oldest) return;
    const due = oldest.started + this.#opts.fairSliceMs - performance.now();
    if (due <= 0) {
      oldest.preempt();
      return;
    }
    this.#sliceTimer = setTimeout(() => {
      this.#sliceTimer = undefined;
      this.#pump();
    }, due + 1);
    this.#sliceTimer.unref();
  }

  #start(owner: object, e: Queued): void {
    let timedOut = false;
    let preempted = false;
    const deadline = new AbortController();
    this.#running.set(owner, {
      started: performance.now(),
      preempt: () => {
        preempted = true;
        deadline.abort();
      },
    });
    const timer =
      e.timeoutMs === undefined
        ? undefined
        : setTimeout(() => {
            timedOut = true;
            deadline.abort();
          }, e.timeoutMs);
    timer?.unref();
    const signal = e.signal ? AbortSignal.any([e.signal, deadline.signal]) : deadline.signal;
    let pending: Promise<unknown>;
    try {
      this.#piscina ??= this.#startPiscina();
      pending = this.#piscina.run(e.task, { name: e.name, signal });
    } catch (err) {
      pending = Promise.reject(err);
    }
    pending.then(
      (v) => {
        this.#finish(owner, timer);
        e.resolve(v);
      },
      (err: unknown) => {
        this.#finish(owner, timer);
        e.reject(
          preempted
            ? new PoolTimeoutError("preempted", this.#opts.fairSliceMs)
            : timedOut
              ? new PoolTimeoutError("running", e.timeoutMs as number)
              : err,
        );
      },
    );
  }

  #finish(owner: object, timer: NodeJS.Timeout | undefined): void {
    if (timer) clearTimeout(timer);
    this.#running.delete(owner);
    this.#pump();
  }

  /** Terminates the threads; later `run` calls reject. */
  async close(): Promise<void> {
    this.#closed = true;
    if (this.#sliceTimer) clearTimeout(this.#sliceTimer);
    this.#sliceTimer = undefined;
    const waiting = [...this.#queues.values()].flat();
    this.#queues.clear();
    for (const e of waiting) {
      e.cleanup();
      e.reject(new Error("the heavy-work pool is closed"));
    }
    const p = this.#piscina;
    this.#piscina = undefined;
    await p?.destroy();
  }

  #startPiscina(): Piscina {
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
