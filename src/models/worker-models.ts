/**
 * Models held by the host (DESIGN §8): {@link resolveWorkerModels} maps
 * each LLM worker's `model` name to a model once, at `createHost`; the
 * thread never names one.
 */
import { type ConfigIssue, escapeControl } from "../errors/index.js";
import type { LanguageModelLike } from "../host/host-types.js";
import { isPlainObject } from "../port/arg-checks.js";

/** An LLM worker's model, resolved host-side. */
export interface WorkerModel {
  /** The worker's `model` name (events show it). */
  name: string;
  model: LanguageModelLike;
}

/** True for a worker the host runs as an LLM worker: instructions and no module. */
export function isLlmWorker(spec: { module?: string; instructions?: string }): boolean {
  return spec.module === undefined && typeof spec.instructions === "string";
}

/**
 * Each LLM worker's model, from `models` (validated here): a key whose value
 * is a language model (`specificationVersion: "v3"`, `doGenerate`,
 * `doStream`), or `key:id` where `models[key]` has `languageModel(id)` (a
 * provider or provider registry). Issues name the worker and the key.
 */
export function resolveWorkerModels(
  models: unknown,
  workers: ReadonlyMap<string, { module?: string; instructions?: string; model?: string }>,
  issues: ConfigIssue[],
): Map<string, WorkerModel> {
  const out = new Map<string, WorkerModel>();
  let table: Record<string, unknown> = {};
  if (models !== undefined) {
    if (!isPlainObject(models)) {
      issues.push({ path: ["models"], message: "expected an object of models by name" });
      return out;
    }
    table = models;
    for (const [k, v] of Object.entries(table))
      if (!isLanguageModel(v) && !hasLanguageModel(v))
        issues.push({
          path: ["models", k],
          message:
            "expected an AI SDK language model (specificationVersion 'v3', doGenerate, doStream) or a provider / provider registry (languageModel(id))",
        });
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
    const found = findModel(table, spec.model);
    if (typeof found === "string")
      issues.push({ path: at, message: `model '${spec.model}' of worker '${worker}': ${found}` });
    else out.set(worker, { name: spec.model, model: found });
  }
  return out;
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
  return isLanguageModel(m) ? m : `'${key}' did not return a v3 language model`;
}

function isLanguageModel(v: unknown): v is LanguageModelLike {
  if (typeof v !== "object" || v === null) return false;
  const m = v as Record<string, unknown>;
  return (
    m.specificationVersion === "v3" &&
    typeof m.doGenerate === "function" &&
    typeof m.doStream === "function"
  );
}

function hasLanguageModel(v: unknown): v is { languageModel(id: string): unknown } {
  return (
    typeof v === "object" &&
    v !== null &&
    typeof (v as { languageModel?: unknown }).languageModel === "function"
  );
}
