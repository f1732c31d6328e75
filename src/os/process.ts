/**
 * Starting a process for `runCommand` and collecting what it did: output up
 * to a cap, exit status, timeout and cancellation (the whole process group
 * is killed).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { fstatSync } from "node:fs";
import { constants as osConstants } from "node:os";
import type { Duplex, Readable, Writable } from "node:stream";
import { IoError } from "../errors/index.js";

/** What a process did, before notes are added. */
export interface RawResult {
  exitCode: number;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  aborted: boolean;
  truncated: boolean;
}

/** How to start a process. */
export interface ProcessSpec {
  file: string;
  args: string[];
  cwd: string;
  env: Record<string, string>;
  /**
   * Descriptors 3, 4, …: a Buffer is written to a pipe at that number and
   * the pipe closed; a number is a descriptor of this process passed as is;
   * a {@link Channel} gets a socket to talk both ways.
   */
  extra?: (Buffer | number | Channel)[];
  /**
   * True: the process's output is copied, byte for byte, to this process's
   * own stdout and stderr as it comes (nothing captured). The process gets
   * pipes, never this process's descriptors: reopening `/proc/self/fd/1`
   * must not reach the caller's file or terminal. When this process's
   * stdout and stderr are the same open file (`2>&1`), both streams go
   * through one pipe so that their order is kept.
   */
  passThrough?: boolean;
  /**
   * Receives the process's output as it comes, instead of capturing it
   * (the result's `stdout` and `stderr` are then empty).
   */
  onOutput?: (stream: "stdout" | "stderr", chunk: Buffer) => void;
  /** Kill the group as soon as the first process exits (unconfined runs). */
  killGroupOnExit?: boolean;
  timeoutMs: number;
  maxOutputBytes: number;
  signal?: AbortSignal;
  /** Called, besides killing the group, on timeout, abort or a failed check (kills what the group does not hold). */
  onKill?: () => void;
}

/**
 * Spawns in its own process group, captures output up to the cap (the rest
 * is drained and dropped so the command never blocks on a full pipe), and
 * kills the whole group on timeout or abort. Under bubblewrap, killing the
 * outer process makes the namespace's init die (`--die-with-parent`), and the
 * kernel then kills everything left in the pid namespace.
 * @param onSpawned called once the process exists (its copies of passed
 *   descriptors are made: the caller may close its own), with its handle
 */
export function runProcess(
  spec: ProcessSpec,
  onSpawned?: (child: ChildProcess) => void,
): Promise<RawResult> {
  return new Promise((resolve, reject) => {
    const extra = spec.extra ?? [];
    const passThrough = spec.passThrough === true;
    // One pipe for both streams when ours are the same open file: the
    // process's stderr is made a copy of its stdout before it starts.
    const merge = passThrough && sameOpenFile(1, 2);
    const child = spawn(
      merge ? "/bin/bash" : spec.file,
      merge
        ? ["-p", "-c", 'exec 2>&1; exec "$@"', "mountbox-merge", spec.file, ...spec.args]
        : spec.args,
      {
        cwd: spec.cwd,
        env: spec.env,
        detached: true,
        stdio: [
          "ignore",
          "pipe",
          "pipe",
          ...extra.map((e) => (typeof e === "number" ? e : "pipe")),
        ],
      },
    );
    onSpawned?.(child);
    const killGroup = (): void => {
      spec.onKill?.();
      if (child.pid === undefined) return;
      try {
        process.kill(-child.pid, "SIGKILL");
      } catch {
        // already gone
      }
    };
    extra.forEach((e, i) => {
      if (typeof e === "number") return;
      const pipe = child.stdio[3 + i] as Duplex | null;
      // The reader may be gone (bubblewrap failed early): that is reported
      // by its exit status, not by a write error.
      pipe?.on("error", () => {});
      if (Buffer.isBuffer(e)) (pipe as Writable | null)?.end(e);
      else if (pipe !== null) e.attach(pipe, killGroup);
    });
    const out = new Capture(spec.maxOutputBytes);
    const err = new Capture(spec.maxOutputBytes);
    const stdout = child.stdout as Readable | null;
    const stderr = child.stderr as Readable | null;
    const onOutput = spec.onOutput;
    if (onOutput) {
      stdout?.on("data", (b: Buffer) => onOutput("stdout", b));
      stderr?.on("data", (b: Buffer) => onOutput("stderr", b));
    } else if (passThrough) {
      stdout?.on("data", (b: Buffer) => process.stdout.write(b));
      stderr?.on("data", (b: Buffer) => process.stderr.write(b));
    } else {
      stdout?.on("data", (b: Buffer) => out.push(b));
      stderr?.on("data", (b: Buffer) => err.push(b));
    }
    let timedOut = false;
    let aborted = false;
    let exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
    let settled = false;
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup();
    }, spec.timeoutMs);
    // The process keeps this one alive while it runs; the timer alone must not.
    timer.unref();
    const onAbort = (): void => {
      aborted = true;
      killGroup();
    };
    spec.signal?.addEventListener("abort", onAbort, { once: true });
    // Aborted before the process started (while a command was being set
    // up): no 'abort' event is coming, so stop it now (found by a test: the
    // command otherwise ran to its end).
    if (spec.signal?.aborted === true) onAbort();
    let drainTimer: NodeJS.Timeout | undefined;
    const done = (): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearTimeout(drainTimer);
      spec.signal?.removeEventListener("abort", onAbort);
      const code = exit?.code ?? null;
      const sig = exit?.signal ?? null;
      const exitCode =
        code !== null ? code : 128 + (sig !== null ? (osConstants.signals[sig] ?? 9) : 9);
      resolve({
        exitCode,
        stdout: out.text(),
        stderr: err.text(),
        timedOut,
        aborted,
        truncated: out.truncated || err.truncated,
      });
    };
    child.once("error", (e: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      if (settled) return;
      settled = true;
      reject(
        new IoError(
          `Cannot run the command: the shell could not be started (${e.code ?? "error"}).`,
        ),
      );
    });
    child.once("exit", (code, signal) => {
      exit = { code, signal };
      // Unconfined, leftover background processes must not keep the pipes
      // open forever: kill the group. (Confined, the pid namespace is gone.)
      if (spec.killGroupOnExit === true) killGroup();
      drainTimer = setTimeout(() => {
        stdout?.destroy();
        stderr?.destroy();
        done();
      }, 500);
    });
    child.once("close", done);
  });
}

/** A descriptor of the process that the host talks to both ways (see `extra`). */
export interface Channel {
  /** Called once the process exists, with this side of the socket and a way to kill the process group. */
  attach(socket: Duplex, kill: () => void): void;
}

/** True if descriptors `a` and `b` of this process are the same file (device and inode). */
function sameOpenFile(a: number, b: number): boolean {
  try {
    const x = fstatSync(a);
    const y = fstatSync(b);
    return x.dev === y.dev && x.ino === y.ino;
  } catch {
    return false;
  }
}

/** Collects a stream's bytes up to a cap. */
class Capture {
  readonly #cap: number;
  readonly #chunks: Buffer[] = [];
  #size = 0;
  truncated = false;

  constructor(cap: number) {
    this.#cap = cap;
  }

  push(b: Buffer): void {
    const room = this.#cap - this.#size;
    if (room <= 0) {
      this.truncated = true;
      return;
    }
    if (b.length > room) {
      this.truncated = true;
      this.#chunks.push(b.subarray(0, room));
      this.#size += room;
      return;
    }
    this.#chunks.push(b);
    this.#size += b.length;
  }

  text(): string {
    const s = Buffer.concat(this.#chunks).toString("utf8");
    // A cut in the middle of a multi-byte character leaves one U+FFFD: drop it.
    return this.truncated && s.endsWith("\uFFFD") ? s.slice(0, -1) : s;
  }
}
