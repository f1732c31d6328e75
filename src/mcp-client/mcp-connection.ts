/**
 * One MCP server held by the host (DESIGN §10), for the host's whole life:
 * connected and listed at `createHost`; its tool list kept current
 * (`notifications/tools/list_changed`); at most
 * {@link MAX_CALLS_PER_SERVER} calls in flight, the rest queued; restarted
 * when it stopped — once per call, never sooner than a backoff after the
 * last attempt; stopped with its whole process group at `close()`.
 */
import { resolve } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import {
  type CallToolResult,
  ToolListChangedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { DelegationRefusedError, escapeControl } from "../errors/index.js";
import { CallLimiter } from "./call-limiter.js";
import { describeFailure, hideSecrets, isConnectionLoss } from "./mcp-failure.js";
import type { McpApproval, McpServerConfig, McpToolInfo } from "./mcp-servers.js";
import { StdioGroupTransport } from "./stdio-group-transport.js";

/** Calls of one server in flight at once, from all agents; the rest wait in order. */
export const MAX_CALLS_PER_SERVER = 8;
/** Wait before the second restart in a row; doubled for each further one. */
export const FIRST_RESTART_DELAY_MS = 1000;
/** Longest wait between restarts; a server up this long counts as healthy again. */
export const MAX_RESTART_DELAY_MS = 60_000;
/** How long connecting and listing may take (at createHost and at a restart). */
const CONNECT_TIMEOUT_MS = 30_000;
/** Most tools kept of one server. */
const MAX_TOOLS = 1000;
/** Tool names as model providers take them (OpenAI: `^[a-zA-Z0-9_-]{1,64}$`). */
const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/** How failures are told, for a process the host runs or a connection it makes. */
const WORDS = {
  stdio: {
    lost: (n: string) => `The MCP server '${n}' stopped`,
    again: "It is restarted",
    failed: "could not be restarted",
    attempt: "restart",
    notAgain: "is not restarted again",
    stopped: "the next call of one of its tools restarts it",
  },
  http: {
    lost: (n: string) => `The connection to the MCP server '${n}' failed`,
    again: "It is made again",
    failed: "could not be made again",
    attempt: "reconnect",
    notAgain: "is not tried again",
    stopped: "the next call of one of its tools connects again",
  },
} as const;

/** Options for tests: the clock restarts are timed by. */
export interface McpConnectionOptions {
  now?: () => number;
}

/** One server: its current tool list, and calls that restart it when needed. */
export class McpServerConnection {
  readonly name: string;
  readonly approval: McpApproval;
  readonly #config: McpServerConfig;
  readonly #basePath: string;
  readonly #secrets: string[];
  readonly #words: (typeof WORDS)[keyof typeof WORDS];
  readonly #now: () => number;
  readonly #limiter = new CallLimiter(MAX_CALLS_PER_SERVER);
  #tools: McpToolInfo[] = [];
  #client: Client | undefined;
  #pid: number | undefined;
  #closed = false;
  #upSince = 0;
  /** Restart attempts since the server last stayed up {@link MAX_RESTART_DELAY_MS}. */
  #restarts = 0;
  #lastAttempt = 0;
  #restarting: Promise<Client> | undefined;
  #refreshing: Promise<void> | undefined;
  #refreshAgain = false;
  /** The skipped tools last warned about: a listing warns only when they change. */
  #warned = "";

  constructor(
    name: string,
    config: McpServerConfig,
    basePath: string,
    options: McpConnectionOptions = {},
  ) {
    this.name = name;
    this.approval = config.approval ?? "never";
    this.#config = config;
    this.#basePath = basePath;
    this.#secrets = Object.values(
      "command" in config ? (config.env ?? {}) : (config.headers ?? {}),
    );
    this.#now = options.now ?? Date.now;
    this.#words = "command" in config ? WORDS.stdio : WORDS.http;
  }

  /** The tools offered (names checked), as last listed. */
  get tools(): readonly McpToolInfo[] {
    return this.#tools;
  }

  /** A stdio server's pid (its process group), while connected. */
  get pid(): number | undefined {
    return this.#client ? this.#pid : undefined;
  }

  /** Calls in flight and calls waiting for a slot. */
  get load(): { running: number; waiting: number } {
    return { running: this.#limiter.running, waiting: this.#limiter.waiting };
  }

  /**
   * Connects and lists the tools.
   * @throws the connection's own error (see {@link describeFailure})
   */
  async start(): Promise<void> {
    this.#client = await this.#connect();
  }

  /** `text` without the server's env or header values. */
  hide(text: string): string {
    return hideSecrets(text, this.#secrets);
  }

  /** Why a connection or call failed, without URLs or secrets. */
  describe(err: unknown, max?: number): string {
    return describeFailure(err, this.#secrets, max);
  }

  /** Resolves once a tool list the server announced as changed has been read. */
  async settled(): Promise<void> {
    await this.#refreshing;
  }

  /**
   * Calls `tool` once a slot is free, restarting the server first if it
   * stopped (and the backoff allows).
   * @throws DelegationRefusedError when the server is down or stops during the call
   */
  call(tool: string, args: Record<string, unknown>, signal: AbortSignal): Promise<CallToolResult> {
    return this.#limiter.run(async () => {
      const client = await abortable(this.#live(), signal);
      try {
        return (await client.callTool({ name: tool, arguments: args }, undefined, {
          signal,
        })) as CallToolResult;
      } catch (err) {
        if (signal.aborted || !isConnectionLoss(err)) throw err;
        this.#lose(client);
        throw new DelegationRefusedError(
          `${this.#words.lost(this.name)} during the call of '${escapeControl(tool.slice(0, 100))}' (${this.describe(err, 100)}); whether the call took effect is not known. ${this.#words.again} at the next call of one of its tools.`,
        );
      }
    }, signal);
  }

  /** Stops the server (a stdio server's whole process group); later calls are refused. */
  async close(): Promise<void> {
    this.#closed = true;
    const client = this.#client;
    this.#client = undefined;
    await Promise.allSettled([client?.close(), this.#restarting]);
  }

  async #connect(): Promise<Client> {
    const client = new Client({ name: "mountbox", version: "1" });
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      if (this.#client === client) this.#refresh(client);
    });
    client.onclose = () => this.#lose(client);
    const transport = this.#makeTransport();
    try {
      await withTimeout(client.connect(transport), this.name);
      this.#tools = await withTimeout(this.#listTools(client), this.name);
    } catch (err) {
      await client.close().catch(() => undefined);
      throw err;
    }
    if (transport instanceof StdioGroupTransport) this.#pid = transport.pid;
    this.#upSince = this.#now();
    return client;
  }

  #makeTransport(): Transport {
    const config = this.#config;
    if ("command" in config)
      return new StdioGroupTransport({
        command: config.command,
        args: config.args ?? [],
        // Beside the SDK's safe defaults (HOME, PATH, …): the host's own
        // environment (its API keys) is not passed on.
        env: config.env ?? {},
        cwd: config.cwd === undefined ? this.#basePath : resolve(this.#basePath, config.cwd),
      });
    return new StreamableHTTPClientTransport(
      new URL(config.url),
      config.headers ? { requestInit: { headers: config.headers } } : undefined,
    );
  }

  /** The connection is gone (the process exited, the HTTP session failed). */
  #lose(client: Client): void {
    if (this.#client !== client || this.#closed) return;
    this.#client = undefined;
    // A server that stayed up long enough starts over at no delay.
    if (this.#now() - this.#upSince >= MAX_RESTART_DELAY_MS) this.#restarts = 0;
    void client.close().catch(() => undefined);
    process.emitWarning(`${this.#words.lost(this.name)}; ${this.#words.stopped}.`, {
      code: "MOUNTBOX_MCP_SERVER_STOPPED",
    });
  }

  /** The live client: the current one, or a restarted one (one attempt). */
  async #live(): Promise<Client> {
    if (this.#closed)
      throw new DelegationRefusedError(`The MCP server '${this.name}' is closed with its host.`);
    if (this.#client) return this.#client;
    if (!this.#restarting) {
      const wait = this.#restartWait();
      if (wait > 0)
        throw new DelegationRefusedError(
          `${this.#words.lost(this.name)} (${this.#restarts} ${this.#words.attempt}${this.#restarts === 1 ? "" : "s"} in a row) and ${this.#words.notAgain} for ${Math.ceil(wait / 1000)} s. Try again later, or go on without it.`,
        );
      this.#restarts++;
      this.#lastAttempt = this.#now();
      this.#restarting = this.#connect()
        .then(async (client) => {
          if (this.#closed) {
            await client.close().catch(() => undefined);
            throw new Error("closed with its host");
          }
          this.#client = client;
          return client;
        })
        .finally(() => {
          this.#restarting = undefined;
        });
    }
    try {
      return await this.#restarting;
    } catch (err) {
      throw new DelegationRefusedError(
        `${this.#words.lost(this.name)} and ${this.#words.failed} (${this.describe(err, 100)}). Try again later, or go on without it.`,
      );
    }
  }

  /** Milliseconds until a restart is allowed (0: now). */
  #restartWait(): number {
    if (this.#restarts === 0) return 0;
    const delay = Math.min(
      FIRST_RESTART_DELAY_MS * 2 ** (this.#restarts - 1),
      MAX_RESTART_DELAY_MS,
    );
    return this.#lastAttempt + delay - this.#now();
  }

  /** Re-lists after `list_changed`; one listing at a time, the last change always read. */
  #refresh(client: Client): void {
    if (this.#refreshing) {
      this.#refreshAgain = true;
      return;
    }
    this.#refreshing = (async () => {
      do {
        this.#refreshAgain = false;
        try {
          const tools = await withTimeout(this.#listTools(client), this.name);
          if (this.#client === client) this.#tools = tools;
        } catch {
          // The last list stays; a call of a tool gone meanwhile gets the server's own error.
        }
      } while (this.#refreshAgain && this.#client === client);
    })().finally(() => {
      this.#refreshing = undefined;
    });
  }

  /** Every page of the listing, keeping the tools whose `SERVER__TOOL` name providers take. */
  async #listTools(client: Client): Promise<McpToolInfo[]> {
    const tools: McpToolInfo[] = [];
    const seen = new Set<string>();
    const skipped: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await client.listTools(cursor === undefined ? {} : { cursor });
      for (const t of page.tools) {
        if (!TOOL_NAME.test(`${this.name}__${t.name}`) || seen.has(t.name)) {
          skipped.push(escapeControl(t.name.slice(0, 80)));
          continue;
        }
        seen.add(t.name);
        tools.push({
          name: t.name,
          ...(t.description !== undefined ? { description: t.description } : {}),
          inputSchema: t.inputSchema as Record<string, unknown>,
        });
      }
      cursor = page.nextCursor;
    } while (cursor !== undefined && tools.length < MAX_TOOLS);
    const warning = skipped.join(", ");
    if (skipped.length > 0 && warning !== this.#warned)
      process.emitWarning(
        `The MCP server '${this.name}' lists tools that are not offered (a name '${this.name}__TOOL' must be [A-Za-z0-9_-], at most 64 characters, and appear once): ${skipped.slice(0, 10).join(", ")}${skipped.length > 10 ? ", …" : ""}`,
        { code: "MOUNTBOX_MCP_TOOL_SKIPPED" },
      );
    this.#warned = warning;
    return tools.slice(0, MAX_TOOLS);
  }
}

async function withTimeout<T>(p: Promise<T>, name: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      p,
      new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`no answer from '${name}' within ${CONNECT_TIMEOUT_MS} ms`)),
          CONNECT_TIMEOUT_MS,
        );
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** `p`, or the signal's reason as soon as it aborts (`p` goes on). */
async function abortable<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  signal.throwIfAborted();
  let onAbort: (() => void) | undefined;
  try {
    return await Promise.race([
      p,
      new Promise<never>((_, reject) => {
        onAbort = () => reject(signal.reason);
        signal.addEventListener("abort", onAbort, { once: true });
      }),
    ]);
  } finally {
    if (onAbort) signal.removeEventListener("abort", onAbort);
  }
}
