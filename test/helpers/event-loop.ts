/**
 * Measuring how long the host's event loop was held: the largest gap between
 * ticks of a 1 ms timer (monitorEventLoopDelay under-reports long stalls on
 * Node 20 and 22). A gap counts only the CPU time the process spent in it:
 * on a loaded machine (the suite runs several files at once, some of them
 * busy agents) the process can wait hundreds of milliseconds for a core
 * without its loop being held by anything it runs.
 */

/** Generous bound (the README's ~50 ms, with room for a loaded CI machine). */
export const LAG_BOUND_MS = 250;

/** CPU time of this process so far, in ms. */
function cpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

/** Runs `fn` while a 1 ms timer loop watches the event loop; returns the largest gap. */
export async function withGap(
  fn: () => Promise<unknown>,
): Promise<{ value: unknown; gapMs: number }> {
  let last = performance.now();
  let lastCpu = cpuMs();
  let max = 0;
  /** A gap: its wall time, but no more than the CPU time the process used in it. */
  const gapSince = () => Math.min(performance.now() - last, cpuMs() - lastCpu);
  const iv = setInterval(() => {
    max = Math.max(max, gapSince());
    last = performance.now();
    lastCpu = cpuMs();
  }, 1);
  try {
    // Let the loop tick once so `last` is fresh, then run the call.
    await new Promise((r) => setTimeout(r, 5));
    last = performance.now();
    lastCpu = cpuMs();
    const value = await fn().catch((err: unknown) => err);
    return { value, gapMs: Math.max(max, gapSince()) };
  } finally {
    clearInterval(iv);
  }
}
