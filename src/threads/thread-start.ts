/**
 * Starting one agent's thread, hardened: Node's permission model with read
 * grants for exactly its module and dependencies, no environment, no argv,
 * captured stdio, heap limits — or a warm spare, hardened when it started,
 * booted with the agent's module and input.
 */
import { realpathSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { type MessagePort, type ResourceLimits, Worker } from "node:worker_threads";
import type { ThreadBootData } from "../port/protocol.js";
import {
  checkReadGrants,
  computeExecArgv,
  computeWorkerGrants,
  threadEntryUrl,
} from "./permissions.js";
import type { AgentThreadOptions } from "./thread-options.js";

/** Default heap limits of an agent thread. */
export const DEFAULT_RESOURCE_LIMITS: ResourceLimits = {
  maxOldGenerationSizeMb: 256,
  maxYoungGenerationSizeMb: 32,
  stackSizeMb: 4,
};

/** Resolves the real path of a worker module given as a host path or `file:` URL. */
export function resolveModulePath(module: string | URL): string {
  return realpathSync(
    typeof module === "string" && !module.startsWith("file:") ? module : fileURLToPath(module),
  );
}

/**
 * Computes the hardening flags of a new thread for the module at
 * `modulePath`: read grants for it and its dependencies, never inside the
 * sandbox. A spare was hardened when it started, with grants the host
 * computed: it gets none.
 */
export function computeThreadExecArgv(opts: AgentThreadOptions, modulePath: string): string[] {
  return opts.spare
    ? []
    : computeExecArgv({
        readPaths: checkReadGrants(
          computeWorkerGrants({ module: modulePath, dependencies: opts.dependencies ?? [] }),
          opts.sandbox,
        ),
        network: opts.network === true,
      });
}

/**
 * Starts the agent's thread with `boot` (handing it `threadPort`): boots
 * the spare of `opts`, or starts a new Worker with `execArgv`.
 * @throws whatever starting the Worker throws
 */
export function startWorker(
  opts: AgentThreadOptions,
  boot: ThreadBootData,
  threadPort: MessagePort,
  execArgv: string[],
): Worker {
  if (opts.spare) {
    const worker = opts.spare;
    worker.removeAllListeners();
    worker.postMessage({ kind: "boot", boot }, [threadPort, ...(opts.transferList ?? [])]);
    return worker;
  }
  return new Worker(threadEntryUrl(), {
    workerData: boot,
    transferList: [threadPort, ...(opts.transferList ?? [])],
    execArgv,
    env: {},
    argv: [],
    stdout: true,
    stderr: true,
    stdin: false,
    resourceLimits: { ...DEFAULT_RESOURCE_LIMITS, ...opts.resourceLimits },
    // The thread must not inherit the host's own `--require`/`--import`
    // hooks through process.execArgv: execArgv above replaces them.
  });
}
