/**
 * Retries of a host-held model's calls (issue 20), the policy of the AI
 * SDK's `generateText` / `streamText` (`maxRetries`, default 2): a call that
 * failed with an error its provider marks retryable (`APICallError` or a
 * gateway error with `isRetryable: true` — 408, 409, 429, 5xx, no answer) is
 * made again after 2 s, then 4 s, …, or after what the answer's
 * `retry-after-ms` / `retry-after` header asks when that is under a minute
 * (or under the backoff). The agent's thread runs its loop with
 * `maxRetries: 0`: retries happen here, once, where the provider answers.
 *
 * The SDK's own helper is not used: it is exported only from `ai/internal`
 * (no stability promise) and from `@ai-sdk/provider-utils`, which a strict
 * install (pnpm) does not let mountbox import. The policy is small; its
 * numbers are the SDK's.
 */
import { setTimeout as sleep } from "node:timers/promises";

/** Retries when the host is given none: the AI SDK's default. */
export const DEFAULT_MODEL_RETRIES = 2;
/** The AI SDK's first backoff, doubled after each retry. */
const INITIAL_DELAY_MS = 2000;
const BACKOFF_FACTOR = 2;
/** A `retry-after` the SDK honours: below a minute (or below the backoff). */
const MAX_HEADER_DELAY_MS = 60_000;

/** How one call is retried. */
export interface RetryPolicy {
  /** Retries after the first attempt (0: none). */
  maxRetries: number;
  /** The agent's signal: a stopped agent stops waiting. */
  signal: AbortSignal;
  /** Epoch ms of the agent's deadline: no retry is started that would wait past it. */
  deadlineAt?: number;
}

/**
 * Runs `attempt` until it succeeds, fails with an error not to retry, or
 * `policy.maxRetries` retries are used up; `tries.attempts` counts the
 * attempts made (it is read after a failure too). The last error is thrown
 * as it is.
 */
export async function callWithRetries<T>(
  attempt: () => Promise<T>,
  policy: RetryPolicy,
  tries: { attempts: number },
): Promise<T> {
  let backoff = INITIAL_DELAY_MS;
  for (;;) {
    tries.attempts++;
    try {
      return await attempt();
    } catch (err) {
      if (policy.signal.aborted || tries.attempts > policy.maxRetries || !isRetryable(err))
        throw err;
      const delay = retryDelayMs(err, backoff);
      if (policy.deadlineAt !== undefined && Date.now() + delay >= policy.deadlineAt) throw err;
      await sleep(delay, undefined, { signal: policy.signal });
      backoff *= BACKOFF_FACTOR;
    }
  }
}

/**
 * True for an error its provider marks retryable: an AI SDK `APICallError`
 * or gateway error (recognized by the SDK's own markers, so any copy of
 * `@ai-sdk/provider`, of any major, is recognized) with `isRetryable: true`.
 */
export function isRetryable(err: unknown): boolean {
  return (
    (hasMarker(err, "vercel.ai.error.AI_APICallError") ||
      hasMarker(err, "vercel.ai.gateway.error")) &&
    (err as { isRetryable?: unknown }).isRetryable === true
  );
}

/**
 * The wait before the next attempt: the answer's `retry-after-ms`, else
 * `retry-after` (seconds or an HTTP date), when it is between 0 and a
 * minute or below the backoff; else the backoff. As the AI SDK's
 * `getRetryDelayInMs`.
 */
export function retryDelayMs(err: unknown, backoff: number): number {
  const headers = responseHeaders(err) ?? responseHeaders((err as { cause?: unknown })?.cause);
  if (!headers) return backoff;
  let ms: number | undefined;
  const afterMs = headers["retry-after-ms"];
  if (afterMs) {
    const n = Number.parseFloat(afterMs);
    if (!Number.isNaN(n)) ms = n;
  }
  const after = headers["retry-after"];
  if (after && ms === undefined) {
    const seconds = Number.parseFloat(after);
    ms = Number.isNaN(seconds) ? Date.parse(after) - Date.now() : seconds * 1000;
  }
  if (
    ms !== undefined &&
    !Number.isNaN(ms) &&
    ms >= 0 &&
    (ms < MAX_HEADER_DELAY_MS || ms < backoff)
  )
    return ms;
  return backoff;
}

/** The response headers an AI SDK `APICallError` keeps (names lower-case). */
function responseHeaders(err: unknown): Record<string, string> | undefined {
  if (!hasMarker(err, "vercel.ai.error.AI_APICallError")) return undefined;
  const h = (err as { responseHeaders?: unknown }).responseHeaders;
  return typeof h === "object" && h !== null ? (h as Record<string, string>) : undefined;
}

/** The AI SDK's `AISDKError.hasMarker`: a `Symbol.for(marker)` property that is `true`. */
export function hasMarker(err: unknown, marker: string): boolean {
  if (typeof err !== "object" || err === null) return false;
  const symbol = Symbol.for(marker);
  return symbol in err && (err as Record<symbol, unknown>)[symbol] === true;
}
