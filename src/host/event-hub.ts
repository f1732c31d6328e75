/**
 * Fans host events out to `onEvent` and to any number of `for await`
 * readers of `host.events`. A slow reader never blocks the host: each reader
 * has its own bounded queue, and the oldest events are dropped past it.
 */
import type { HostEvent } from "./host-types.js";

/** Events kept per reader before the oldest are dropped. */
const MAX_QUEUED = 10_000;

interface Reader {
  queue: HostEvent[];
  wake: ((r: IteratorResult<HostEvent>) => void) | undefined;
}

/** An async-iterable event stream with a synchronous callback. */
export class EventHub implements AsyncIterable<HostEvent> {
  readonly #onEvent: ((e: HostEvent) => void) | undefined;
  readonly #readers = new Set<Reader>();
  #ended = false;

  constructor(onEvent?: (e: HostEvent) => void) {
    this.#onEvent = onEvent;
  }

  /** Delivers one event to the callback and every reader. */
  emit(event: HostEvent): void {
    if (this.#ended) return;
    try {
      this.#onEvent?.(event);
    } catch {
      // An embedder's callback must not break the host.
    }
    for (const r of this.#readers) {
      if (r.wake) {
        const wake = r.wake;
        r.wake = undefined;
        wake({ value: event, done: false });
      } else {
        r.queue.push(event);
        if (r.queue.length > MAX_QUEUED) r.queue.shift();
      }
    }
  }

  /** Ends every reader's iteration. */
  end(): void {
    this.#ended = true;
    for (const r of this.#readers) r.wake?.({ value: undefined, done: true });
    this.#readers.clear();
  }

  [Symbol.asyncIterator](): AsyncIterator<HostEvent> {
    const reader: Reader = { queue: [], wake: undefined };
    if (!this.#ended) this.#readers.add(reader);
    const ended = () => this.#ended;
    const readers = this.#readers;
    return {
      next(): Promise<IteratorResult<HostEvent>> {
        const e = reader.queue.shift();
        if (e) return Promise.resolve({ value: e, done: false });
        if (ended()) return Promise.resolve({ value: undefined, done: true });
        return new Promise((resolve) => {
          reader.wake = resolve;
        });
      },
      return(): Promise<IteratorResult<HostEvent>> {
        readers.delete(reader);
        reader.wake?.({ value: undefined, done: true });
        return Promise.resolve({ value: undefined, done: true });
      },
    };
  }
}
