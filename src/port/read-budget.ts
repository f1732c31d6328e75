/**
 * Bytes an agent's reads are about to load, counted against its budget of
 * bytes in flight before they load (the port server counts a reply only once
 * it is made, which for a whole-file read is after the file is in memory).
 */
import { ioError } from "../errors/index.js";

/** One port server's reservations. */
export interface Reservations {
  /** Waits until `bytes` more fit the budget, then holds them for request `id`. */
  reserve(id: number, bytes: number): Promise<void>;
  /** Gives back what request `id` holds (its reply is being made); {@link grant} then. */
  release(id: number): void;
  /** Grants waiting reservations that fit now, in order. */
  grant(): void;
  /** Refuses every waiting reservation (the server closed). */
  close(): void;
}

/**
 * Reservations against `budget`, sharing it with `replied()` (the bytes of
 * big replies not yet acknowledged). A reservation is granted when it fits,
 * or when nothing else is in flight (one read bigger than the whole budget
 * still runs, alone). Waiting ones are granted in arrival order.
 */
export function createReservations(replied: () => number, budget: number): Reservations {
  const held = new Map<number, number>();
  let total = 0;
  let closed = false;
  const waiting: { id: number; bytes: number; resolve: () => void; reject: (e: Error) => void }[] =
    [];
  const fits = (bytes: number): boolean => {
    const inUse = replied() + total;
    return inUse === 0 || inUse + bytes <= budget;
  };
  const hold = (id: number, bytes: number): void => {
    held.set(id, (held.get(id) ?? 0) + bytes);
    total += bytes;
  };
  const r: Reservations = {
    reserve(id, bytes) {
      if (closed) return Promise.reject(ioError("read", undefined, "the agent was stopped"));
      if (waiting.length === 0 && fits(bytes)) {
        hold(id, bytes);
        return Promise.resolve();
      }
      return new Promise((resolve, reject) => waiting.push({ id, bytes, resolve, reject }));
    },
    release(id) {
      const bytes = held.get(id);
      if (bytes === undefined) return;
      held.delete(id);
      total -= bytes;
    },
    grant() {
      while (!closed && waiting.length > 0 && fits(waiting[0]!.bytes)) {
        const w = waiting.shift()!;
        hold(w.id, w.bytes);
        w.resolve();
      }
    },
    close() {
      closed = true;
      for (const w of waiting.splice(0))
        w.reject(ioError("read", undefined, "the agent was stopped"));
    },
  };
  return r;
}
