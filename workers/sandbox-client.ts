/**
 * `ctx.sandbox` inside an agent thread: a typed client for the host's port
 * server. Hand-written rather than a Comlink proxy: one listener, one map of
 * pending calls, errors rebuilt with their mountbox class, and no extra
 * package for the thread to load.
 */
import { SandboxError } from "../src/errors/index.js";
import type { PortLike } from "../src/port/frames.js";
import {
  ACK_OP,
  type FileEdit,
  type FileStat,
  type GrepMatch,
  type GrepOptions,
  type GrepResult,
  type PortReply,
  type SandboxDescription,
} from "../src/port/protocol.js";

export type { FileEdit, FileStat, GrepMatch, GrepOptions, GrepResult, SandboxDescription };

/**
 * The sandbox as a worker sees it: virtual paths only, every call a round
 * trip to the host. There is no `resolve` and no way to learn a host path.
 */
export interface WorkerSandbox {
  readFile(path: string): Promise<string>;
  readBytes(path: string): Promise<Uint8Array>;
  writeFile(path: string, content: string | Uint8Array): Promise<void>;
  editFile(path: string, edits: FileEdit[], opts?: { dryRun?: boolean }): Promise<{ diff: string }>;
  listFiles(path?: string, pattern?: string): Promise<string[]>;
  stat(path: string): Promise<FileStat>;
  exists(path: string): Promise<boolean>;
  mkdir(path: string): Promise<void>;
  remove(path: string, opts?: { recursive?: boolean }): Promise<void>;
  move(from: string, to: string, opts?: { overwrite?: boolean }): Promise<void>;
  canRead(path: string): Promise<boolean>;
  canWrite(path: string): Promise<boolean>;
  readableRoots(): Promise<string[]>;
  writableRoots(): Promise<string[]>;
  describe(): Promise<SandboxDescription>;
  /**
   * Searches the readable files under `opts.path` for a regular expression,
   * line by line. The host runs it in its pool of search threads with this
   * agent's policy, so one request replaces a listing and a read per file.
   */
  grep(opts: GrepOptions): Promise<GrepResult>;
}

/** A client bound to one port. */
export interface SandboxClient {
  readonly sandbox: WorkerSandbox;
  /** Sends one request; resolves with the value or rejects with the rebuilt error. */
  call(op: string, args: unknown[]): Promise<unknown>;
  /** Stops listening; calls still pending reject. */
  close(): void;
}

/** Creates the `ctx.sandbox` client for the sandbox `port`. */
export function createSandboxClient(port: PortLike): SandboxClient {
  const pending = new Map<number, { resolve(v: unknown): void; reject(e: unknown): void }>();
  let nextId = 0;
  let closed = false;

  port.on("message", (data: unknown) => {
    const reply = data as PortReply;
    if (reply.id === null) return; // a refusal of something this client never sent
    const p = pending.get(reply.id);
    if (!p) return;
    // The host counts a big reply against this agent's budget until told it arrived.
    if (reply.ok && reply.ack === true) port.postMessage({ id: reply.id, op: ACK_OP, args: [] });
    pending.delete(reply.id);
    if (reply.ok) p.resolve(reply.value);
    else p.reject(rebuildError(reply.error));
  });
  // Let the thread exit when nothing is pending: the port only keeps it
  // alive while a call waits for its reply.
  port.unref();

  const call = (op: string, args: unknown[]): Promise<unknown> => {
    if (closed) return Promise.reject(new Error("The sandbox connection is closed."));
    const id = nextId++;
    return new Promise((resolve, reject) => {
      if (pending.size === 0) port.ref();
      pending.set(id, {
        resolve(v) {
          if (pending.size === 0) port.unref();
          resolve(v);
        },
        reject(e) {
          if (pending.size === 0) port.unref();
          reject(e);
        },
      });
      port.postMessage({ id, op, args });
    });
  };

  // Arguments are passed through as given: the host validates them, and a
  // local check would only duplicate it (and drift from it).
  const sandbox: WorkerSandbox = {
    readFile: (path) => call("readFile", [path]) as Promise<string>,
    readBytes: (path) => call("readBytes", [path]) as Promise<Uint8Array>,
    writeFile: (path, content) => call("writeFile", [path, content]) as Promise<void>,
    editFile: (path, edits, opts) =>
      call("editFile", opts === undefined ? [path, edits] : [path, edits, opts]) as Promise<{
        diff: string;
      }>,
    listFiles: (path, pattern) =>
      call("listFiles", trimUndefined([path, pattern])) as Promise<string[]>,
    stat: (path) => call("stat", [path]) as Promise<FileStat>,
    exists: (path) => call("exists", [path]) as Promise<boolean>,
    mkdir: (path) => call("mkdir", [path]) as Promise<void>,
    remove: (path, opts) =>
      call("remove", opts === undefined ? [path] : [path, opts]) as Promise<void>,
    move: (from, to, opts) =>
      call("move", opts === undefined ? [from, to] : [from, to, opts]) as Promise<void>,
    canRead: (path) => call("canRead", [path]) as Promise<boolean>,
    canWrite: (path) => call("canWrite", [path]) as Promise<boolean>,
    readableRoots: () => call("readableRoots", []) as Promise<string[]>,
    writableRoots: () => call("writableRoots", []) as Promise<string[]>,
    describe: () => call("describe", []) as Promise<SandboxDescription>,
    grep: (opts) => call("grep", [opts]) as Promise<GrepResult>,
  };
  Object.freeze(sandbox);

  return {
    sandbox,
    call,
    close() {
      if (closed) return;
      closed = true;
      for (const p of pending.values()) p.reject(new Error("The sandbox connection is closed."));
      pending.clear();
      port.close();
    },
  };
}

function trimUndefined(args: unknown[]): unknown[] {
  let n = args.length;
  while (n > 0 && args[n - 1] === undefined) n--;
  return args.slice(0, n);
}

/** Rebuilds a reply's error with its class (`instanceof PathNotWritableError` holds). */
function rebuildError(error: unknown): Error {
  return SandboxError.fromJSON(error);
}
