/**
 * What an agent is told when its model call failed (issue 20): the
 * provider's message with every secret the host can find removed
 * (`model-secrets.ts`), its HTTP status and whether trying again may work —
 * never the request, the response body or headers, which stay in the host.
 */
import { AgentThreadError, escapeControl } from "../errors/index.js";
import { hasMarker } from "./model-retries.js";
import { heldSecrets, scrubSecrets } from "./model-secrets.js";

/** Longest model error message passed on. */
export const MAX_ERROR_CHARS = 2000;

/**
 * Why a model call failed, for the `model_call` event: the provider
 * refused the key (`auth_failed`), asked to slow down (`rate_limited`),
 * refused the request (`bad_request`), failed itself (`provider_error`),
 * could not be reached (`network_error`), answered with something that is
 * not a valid answer (`invalid_response`), timed out (`timeout`), the agent
 * was stopped (`aborted`), or anything else (`failed`).
 */
export type ModelErrorCode =
  | "auth_failed"
  | "rate_limited"
  | "bad_request"
  | "provider_error"
  | "network_error"
  | "invalid_response"
  | "timeout"
  | "aborted"
  | "failed";

/** A failed model call, described. */
export interface ModelFailure {
  /** The error the thread gets (and the host's caller, through the agent's failure). */
  error: AgentThreadError;
  errorCode: ModelErrorCode;
  statusCode?: number;
  isRetryable: boolean;
}

/** AI SDK errors that mean the provider's answer could not be read. */
const INVALID_RESPONSE = new Set([
  "AI_InvalidResponseDataError",
  "AI_JSONParseError",
  "AI_TypeValidationError",
  "AI_EmptyResponseBodyError",
  "AI_NoContentGeneratedError",
]);

/**
 * Describes `err`, thrown by model `name` (whose provider settings are
 * searched for its key) after `attempts` attempts: an `AgentThreadError`
 * (reason `threw`) whose message is the provider's own, scrubbed, with
 * `statusCode` and `isRetryable` kept.
 */
export async function describeModelFailure(
  name: string,
  model: unknown,
  err: unknown,
  attempts: number,
  aborted: boolean,
): Promise<ModelFailure> {
  const statusCode = statusOf(err);
  const isRetryable = (err as { isRetryable?: unknown } | null)?.isRetryable === true;
  const errorCode: ModelErrorCode = aborted ? "aborted" : classify(err, statusCode);
  const text = await scrubbedMessage(err, model);
  const tried = attempts > 1 ? ` after ${attempts} attempts` : "";
  const status = statusCode !== undefined ? ` (HTTP ${statusCode})` : "";
  const error = new AgentThreadError(
    "threw",
    `The model '${name}' failed${tried}${status}: ${text}`,
    undefined,
    undefined,
    { ...(statusCode !== undefined ? { statusCode } : {}), isRetryable },
  );
  return { error, errorCode, ...(statusCode !== undefined ? { statusCode } : {}), isRetryable };
}

/**
 * The message of `err` (an error, or whatever a stream's error part
 * holds), without the secrets of `model`, control characters escaped,
 * bounded.
 */
export async function scrubbedMessage(err: unknown, model: unknown): Promise<string> {
  const raw = err instanceof Error ? err.message : typeof err === "string" ? err : safeJson(err);
  const clean = scrubSecrets(raw, await heldSecrets(model));
  return escapeControl(clean).slice(0, MAX_ERROR_CHARS);
}

function safeJson(v: unknown): string {
  try {
    return JSON.stringify(v) ?? String(v);
  } catch {
    return String(v);
  }
}

/** The provider's HTTP status, when the error carries one. */
function statusOf(err: unknown): number | undefined {
  const s = (err as { statusCode?: unknown } | null)?.statusCode;
  return typeof s === "number" && Number.isInteger(s) && s >= 100 && s <= 599 ? s : undefined;
}

function classify(err: unknown, statusCode: number | undefined): ModelErrorCode {
  if (statusCode === 401 || statusCode === 403) return "auth_failed";
  if (statusCode === 429) return "rate_limited";
  if (statusCode === 408 || statusCode === 504) return "timeout";
  if (statusCode !== undefined) return statusCode >= 500 ? "provider_error" : "bad_request";
  const name = (err as { name?: unknown } | null)?.name;
  if (name === "AI_LoadAPIKeyError") return "auth_failed";
  if (name === "TimeoutError") return "timeout";
  if (typeof name === "string" && INVALID_RESPONSE.has(name)) return "invalid_response";
  // An API call that got no answer: the SDK's "Cannot connect to API".
  if (hasMarker(err, "vercel.ai.error.AI_APICallError")) return "network_error";
  return "failed";
}
