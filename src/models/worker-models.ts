/**
 * Models held by the host (DESIGN §8): {@link resolveWorkerModels} maps
 * each LLM worker's `model` name to a model once, at `createHost`; the
 * thread never names one. Models of AI SDK 6 (specification v3) and 7 (v4)
 * are taken, and providers as both return them (issue 20).
 */
import { type ConfigIssue, escapeControl } from "../errors/index.js";
import type { LanguageModelLike } from "../host/host-types.js";
import { isPlainObject } from "../port/arg-checks.js";
import { DEFAULT_MODEL_RETRIES } from "./model-retries.js";

/** An LLM worker's model, resolved host-side. */
export interface WorkerModel {
  /** The worker's `model` name (events show it). */
  name: string;
  model: LanguageModelLike;
  /** Retries of a call that failed with a retryable error (`createHost({ modelRetries })`). */
  maxRetries: number;
}

/** True for a worker the host runs as an LLM worker: instructions and no module. */
export function isLlmWorker(spec: { module?: string; instructions?: string }): boolean {
  return spec.module === undefined && typeof spec.instructions === "string";
}

/** The specification versions of language models the host can call. */
const VERSIONS = new Set(["v3", "v4"]);

/**
 * Each LLM worker's model, from `models` (validated here): a key whose value
 * is a language model (`specificationVersion` "v3" — AI SDK 6 — or "v4" —
 * AI SDK 7 —, `doGenerate`, `doStream`; middleware-wrapped ones too), or
 * `key:id` where `models[key]` has `languageModel(id)`: a provider (the
 * function `createOpenAI()` returns, or an object) or a provider registry.
 * Issues name the worker and the key.
 */
export function resolveWorkerModels(
  models: unknown,
  workers: ReadonlyMap<string, { module?: string; instructions?: string; model?: string }>,
  issues: ConfigIssue[],
  maxRetries: number = DEFAULT_MODEL_RETRIES,
): Map<string, WorkerModel> {
  const out = new Map<string, WorkerModel>();
  let table: Record<string, unknown> = {};
  /** Keys already refused: a worker naming one gets no second issue. */
  const refused = new Set<string>();
  if (models !== undefined) {
    if (!isPlainObject(models)) {
      issues.push({ path: ["models"], message: "expected an object of models by name" });
      return out;
    }
    table = models;
    for (const [k, v] of Object.entries(table)) {
      const bad = describeBadEntry(v);
      if (bad === undefined) continue;
      refused.add(k);
      issues.push({ path: ["models", k], message: bad });
    }
  }
  const names = Object.keys(table);
  for (const [worker, spec] of workers) {
    if (!isLlmWorker(spec)) continue;
    const at = ["workers", worker, "model"];
    if (spec.model === undefined) {
      issues.push({
        path: at,
        message: `LLM worker '${worker}' has no model: give it 'model' (or program.yaml a default 'model')${names.length ? `; models: ${names.join(", ")}` : ", and createHost({ models })"}`,
      });
      continue;
    }
    const key = spec.model.includes(":")
      ? spec.model.slice(0, spec.model.indexOf(":"))
      : spec.model;
    if (refused.has(key) || refused.has(spec.model)) continue;
    const found = findModel(table, spec.model);
    if (typeof found === "string")
      issues.push({ path: at, message: `model '${spec.model}' of worker '${worker}': ${found}` });
    else out.set(worker, { name: spec.model, model: found, maxRetries });
  }
  return out;
}

/** What is wrong with a `models` entry, or undefined for a model or provider. */
function describeBadEntry(v: unknown): string | undefined {
  if (isLanguageModel(v) || hasLanguageModel(v)) return undefined;
  const version = (v as { specificationVersion?: unknown } | null)?.specificationVersion;
  if (typeof version === "string" && /^v[12]$/.test(version))
    return `a language model of specification '${version}' (AI SDK 5 or older) is not supported: use a provider package of the AI SDK 6 (specification 'v3') or 7 ('v4') line, e.g. @ai-sdk/openai@^3 with ai@^6`;
  return "expected an AI SDK language model (specificationVersion 'v3' or 'v4', with doGenerate and doStream), a provider (e.g. createOpenAI()) or a provider registry (createProviderRegistry): something with languageModel(id)";
}

function findModel(table: Record<string, unknown>, name: string): LanguageModelLike | string {
  const known = Object.keys(table);
  const list = known.length ? `models: ${known.join(", ")}` : "createHost was given no models";
  if (Object.hasOwn(table, name)) {
    const m = table[name];
    return isLanguageModel(m)
      ? m
      : `'${name}' is a provider; name one of its models as '${name}:<id>'`;
  }
  const colon = name.indexOf(":");
  const key = colon > 0 ? name.slice(0, colon) : undefined;
  const provider = key !== undefined && Object.hasOwn(table, key) ? table[key] : undefined;
  if (!hasLanguageModel(provider)) return `not available (${list})`;
  let m: unknown;
  try {
    m = provider.languageModel(name.slice(colon + 1));
  } catch (err) {
    return `not available from '${key}': ${escapeControl(String((err as Error)?.message ?? err)).slice(0, 300)}`;
  }
  if (isLanguageModel(m)) return m;
  const version = (m as { specificationVersion?: unknown } | null)?.specificationVersion;
  return `'${key}' returned ${typeof version === "string" ? `a language model of specification '${escapeControl(version.slice(0, 16))}'` : "no language model"} (expected 'v3' or 'v4')`;
}

function isLanguageModel(v: unknown): v is LanguageModelLike {
  if (typeof v !== "object" || v === null) return false;
  const m = v as Record<string, unknown>;
  return (
    typeof m.specificationVersion === "string" &&
    VERSIONS.has(m.specificationVersion) &&
    typeof m.doGenerate === "function" &&
    typeof m.doStream === "function"
  );
}

/** A provider or registry: an object — or a function, as `createOpenAI()` returns — with `languageModel`. */
function hasLanguageModel(v: unknown): v is { languageModel(id: string): unknown } {
  return (
    (typeof v === "object" || typeof v === "function") &&
    v !== null &&
    typeof (v as { languageModel?: unknown }).languageModel === "function"
  );
}
