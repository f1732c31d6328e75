/**
 * Types of the host (DESIGN §7): worker specs, host options, events.
 * `loadProgram(dir)` produces {@link HostOptions}; `createHost` consumes them.
 */

import type { Writable } from "node:stream";
import type { OnApproval } from "../approvals/approval-types.js";
import type { SandboxConfig } from "../config/sandbox-config.js";
import type { Isolation, WorkerSpec } from "../config/worker-spec.js";
import type { McpServerConfig } from "../mcp-client/mcp-servers.js";
import type { Sandbox } from "../sandbox/sandbox.js";

export type {
  ApprovalDecision,
  ApprovalOperation,
  ApprovalRequest,
  OnApproval,
} from "../approvals/approval-types.js";
export type { Isolation, WorkerSandboxSpec, WorkerSpec } from "../config/worker-spec.js";
export type {
  McpApproval,
  McpHttpServerConfig,
  McpServerConfig,
  McpStdioServerConfig,
} from "../mcp-client/mcp-servers.js";

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
  /**
   * Most agent threads alive at once, callers waiting on callees included
   * (a waiting caller's thread can still run code). A delegation beyond it
   * is refused, never queued. Default `maxAgents + maxDepth − 1`: one chain
   * of full depth beside the other running agents.
   */
  maxThreads?: number;
  /** Spare threads started ahead of need, each used once. Default 0. */
  warmThreads?: number;
  /**
   * Where workers run unless their spec says otherwise: `"thread"` (the
   * default) or `"process"` (its own Node process under kernel confinement;
   * Linux with bubblewrap). See {@link WorkerSpec.isolation}.
   */
  isolation?: Isolation;
  /**
   * Spare processes started (and their module imported) ahead of need for
   * each process worker, each used once. Default 0.
   */
  warmProcesses?: number;
  /** Called with every event, synchronously. */
  onEvent?: (event: HostEvent) => void;
  /** Program name (from program.yaml), for events and messages. */
  name?: string;
  /**
   * The models LLM workers may use, by name: AI SDK language models of
   * AI SDK 6 or 7 (`specificationVersion` "v3" or "v4", middleware-wrapped
   * ones too), or providers (`createOpenAI()`, …) / provider registries (a
   * worker's `model: "key:id"` calls `models[key].languageModel(id)`). Held
   * by the host: threads reach them only through the port and never hold a
   * key.
   */
  models?: ModelsOption;
  /**
   * Retries of a model call that failed with an error its provider marks
   * retryable (429, 5xx, no answer, …), made by the host with the AI SDK's
   * backoff (2 s, 4 s, …, or what `retry-after` asks). Default 2, as the AI
   * SDK's `maxRetries`; 0 turns them off.
   */
  modelRetries?: number;
  /**
   * Decides approvals (`read_approval`/`write_approval` areas, shell
   * commands there, dynamic expansion). Absent → every such request is
   * denied. See {@link ApprovalRequest}.
   */
  onApproval?: OnApproval;
  /**
   * Audit log: a file path (appended; relative to `basePath`) or a writable
   * stream; one JSON line per operation, approval request, decision, grant
   * and denial. If it cannot be written the host stops every agent and
   * refuses further runs.
   */
  auditLog?: string | Writable;
  /** Dynamic expansion (off by default); overrides the sandbox config's `dynamic`. */
  dynamic?: DynamicOption;
  /**
   * MCP servers the host holds, by name (DESIGN §10): `{ command, args?,
   * env?, cwd? }` (stdio, started by the host) or `{ url, headers? }`
   * (Streamable HTTP), each with `approval?: "always" | "never"`. Those some
   * worker names in `mcp` are connected at `createHost`; an LLM worker is
   * offered the tools of the servers it names as `SERVER__TOOL`.
   */
  mcpServers?: Record<string, McpServerConfig>;
}

/**
 * Dynamic sandbox expansion: an agent's access outside its sandbox asks the
 * approver (operation `expand`) for that directory, for this run only.
 */
export interface DynamicOption {
  enabled: boolean;
  /**
   * Virtual paths of the host's sandbox beyond which no grant goes (default:
   * all of the host's sandbox — an expansion never reaches a folder the
   * host's sandbox does not already mount).
   */
  ceiling?: string | string[];
}

/**
 * An AI SDK language model (`LanguageModelV3` of AI SDK 6 or
 * `LanguageModelV4` of AI SDK 7, from `@ai-sdk/provider`), structurally:
 * mountbox does not need `ai` for its types.
 */
export interface LanguageModelLike {
  readonly specificationVersion: "v3" | "v4";
  readonly provider: string;
  readonly modelId: string;
  doGenerate(options: never): PromiseLike<unknown>;
  doStream(options: never): PromiseLike<unknown>;
}

/**
 * A provider or provider registry: anything with `languageModel(id)` — the
 * function `createOpenAI()` / `createOpenAICompatible()` return, an object,
 * `createProviderRegistry(…)`.
 */
export interface LanguageModelProviderLike {
  languageModel(id: string): unknown;
}

/** `createHost({ models })`: language models and providers by name. */
export type ModelsOption = Record<string, LanguageModelLike | LanguageModelProviderLike>;

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
  | {
      type: "operation";
      agentId: string;
      op: string;
      path?: string;
      ok: boolean;
      /** Set when it did not complete because its agent stopped (`ok` is false then). */
      aborted?: true;
      time: number;
    }
  | {
      /** A `ctx.log` line, or a line the thread wrote to stdout/stderr (`stream`). */
      type: "log";
      agentId: string;
      worker: string;
      level: "debug" | "info" | "warn" | "error";
      stream?: "stdout" | "stderr";
      message: string;
      /** On a summary line only: how many lines were dropped over the agent's log budget. */
      dropped?: number;
      time: number;
    }
  | {
      /** One model call of an LLM agent, made by the host (its retries included). */
      type: "model_call";
      agentId: string;
      worker: string;
      /** The worker's `model` name. */
      model: string;
      /** `ok`, or `error` when the call failed (after its retries). */
      status: "ok" | "error";
      /** Attempts made: 1, plus the retries. */
      attempts: number;
      inputTokens?: number;
      outputTokens?: number;
      /** `stop`, `tool-calls`, `length`, … (the SDK's unified reason); `error` for a failed call. */
      finishReason: string;
      /**
       * A failed call: why — `auth_failed`, `rate_limited`, `bad_request`,
       * `provider_error`, `network_error`, `invalid_response`, `timeout`,
       * `aborted` (the agent was stopped) or `failed`.
       */
      errorCode?: string;
      /** A failed call: the provider's HTTP status, when it answered. */
      statusCode?: number;
      /** A failed call: whether trying again later may work. */
      isRetryable?: boolean;
      durationMs: number;
      time: number;
    }
  | {
      /**
       * Text of an LLM agent's model as it streams in (workers with
       * `stream: true`), one piece at a time: `text`, or `reasoning` for
       * the model's reasoning. Control characters other than newlines and
       * tabs are escaped.
       */
      type: "model_text";
      agentId: string;
      worker: string;
      model: string;
      kind: "text" | "reasoning";
      delta: string;
      time: number;
    }
  | {
      /**
       * One tool call of an LLM agent, as its model asked for it; `outcome`
       * from the result the next model call carried (`unknown` if none did).
       */
      type: "tool_call";
      agentId: string;
      tool: string;
      /** The virtual path it names, if any (control characters escaped). */
      path?: string;
      outcome: "ok" | "error" | "denied" | "unknown";
      time: number;
    }
  | {
      /** One MCP tool call of an LLM agent, made by the host with its own connection. */
      type: "mcp_call";
      agentId: string;
      worker: string;
      /** The server's name in `mcpServers`. */
      server: string;
      /** The tool, as the server listed it. */
      tool: string;
      /** `denied` when its approval was refused. */
      outcome: "ok" | "error" | "denied";
      durationMs: number;
      time: number;
    }
  | {
      type: "denial";
      agentId: string;
      op: string;
      path?: string;
      code: string;
      message: string;
      time: number;
    };
