/**
 * What a worker is, as configuration: the keys of a code worker entry or a
 * `.worker` file (camelCase here; snake_case in YAML), shared by the config
 * loader and the host.
 */

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
  /**
   * Secret name patterns to withhold in addition to the caller's (a worker
   * can add secrets, never remove one; `[]` is refused).
   */
  secrets?: string[];
}

/** One worker the host can run. */
export interface WorkerSpec {
  /** Code worker: its built JS module (host path, relative to `basePath`, or `file:` URL). */
  module?: string;
  /**
   * LLM worker (`.worker` body): the system instructions of an AI SDK tool
   * loop run in the agent's thread. A worker with instructions and no
   * `module` is an LLM worker; it needs a `model`.
   */
  instructions?: string;
  /**
   * LLM worker: the name of its model in `createHost({ models })` — a key
   * whose value is a language model, or `key:id` where `models[key]` is a
   * provider or provider registry (`languageModel(id)`).
   */
  model?: string;
  /** LLM worker: the tools it is given (a subset of the tool layer's names). Default: see the tool layer. */
  tools?: string[];
  /** LLM worker: most model steps of its tool loop. Default 20. */
  maxSteps?: number;
  /**
   * LLM worker: run its loop streaming (`streamText`), so its model's text
   * arrives as `model_text` events while each step runs. Default false.
   */
  stream?: boolean;
  /**
   * LLM worker: the MCP servers (names in `createHost({ mcpServers })`)
   * whose tools it is offered, as `SERVER__TOOL`. A callee may use only
   * those its caller may use too.
   */
  mcp?: string[];
  /** Let the agent run shell commands (`ctx.runCommand`, the `shell` tool) under OS enforcement. Default false. */
  shell?: boolean;
  /**
   * Give the agent the git tools (`ctx.git`; `git_status`, `git_diff`,
   * `git_log`, `git_commit` for an LLM worker), run by the host under OS
   * enforcement. Each call still needs read access to the whole repository
   * (and a commit write access to its `.git`). Default false.
   */
  git?: boolean;
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
   * What the module imports besides `mountbox/worker`: package names
   * (`"zod"`, `"@scope/pkg"` — found from the module's folder as Node finds
   * them, with everything they depend on) or paths of its own helper files
   * and folders (`"./lib"`, relative to `basePath`). The thread may read
   * exactly these, its module and mountbox's thread code.
   */
  dependencies?: string[];
  /**
   * Give the agent's thread the network (default false). Node can take the
   * network away only from Node 25 on (`--allow-net`); before that a thread
   * always has it, and the host warns once when such a worker runs.
   */
  network?: boolean;
  /**
   * Where the agent's code runs: `"thread"` (default), a hardened worker
   * thread of the host process — fast, a seat belt for trusted code — or
   * `"process"`, its own Node process under kernel confinement (bubblewrap,
   * Linux), which sees none of the sandbox's areas and reaches them only
   * through the host: for code no one reviewed. The same module runs
   * unchanged either way.
   */
  isolation?: Isolation;
}

/** Where an agent's code runs; see {@link WorkerSpec.isolation}. */
export type Isolation = "thread" | "process";
