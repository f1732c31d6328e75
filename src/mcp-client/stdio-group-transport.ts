/**
 * An MCP stdio client transport whose server runs in its own process group
 * (DESIGN §10, `host.close()` leaves nothing behind): the SDK's
 * `StdioClientTransport` stops only the process it started, so a server
 * started through `npx`, `sh -c` or one that starts helpers of its own left
 * them running — and a helper holding the server's stdout kept the
 * connection looking alive after the server died. Here the server is a
 * group leader (`detached`), its death is its own exit (not the end of its
 * pipes), and stopping it stops the whole group: stdin closed, then
 * SIGTERM, then SIGKILL.
 *
 * A process that leaves the group (`setsid`, a daemon) is not stopped.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { getDefaultEnvironment } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ReadBuffer, serializeMessage } from "@modelcontextprotocol/sdk/shared/stdio.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";

/** How the server is started. */
export interface StdioGroupParams {
  command: string;
  args: string[];
  /** Added to the SDK's safe defaults (HOME, LOGNAME, PATH, SHELL, TERM, USER). */
  env: Record<string, string>;
  cwd: string;
}

/** How long the server gets to exit after its stdin is closed, then after SIGTERM. */
const GRACE_MS = 2000;
/** How often a stopping group is looked at. */
const POLL_MS = 25;

/** A stdio transport that owns its server's whole process group. */
export class StdioGroupTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  readonly #params: StdioGroupParams;
  readonly #buffer = new ReadBuffer();
  #child: ChildProcess | undefined;
  #exited: Promise<void> | undefined;
  #stdoutClosed: Promise<void> | undefined;
  #closed = false;
  /** Set once stopped: close() waits for the same stop. */
  #stopping: Promise<void> | undefined;

  constructor(params: StdioGroupParams) {
    this.#params = params;
  }

  /** The server's pid (its process group id), once started. */
  get pid(): number | undefined {
    return this.#child?.pid;
  }

  /** Starts the server; resolves once it runs, rejects if it cannot be started. */
  start(): Promise<void> {
    if (this.#child) throw new Error("already started");
    return new Promise((resolve, reject) => {
      const child = spawn(this.#params.command, this.#params.args, {
        env: { ...getDefaultEnvironment(), ...this.#params.env },
        cwd: this.#params.cwd,
        stdio: ["pipe", "pipe", "ignore"],
        // Its own process group (and session): the group can be stopped whole.
        detached: process.platform !== "win32",
        shell: false,
        windowsHide: true,
      });
      this.#child = child;
      this.#exited = new Promise((res) => child.once("exit", () => res()));
      this.#stdoutClosed = new Promise((res) => child.stdout?.once("close", () => res()));
      // Not `once`: a later 'error' (a failed kill) without a listener would throw.
      child.on("error", (err) => {
        reject(err);
        this.onerror?.(err);
      });
      child.once("spawn", () => resolve());
      // The server's own exit ends the connection, even while a process it
      // started still holds its stdout; the rest of its group is stopped.
      child.once("exit", () => {
        void this.#stop().then(() => this.#finish());
      });
      child.stdin?.on("error", (err) => this.onerror?.(err));
      child.stdout?.on("error", (err) => this.onerror?.(err));
      child.stdout?.on("data", (chunk: Buffer) => {
        try {
          this.#buffer.append(chunk);
        } catch (err) {
          // Over the SDK's 10 MiB for one message: the server is stopped.
          this.onerror?.(err as Error);
          void this.close();
          return;
        }
        this.#readMessages();
      });
    });
  }

  #readMessages(): void {
    for (;;) {
      let message: JSONRPCMessage | null;
      try {
        message = this.#buffer.readMessage();
      } catch (err) {
        this.onerror?.(err as Error);
        continue;
      }
      if (message === null) return;
      this.onmessage?.(message);
    }
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve, reject) => {
      const stdin = this.#child?.stdin;
      if (this.#closed || !stdin || stdin.destroyed) {
        reject(new Error("Not connected"));
        return;
      }
      if (stdin.write(serializeMessage(message))) resolve();
      else stdin.once("drain", resolve);
    });
  }

  /** Stops the server and everything in its group; resolves once they are gone. */
  async close(): Promise<void> {
    await this.#stop();
    this.#finish();
  }

  #finish(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#buffer.clear();
    this.#child?.stdout?.destroy();
    this.onclose?.();
  }

  #stop(): Promise<void> {
    this.#stopping ??= this.#stopGroup();
    return this.#stopping;
  }

  async #stopGroup(): Promise<void> {
    const child = this.#child;
    const pid = child?.pid;
    if (!child || pid === undefined) return;
    try {
      child.stdin?.end();
    } catch {}
    await waitUntil(this.#exited!, GRACE_MS);
    if (process.platform === "win32") {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    } else if (signalGroup(pid, "SIGTERM") && !(await waitForGroupGone(pid, GRACE_MS))) {
      // The leader may be gone while processes it started live on in its
      // group; the group id stays taken (not reused) while any of them lives.
      signalGroup(pid, "SIGKILL");
      await waitForGroupGone(pid, GRACE_MS);
    }
    // What the server wrote before it exited is still read (a last answer).
    await waitUntil(this.#stdoutClosed!, GRACE_MS);
  }
}

/** Sends `signal` to group `pgid`; false when the group no longer exists. */
function signalGroup(pgid: number, signal: NodeJS.Signals | 0): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch {
    // ESRCH: no such group. EPERM: only members this host may not signal
    // are left (they changed user): nothing more it can do.
    return false;
  }
}

async function waitForGroupGone(pgid: number, ms: number): Promise<boolean> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (!signalGroup(pgid, 0)) return true;
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
  return !signalGroup(pgid, 0);
}

async function waitUntil(p: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([p, new Promise<void>((r) => (timer = setTimeout(r, ms)))]);
  clearTimeout(timer);
}
