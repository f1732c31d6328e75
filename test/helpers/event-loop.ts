/**
 * Measuring how long the host's event loop was held: the largest gap between
 * ticks of a 1 ms timer (monitorEventLoopDelay under-reports long stalls on
 * Node 20 and 22).
 */

/** Generous bound (the README's ~50 ms, with room for a loaded CI machine). */
export const LAG_BOUND_MS = 250;

/** Runs `fn` while a 1 ms timer loop watches the event loop; returns the largest gap. */
export async function withGap(
  fn: () => Promise<unknown>,
): Promise<{ value: unknown; gapMs: number }> {
  let last = performance.now();
  let max = 0;
  const iv = setInterval(() => {
    const now = performance.now();
    max = Math.max(max, now - last);
    last = now;
  }, 1);
  try {
    // Let the loop tick once so `last` is fresh, then run the call.
    await new Promise((r) => setTimeout(r, 5));
    last = performance.now();
    const value = await fn().catch((err: unknown) => err);
    const now = performance.now();
    return { value, gapMs: Math.max(max, now - last) };
  } finally {
    clearInterval(iv);
  }
}
