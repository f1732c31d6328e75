/**
 * Types of the host (DESIGN §7): worker specs, host options, events.
 * `loadProgram(dir)` produces {@link HostOptions}; `createHost` consumes them.
 */
import type { SandboxConfig } from "../config/sandbox-config.js";
import type { Sandbox } from "../sandbox/sandbox.js";

/**
 * How a worker narrows the sandbox it receives (DESIGN §3):
 * no key → unchanged; only `restrict`/`readonly` → `restrict()`;
 * any `allow*`/`inherit` → `restrict` first if given, then `derive()`.
 */
export interface WorkerSandboxSpec {
  /** Subtree to keep (same paths, no rebasing). */
  restrict?: string;
  /** May only downgrade. */
  readonly?: boolean;
  allowRead?: string | string[];
  allowWrite?: string | string[];
  /** Default false once any allow-list is given. */
  inherit?: boolean;
}

/** One worker the host can run. */
export interface WorkerSpec {
  /** Code worker: its built JS module (host path, relative to `basePath`, or `file:` URL). */
  module?: string;
  /** LLM worker (`.worker` body). Running it needs a model adapter (not in this release). */
  instructions?: string;
  /** One line for humans and models. */
  description?: string;
  /** Narrowing applied to the sandbox it receives from its caller. */
  sandbox?: WorkerSandboxSpec;
  /** Workers it may call with `ctx.delegate`; none listed = none. */
  delegates?: string[];
  /** Deadline for this worker's run (and its whole subtree), in ms. */
  timeoutMs?: number;
  /** Heap cap of its thread. */
  maxOldGenerationSizeMb?: number;
  /**
   * Host paths (files, or package folders) the module loads besides itself:
   * its own helper files, `node_modules/<pkg>` folders. The thread may read
   * exactly these; none may overlap a sandbox folder. Relative to `basePath`.
   */
  dependencies?: string[];
}

/** Options of `createHost`. */
export interface HostOptions {
  /** The root sandbox (a config or a Sandbox). Absent → no worker has any file access. */
  sandbox?: SandboxConfig | Sandbox;
  /** Folder that relative paths (sandbox root, modules) are relative to. */
  basePath?: string;
  /** The workers, by name. */
  workers: Record<string, WorkerSpec>;
  /** Deepest delegation chain (the top-level run is depth 1). Default 5. */
  maxDepth?: number;
  /** Most agents running at once; one waiting on a child does not count. Default 32. */
  maxAgents?: number;
  /** Spare threads started ahead of need, each used once. Default 0. */
  warmThreads?: number;
  /** Called with every event, synchronously. */
  onEvent?: (event: HostEvent) => void;
  /** Program name (from program.yaml), for events and messages. */
  name?: string;
}

/** What the host reports. Paths are always virtual. */
export type HostEvent =
  | {
      type: "agent_started";
      agentId: string;
      worker: string;
      depth: number;
      parentId?: string;
      time: number;
    }
  | { type: "agent_finished"; agentId: string; worker: string; durationMs: number; time: number }
  | {
      type: "agent_failed";
      agentId: string;
      worker: string;
      reason: string;
      message: string;
      durationMs: number;
      time: number;
    }
  | { type: "operation"; agentId: string; op: string; path?: string; ok: boolean; time: number }
  | {
      type: "denial";
      agentId: string;
      op: string;
      path?: string;
      code: string;
      message: string;
      time: number;
    };
