/**
 * A host's process workers, set up by `createHost`: kernel confinement must
 * be available (else a ConfigError naming each such worker and why), the
 * confinement every agent process runs under, and the warm spares.
 */
import { realpathSync } from "node:fs";
import { pathToFileURL } from "node:url";
import type { WorkerSpec } from "../config/worker-spec.js";
import { configError } from "../errors/index.js";
import { isLlmWorker } from "../models/worker-models.js";
import { findBwrap } from "../os/bwrap-binary.js";
import { describeUnavailability } from "../os/command-notes.js";
import { checkLimits } from "../os/limits.js";
import { policyOf, type Sandbox } from "../sandbox/sandbox.js";
import { type PlannedLaunch, type ProcessConfinement, planAgentProcess } from "./process-code.js";
import { ProcessSpares } from "./process-spares.js";

/** What a host needs to run process agents. */
export interface ProcessSetup {
  confinement: ProcessConfinement;
  /** Each process worker's launch, planned once (its files do not change while the host runs). */
  plans: Map<string, PlannedLaunch>;
  spares: ProcessSpares | undefined;
}

/** A worker's code: its module and dependencies (an LLM worker's are the built-in LLM worker's). */
export type CodeOf = (spec: WorkerSpec) => { module: string; dependencies: readonly string[] };

/**
 * Checks that the host can confine processes, if any worker runs as one,
 * and starts `warm` spares for each such worker.
 * @throws ConfigError naming every process worker, when bubblewrap cannot be used here
 */
export async function setUpProcesses(
  workers: ReadonlyMap<string, WorkerSpec>,
  root: Sandbox,
  warm: number,
  codeOf: CodeOf,
): Promise<ProcessSetup | undefined> {
  const names = [...workers].filter(([, w]) => w.isolation === "process").map(([n]) => n);
  if (names.length === 0) return undefined;
  const found = await findBwrap(policyOf(root), undefined);
  if ("why" in found)
    throw configError(
      names.map((n) => ({
        path: ["workers", n, "isolation"],
        message: `"process" runs the agent under kernel confinement, which is not available here: ${describeUnavailability(found.why)}. Use "thread" (a hardened worker thread) where that is enough`,
      })),
    );
  const confinement: ProcessConfinement = {
    bwrap: found.path,
    nodePath: realpathSync(process.execPath),
    limits: checkLimits(undefined),
  };
  const plans = new Map<string, PlannedLaunch>();
  for (const name of names) {
    const spec = workers.get(name)!;
    const code = codeOf(spec);
    plans.set(
      name,
      planAgentProcess(confinement, {
        module: code.module,
        dependencies: code.dependencies,
        sandbox: root,
        // An LLM agent never needs the network: the host makes its model calls.
        network: !isLlmWorker(spec) && spec.network === true,
        maxOldGenerationSizeMb: spec.maxOldGenerationSizeMb,
      }),
    );
  }
  if (warm === 0) return { confinement, plans, spares: undefined };
  // Spares import their module ahead.
  const sparePlans = new Map(
    [...plans].map(([name, plan]) => {
      const module = codeOf(workers.get(name)!).module;
      return [name, { ...plan, preload: pathToFileURL(module).href }];
    }),
  );
  return { confinement, plans, spares: new ProcessSpares(warm, sparePlans) };
}
