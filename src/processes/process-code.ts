/**
 * What one agent process runs, and how: the Node binary, the files it may
 * read (the same grants a thread of the worker would get, plus the
 * channel's framing), their view, Node's heap option and the confinement's
 * limits — everything {@link launchAgentProcess} needs but the channel.
 */
import { realpathSync } from "node:fs";
import { dirname, isAbsolute } from "node:path";
import { fileURLToPath } from "node:url";
import type { CheckedLimits } from "../os/limits.js";
import type { Sandbox } from "../sandbox/sandbox.js";
import { checkReadGrants, computeWorkerGrants } from "../threads/permissions.js";
import { DEFAULT_RESOURCE_LIMITS } from "../threads/thread-start.js";
import type { ProcessLaunch } from "./process-launch.js";
import { planProcessView } from "./process-view.js";

/** How a host confines its agent processes (checked by `createHost`). */
export interface ProcessConfinement {
  /** The trusted bubblewrap binary. */
  bwrap: string;
  /** Real path of the Node binary agents run on (the host's own). */
  nodePath: string;
  /** The limits of each agent process (those of `runCommand`). */
  limits: CheckedLimits;
}

/** The code of one agent process. */
export interface ProcessCode {
  /** Real path of the worker module. */
  module: string;
  /** Package names, or host paths of helper files and folders. */
  dependencies: readonly string[];
  /** The agent's sandbox: no grant may contain one of its folders. */
  sandbox: Sandbox | undefined;
  network: boolean;
  maxOldGenerationSizeMb: number | undefined;
}

/** The launch of an agent process, but for its channel, output and signal. */
export type PlannedLaunch = Omit<ProcessLaunch, "channel" | "onOutput" | "signal" | "onSpawned">;

/**
 * Plans the process of `code` under `confinement`.
 * @throws Error naming a declared package that is not installed, or a grant
 *   that would contain a sandbox folder (host-side setup mistakes)
 */
export function planAgentProcess(
  confinement: ProcessConfinement,
  code: ProcessCode,
): PlannedLaunch {
  const grants = checkReadGrants(
    foldRuntimeFiles([
      ...computeWorkerGrants(
        { module: code.module, dependencies: code.dependencies },
        { exactSelf: true },
      ),
      ...channelFiles(),
    ]),
    code.sandbox,
  );
  const folders = [dirname(code.module), ...code.dependencies.filter(isAbsolute)];
  const heap = code.maxOldGenerationSizeMb ?? DEFAULT_RESOURCE_LIMITS.maxOldGenerationSizeMb;
  const launch: PlannedLaunch = {
    bwrap: confinement.bwrap,
    nodePath: confinement.nodePath,
    nodeArgs: [`--max-old-space-size=${heap}`, "--disable-warning=ExperimentalWarning"],
    view: planProcessView(confinement.nodePath, grants, folders),
    network: code.network,
    limits: confinement.limits,
  };
  return launch;
}

/**
 * The grants with mountbox's own runtime files (`workers/*.js`,
 * `src/errors/*.js`) given as their two folders: the same code, read-only,
 * in two binds instead of some twenty (each bind costs bubblewrap ≈ 0.2 ms
 * on every start; a thread's permission model needs the files one by one).
 */
function foldRuntimeFiles(grants: readonly string[]): string[] {
  const folders = [
    realpathSync(fileURLToPath(new URL("../../workers/", import.meta.url))),
    realpathSync(fileURLToPath(new URL("../errors/", import.meta.url))),
  ];
  const kept = grants.filter((g) => !folders.some((f) => dirname(g) === f && g.endsWith(".js")));
  return [...kept, ...folders];
}

/** Real paths of the channel's modules (framing, encoding), which the process entry loads. */
function channelFiles(): string[] {
  return [
    "frames.js",
    "plain-codec.js",
    "plain-format.js",
    "plain-encode.js",
    "plain-decode.js",
  ].map((f) => realpathSync(fileURLToPath(new URL(`../port/${f}`, import.meta.url))));
}
