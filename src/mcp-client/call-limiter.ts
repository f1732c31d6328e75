/**
 * At most N calls in flight, the rest waiting in order (first come, first
 * served): many agents sharing one MCP server cannot flood it. A waiting
 * call whose agent stops leaves the queue.
 */

/** A counting gate with a first-in-first-out queue. */
export class CallLimiter {
  readonly #max: number;
  #running = 0;
  readonly #queue: { go: () => void }[] = [];

  constructor(max: number) {
    this.#max = max;
  }

  /** Calls in flight now. */
  get running(): number {
    return this.#running;
  }

  /** Calls waiting for a slot now. */
  get waiting(): number {
    return this.#queue.length;
  }

  /**
   * Runs `fn` once a slot is free.
   * @throws the signal's reason when it aborts while the call waits
   */
  async run<T>(fn: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    await this.#acquire(signal);
    try {
      return await fn();
    } finally {
      this.#release();
    }
  }

  #acquire(signal: AbortSignal | undefined): Promise<void> {
    signal?.throwIfAborted();
    if (this.#running < this.#max) {
      this.#running++;
      return Promise.resolve();
    }
    return new Promise((resolve, reject) => {
      const entry = {
        go: () => {
          signal?.removeEventListener("abort", onAbort);
          resolve();
        },
      };
      const onAbort = () => {
        const i = this.#queue.indexOf(entry);
        if (i >= 0) this.#queue.splice(i, 1);
        reject(signal?.reason);
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      this.#queue.push(entry);
    });
  }

  #release(): void {
    const next = this.#queue.shift();
    // The slot passes straight to the next waiter: the count stays.
    if (next) next.go();
    else this.#running--;
  }
}
