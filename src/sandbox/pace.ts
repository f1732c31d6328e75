/**
 * Time slicing for long host-side walks (listings, tree checks, deletes):
 * the host's event loop must not be held for more than a few milliseconds
 * at a time, whatever the size of the tree an agent points at.
 */

/** Longest stretch of synchronous work between two yields, in ms. */
export const SLICE_MS = 8;

/** A walk's pace: when it last yielded. */
export interface Pace {
  since: number;
}

/** Starts pacing a walk. */
export function startPace(): Pace {
  return { since: performance.now() };
}

/**
 * Yields to the event loop (`setImmediate`) if the walk has run for
 * {@link SLICE_MS} since it last did; returns whether it yielded.
 */
export async function yieldIfDue(pace: Pace): Promise<boolean> {
  if (performance.now() - pace.since < SLICE_MS) return false;
  await new Promise<void>((resolve) => setImmediate(resolve));
  pace.since = performance.now();
  return true;
}
