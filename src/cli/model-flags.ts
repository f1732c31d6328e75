/**
 * `mountbox run --model NAME=PROVIDER:ID`: binds a program's model name to a
 * model of an AI SDK provider package the app has installed. The package is
 * imported by the host as the app has it: looked up from where mountbox is
 * installed, then from the working folder — never from the program folder,
 * which is someone else's code when you run someone else's program, and
 * never from a place an agent of the program could write (an agent could
 * plant a package there for the next run to import: found by a review). It
 * reads its key from its usual environment variable, in the host only: agent
 * threads get an empty environment and reach the model through their port.
 */
import { readFileSync, realpathSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { escapeControl } from "../errors/index.js";
import type { LanguageModelLike } from "../host/host-types.js";
import { UsageError } from "./cli-io.js";

/** How a provider name becomes a model: its package, and how to make its provider. */
interface ProviderRecipe {
  pkg: string;
  /** The environment variable its key comes from (checked before the run). */
  keyVariable?: string;
  /** Makes the provider from the package's exports. */
  make: (exports: Record<string, unknown>) => unknown;
}

/** The endpoint an `ollama:ID` model speaks to unless `OLLAMA_BASE_URL` says otherwise. */
const OLLAMA_DEFAULT_URL = "http://127.0.0.1:11434/v1";

function makeCompatible(name: string, baseURL: string, apiKey: string | undefined) {
  return (exports: Record<string, unknown>) => {
    const create = exports.createOpenAICompatible as (o: object) => unknown;
    return create({ name, baseURL, ...(apiKey === undefined ? {} : { apiKey }) });
  };
}

/** The recipe for a provider name, or undefined for a name mountbox does not know. */
function findRecipe(provider: string, env: NodeJS.ProcessEnv): ProviderRecipe | undefined {
  const named = (pkg: string, exportName: string, keyVariable: string): ProviderRecipe => ({
    pkg,
    keyVariable,
    make: (exports) => exports[exportName],
  });
  switch (provider) {
    case "openai":
      return named("@ai-sdk/openai", "openai", "OPENAI_API_KEY");
    case "anthropic":
      return named("@ai-sdk/anthropic", "anthropic", "ANTHROPIC_API_KEY");
    case "google":
      return named("@ai-sdk/google", "google", "GOOGLE_GENERATIVE_AI_API_KEY");
    case "mistral":
      return named("@ai-sdk/mistral", "mistral", "MISTRAL_API_KEY");
    case "groq":
      return named("@ai-sdk/groq", "groq", "GROQ_API_KEY");
    case "xai":
      return named("@ai-sdk/xai", "xai", "XAI_API_KEY");
    case "deepseek":
      return named("@ai-sdk/deepseek", "deepseek", "DEEPSEEK_API_KEY");
    case "ollama":
      return {
        pkg: "@ai-sdk/openai-compatible",
        make: makeCompatible("ollama", env.OLLAMA_BASE_URL ?? OLLAMA_DEFAULT_URL, undefined),
      };
    case "openai-compatible": {
      const url = env.OPENAI_COMPATIBLE_BASE_URL;
      if (url === undefined || url === "")
        throw new UsageError(
          "--model …=openai-compatible:ID needs OPENAI_COMPATIBLE_BASE_URL (e.g. http://127.0.0.1:8080/v1); its key, if any, comes from OPENAI_COMPATIBLE_API_KEY",
        );
      return {
        pkg: "@ai-sdk/openai-compatible",
        make: makeCompatible("openai-compatible", url, env.OPENAI_COMPATIBLE_API_KEY),
      };
    }
    default:
      return undefined;
  }
}

/** The providers `--model` knows, for messages and help. */
export const KNOWN_PROVIDERS =
  "openai, anthropic, google, mistral, groq, xai, deepseek, ollama, openai-compatible";

/** One `--model` value, split. */
export interface ModelFlag {
  name: string;
  provider: string;
  id: string;
}

/** Splits `NAME=PROVIDER:ID`; a UsageError names what is wrong. */
export function parseModelFlag(raw: string): ModelFlag {
  const m = /^([^=:\s]+)=([a-z][a-z0-9-]*):(\S+)$/.exec(raw);
  if (m === null)
    throw new UsageError(
      `--model takes NAME=PROVIDER:ID (e.g. --model fast=openai:gpt-5-mini), not '${escapeControl(raw.slice(0, 60))}'`,
    );
  return { name: m[1] as string, provider: m[2] as string, id: m[3] as string };
}

/**
 * Imports `pkg` as the app has it installed: from `fromDirs`, in order,
 * preferring the package's ESM entry. Undefined when none has it.
 */
async function importFromApp(
  pkg: string,
  fromDirs: string[],
  isAgentWritable: (hostPath: string) => boolean,
): Promise<Record<string, unknown>> {
  for (const dir of fromDirs) {
    const require = createRequire(join(dir, "noop.js"));
    let manifest: string;
    try {
      manifest = require.resolve(`${pkg}/package.json`);
    } catch {
      continue;
    }
    const json = JSON.parse(readFileSync(manifest, "utf8")) as {
      exports?: { ".": { import?: string } | string };
    };
    const dot = json.exports?.["."];
    const entry =
      typeof dot === "object" && typeof dot.import === "string"
        ? join(dirname(manifest), dot.import)
        : require.resolve(pkg);
    if ([dirname(manifest), manifest, entry].some((f) => isAgentWritable(realpathSync(f))))
      throw new UsageError(
        `--model: the '${pkg}' found lies where the program's agents can write; install it where they cannot (beside mountbox, outside the sandbox's writable areas)`,
      );
    return (await import(pathToFileURL(entry).href)) as Record<string, unknown>;
  }
  throw new UsageError(
    `--model: the app has no '${pkg}'; install it beside mountbox (npm install ${pkg})`,
  );
}

/**
 * The `models` table of `createHost` for the given flags. Each NAME must be
 * the model of an LLM worker the run can reach (`used`); each provider's
 * package is imported from where mountbox is installed or the working
 * folder, never from a file `isAgentWritable` says an agent could write,
 * and its key variable must be set.
 */
export async function loadModelFlags(
  raws: readonly string[],
  used: ReadonlySet<string>,
  isAgentWritable: (hostPath: string) => boolean,
  env: NodeJS.ProcessEnv = process.env,
): Promise<Record<string, LanguageModelLike>> {
  const fromDirs = [dirname(fileURLToPath(import.meta.url)), process.cwd()];
  const models: Record<string, LanguageModelLike> = {};
  for (const raw of raws) {
    const flag = parseModelFlag(raw);
    if (!used.has(flag.name))
      throw new UsageError(
        `--model: no LLM worker of this run uses a model named '${escapeControl(flag.name)}'${used.size > 0 ? `; models used: ${[...used].join(", ")}` : "; it runs no LLM worker"}`,
      );
    if (flag.name in models)
      throw new UsageError(`--model: '${escapeControl(flag.name)}' is given twice`);
    const recipe = findRecipe(flag.provider, env);
    if (recipe === undefined)
      throw new UsageError(
        `--model: unknown provider '${escapeControl(flag.provider)}'; providers: ${KNOWN_PROVIDERS}`,
      );
    if (recipe.keyVariable !== undefined && !env[recipe.keyVariable])
      throw new UsageError(
        `--model ${escapeControl(flag.name)}=${flag.provider}:…: set ${recipe.keyVariable} (the host reads it; agents never see it)`,
      );
    const provider = recipe.make(await importFromApp(recipe.pkg, fromDirs, isAgentWritable)) as
      | ((id: string) => LanguageModelLike)
      | undefined;
    if (typeof provider !== "function")
      throw new UsageError(
        `--model: '${recipe.pkg}' does not export the provider mountbox expects`,
      );
    models[flag.name] = provider(flag.id);
  }
  return models;
}
