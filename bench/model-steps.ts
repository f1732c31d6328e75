/**
 * What the model benchmark's steps share, in the agent thread's fixture and
 * in the floor's plain worker: the mock answer, and the interleaved timing
 * of the mock in the thread against a model across a port.
 */

/**
 * The mock answer: text at once, as the AI SDK's `LanguageModelV3` returns
 * it. A fresh object per call, as a real model builds one.
 */
export function mockAnswer() {
  return {
    content: [{ type: "text" as const, text: "Hello." }],
    finishReason: { unified: "stop" as const, raw: "stop" },
    usage: {
      inputTokens: { total: 3, noCache: 3, cacheRead: undefined, cacheWrite: undefined },
      outputTokens: { total: 2, text: 2, reasoning: undefined },
    },
    warnings: [],
  };
}

/** How long and how often {@link timeRounds} measures. */
export interface StepCounts {
  warmup: number;
  steps: number;
  rounds: number;
}

/**
 * Milliseconds per step, per round, of `step` with the `local` model (a
 * mock whose call log is cleared after each round) and with `remote`,
 * alternating round by round so both see the same machine.
 */
export async function timeRounds<M>(
  local: M & { doGenerateCalls: unknown[] },
  remote: M,
  step: (model: M) => Promise<unknown>,
  { warmup, steps, rounds }: StepCounts,
): Promise<{ local: number[]; remote: number[] }> {
  const time = async (model: M): Promise<number> => {
    for (let i = 0; i < warmup; i++) await step(model);
    const t0 = performance.now();
    for (let i = 0; i < steps; i++) await step(model);
    local.doGenerateCalls.length = 0;
    return (performance.now() - t0) / steps;
  };
  const out = { local: [] as number[], remote: [] as number[] };
  for (let r = 0; r < rounds; r++) {
    out.local.push(await time(local));
    out.remote.push(await time(remote));
  }
  return out;
}
