/**
 * The wire protocol between an agent thread and the host.
 *
 * Shared by both sides, so it imports nothing at run time but the error
 * classes: the thread side must stay free of host code (and fast to load).
 * Everything here is plain data. The sandbox's own data types
 * (`SandboxDescription`, `FileStat`, `FileEdit`, grep's options and results)
 * cross the port too; their home is `src/sandbox/types.ts`, which the core
 * owns, and they are re-exported here for the thread side.
 *
 * Sandbox port (one `MessagePort` per agent):
 *   request `{ id, op, args }` → reply `{ id, ok: true, value }` or
 *   `{ id, ok: false, error }`. `id` is a non-negative safe integer chosen by
 *   the worker; a reply to a message whose id could not be read has `id: null`.
 *
 * Parent port (`parentPort` of the thread), thread → host:
 *   `{ kind: "result", value }`, `{ kind: "error", error }`, `{ kind: "log", level, message }`.
 * Host → thread: `{ kind: "abort", reason }`.
 */

export type {
  FileEdit,
  FileStat,
  GrepMatch,
  GrepOptions,
  GrepResult,
  SandboxDescription,
} from "../sandbox/types.js";

// ---- The protocol ----

/** Operations the host serves on a sandbox port. Anything else is refused. */
export const SANDBOX_OPS = [
  "readFile",
  "readBytes",
  "writeFile",
  "editFile",
  "listFiles",
  "stat",
  "exists",
  "mkdir",
  "remove",
  "move",
  "canRead",
  "canWrite",
  "readableRoots",
  "writableRoots",
  "describe",
  "grep",
] as const;

/** One allowlisted sandbox operation. */
export type SandboxOp = (typeof SANDBOX_OPS)[number];

/**
 * Reserved for Runtime II: `ctx.delegate(worker, input, opts)` travels as op
 * `"delegate"` on the same port and is served only when the host was given a
 * delegate handler.
 */
export const DELEGATE_OP = "delegate";

/**
 * A model call of an LLM agent (`doGenerate` of its proxy model): one
 * argument, the call options as plain data — with `reuseTools: true`
 * instead of `tools` when they equal those of its last call that sent
 * tools. Served only for LLM workers; the host picks the model from the
 * worker's spec, never from the request.
 */
/**
 * The language-model call options that cross the port (plain data); the
 * rest — abortSignal, headers, providerOptions — stay in the thread.
 */
export const MODEL_CALL_KEYS = [
  "prompt",
  "maxOutputTokens",
  "temperature",
  "stopSequences",
  "topP",
  "topK",
  "presencePenalty",
  "frequencyPenalty",
  "responseFormat",
  "seed",
  "tools",
  "toolChoice",
  "includeRawChunks",
] as const;

export const MODEL_GENERATE_OP = "model.generate";

/** Like {@link MODEL_GENERATE_OP} for `doStream`: the reply is every stream part, read to the end host-side. */
export const MODEL_STREAM_OP = "model.stream";

/**
 * `ctx.runCommand(command, opts)`: a shell command under OS enforcement over
 * the agent's sandbox. Served only for workers with `shell: true`.
 */
export const RUN_COMMAND_OP = "runCommand";

/**
 * A git tool call (`ctx.git(tool, args)`): `[tool, arguments]`, a git tool's
 * name and a plain object. Served only for workers with `git: true`; the
 * host runs git (under OS enforcement) and replies with the tool's text.
 */
export const GIT_OP = "git";

/**
 * An MCP tool call of an LLM agent: `[server, tool, arguments]` (strings and
 * a plain object). Served only for LLM workers; the host checks that the
 * agent may use the server (DESIGN §10) and calls it with its own connection.
 * The reply is the tool's content as text.
 */
export const MCP_CALL_OP = "mcp.call";

/** One MCP tool an LLM agent is offered: `SERVER__TOOL`, with the server's description and schema. */
export interface LlmMcpTool {
  /** The name the model sees: `SERVER__TOOL`. */
  name: string;
  server: string;
  /** The server's own name of the tool. */
  tool: string;
  description?: string;
  inputSchema: Record<string, unknown>;
}

/** Options of `ctx.runCommand` as they cross the port. */
export interface RunCommandRequest {
  /** Wall-clock limit in ms (never beyond the agent's deadline). */
  timeoutMs?: number;
}

/** What `ctx.runCommand` resolves with. */
export interface RunCommandReply {
  exitCode: number;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  truncated: boolean;
  /** Explanations for a model (virtual paths only). */
  notes: string[];
  /** False only when the host let the command run without OS enforcement. */
  confined: boolean;
}

/**
 * What the host hands the built-in LLM worker module as its input: the
 * worker's configuration (from its spec, host-side) and the agent's input.
 */
export interface LlmWorkerInput {
  instructions: string;
  maxSteps?: number;
  /** True when the loop streams (`stream: true`): the host shows the text as it comes. */
  stream?: boolean;
  /** Tool names the worker asked for; absent → the tool layer's default. */
  toolNames?: string[];
  /** Workers `call_worker` may call (its delegates), with their descriptions. */
  workers: { name: string; description?: string }[];
  /** True when the `shell` tool is to be offered (`shell: true`). */
  shell: boolean;
  /** True when the git tools are to be offered (`git: true`). */
  git?: boolean;
  /** MCP tools it may call (those of the servers it may use), absent when none. */
  mcpTools?: LlmMcpTool[];
  /** The agent's own input (the prompt). */
  input: unknown;
}

/** A request from the worker. */
export interface PortRequest {
  id: number;
  op: string;
  args: unknown[];
}

/** The wire form of an error (a `SandboxError`'s `toJSON()`, or a protocol error). */
export interface WireError {
  name: string;
  code: string;
  message: string;
  path?: string;
}

/**
 * A reply from the host. A big value comes with `ack: true`: its bytes count
 * against the agent's budget until the thread answers with an {@link ACK_OP}
 * request of the same id (no reply), so a thread that stops reading its port
 * cannot make the host pile up replies.
 */
export type PortReply =
  | { id: number; ok: true; value: unknown; ack?: true }
  | { id: number | null; ok: false; error: WireError };

/** The op by which a thread acknowledges a reply sent with `ack: true`. */
export const ACK_OP = "ack";

/** Code of errors about the request itself (bad op, bad arguments, too many in flight). */
export const INVALID_REQUEST = "invalid_request";

/** Messages the thread posts on its `parentPort`. */
export type ThreadMessage =
  | { kind: "result"; value: unknown }
  | { kind: "error"; error: { name: string; message: string; code?: string; path?: string } }
  | {
      kind: "log";
      level: LogLevel;
      message: string;
      /** On a summary line only: how many lines were dropped over the thread's log budget. */
      dropped?: number;
    };

/** Levels of `ctx.log`. */
export type LogLevel = "debug" | "info" | "warn" | "error";

/** A file handed to a callee by its caller (read through the caller's sandbox). */
export interface Attachment {
  /** Virtual path in the caller's sandbox. */
  path: string;
  /** Guessed from the name, e.g. `application/pdf`. */
  mediaType: string;
  bytes: Uint8Array;
}

/**
 * What the thread entry receives: as `workerData` for a fresh thread, or in a
 * `{ kind: "boot", boot }` message for a warm spare started ahead of need.
 */
export interface ThreadBootData {
  /** `file:` URL of the worker module to import. */
  moduleUrl: string;
  /** The agent's input (structured-cloned). */
  input: unknown;
  /** The sandbox port (transferred). */
  port: unknown;
  /** Files its caller attached (delegation only). */
  attachments?: Attachment[];
}

/** `workerData` of a warm spare: it waits for its boot message. */
export interface WarmBootData {
  warm: true;
}

export { InvalidRequestError } from "../errors/index.js";
