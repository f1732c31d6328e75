/**
 * Starting a process for `runCommand` and collecting what it did: output up
 * to a cap, exit status, timeout and cancellation (the whole process group
 * is killed).
 */
import { spawn } from "node:child_process";
import { constants as osConstants } from "node:os";
import type { Readable, Writable } from "node:stream";
import { IoError } from "../errors.js";

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
   * the pipe closed; a number is a descriptor of this process passed as is.
   */
  extra?: (Buffer | number)[];
  /** True: the process writes to this process's own stdout and stderr (nothing captured). */
  passThrough?: boolean;
  /** Kill the group as soon as the first process exits (unconfined runs). */
  killGroupOnExit?: boolean;
  timeoutMs: number;
  maxOutputBytes: number;
  signal?: AbortSignal;
}

/**
 * Spawns in its own process group, captures output up to the cap (the rest
 * is drained and dropped so the command never blocks on a full pipe), and
 * kills the whole group on timeout or abort. Under bubblewrap, killing the
 * outer process makes the namespace's init die (`--die-with-parent`), and the
 * kernel then kills everything left in the pid namespace.
 * @param onSpawned called once the process exists (its copies of passed
 *   descriptors are made: the caller may close its own)
 */
export function runProcess(spec: ProcessSpec, onSpawned?: () => void): Promise<RawResult> {
  return new Promise((resolve, reject) => {
    const extra = spec.extra ?? [];
    const child = spawn(spec.file, spec.args, {
      cwd: spec.cwd,
      env: spec.env,
      detached: true,
      stdio: [
        "ignore",
        spec.passThrough === true ? "inherit" : "pipe",
        spec.passThrough === true ? "inherit" : "pipe",
        ...extra.map((e) => (typeof e === "number" ? e : "pipe")),
      ],
    });
    onSpawned?.();
    extra.forEach((e, i) => {
      if (typeof e === "number") return;
      const pipe = child.stdio[3 + i] as Writable | null;
      // The reader may be gone (bubblewrap failed early): that is reported
      // by its exit status, not by a write error.
      pipe?.on("error", () => {});
      pipe?.end(e);
    });
    const out = new Capture(spec.maxOutputBytes);
    const err = new Capture(spec.maxOutputBytes);
    const stdout = child.stdout as Readable | null;
    const stderr = child.stderr as Readable | null;
    stdout?.on("data", (b: Buffer) => out.push(b));
    stderr?.on("data", (b: Buffer) => err.push(b));
    let timedOut = false;
    let aborted = false;
    let exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
    let settled = false;
    const killGroup = (): void => {
      if (child.pid === undefined) return;
      try {
        process.kill(-child.pid, "SIGKILL");
      } catch {
        // already gone
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup();
    }, spec.timeoutMs);
    const onAbort = (): void => {
      aborted = true;
      killGroup();
    };
    spec.signal?.addEventListener("abort", onAbort, { once: true });
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
