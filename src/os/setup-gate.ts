/**
 * Commands of this process running at the same time (issue 19, finding 9).
 *
 * While bubblewrap makes a command's mount points, the other commands of
 * this process that can write where those mounts go are frozen: they cannot
 * swap a folder on the way in that window. Done naively (each setup freezes
 * every overlapping command, setups included) two setups freeze each other
 * and neither ever reaches the point where it thaws the other. So:
 *
 * - one setup at a time per process (a short lock, from just before the
 *   freeze until bubblewrap reports its mounts made, or the command ends);
 *   a command waiting for it has not started, and its wait counts against
 *   its own timeout and abort signal;
 * - a setup freezes only commands that have started (past their own setup):
 *   never one that is setting up, so the setup that holds the lock depends
 *   on no frozen process;
 * - every freeze has a guard: a tiny process, started before the freeze,
 *   that thaws the frozen cgroups when its pipe from the host closes. The
 *   host closes it when the setup ends — or the kernel does, when the host
 *   dies. On cgroup v1 a frozen process cannot even die of SIGKILL, so
 *   without the guard a host killed mid-setup left the others frozen for
 *   ever (with their SIGKILL from `--die-with-parent` pending: thawed, they
 *   die).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { IoError } from "../errors/index.js";
import { isWithin } from "../sandbox/virtual-path.js";
import type { CommandCgroup } from "./cgroup.js";

/** A command of this process, from before its setup until it ends. */
export interface Running {
  /** Host folders it binds. */
  binds: string[];
  /** Host folders it may write (its writable folder binds). */
  writable: string[];
  cgroup: CommandCgroup | undefined;
  /** True once it is past the lock (it may be running the command). */
  started: boolean;
}

/** The lock held by one setup; see {@link enterSetup}. */
export interface Setup {
  /** How many commands this setup froze (for tests). */
  frozen: number;
  /** Thaws what it froze and lets the next setup in; once only, never throws. */
  release(): Promise<void>;
}

const running = new Set<Running>();

/** The setup lock: held or not, and who waits for it (in order). */
let held = false;
const waiters: (() => void)[] = [];

/** Registers a command of this process (before {@link enterSetup}). */
export function addRunning(me: Running): void {
  running.add(me);
}

/** Forgets a command that ended. */
export function removeRunning(me: Running): void {
  running.delete(me);
}

/**
 * Waits for the setup lock (at most `waitMs`, or until `signal` aborts),
 * then freezes the started commands whose writable folders overlap one of
 * `me`'s binds, under a guard. `undefined` if the wait ran out or was aborted.
 * @throws IoError if the guard cannot be started (nothing is frozen then)
 */
export async function enterSetup(
  me: Running,
  waitMs: number,
  signal: AbortSignal | undefined,
): Promise<Setup | undefined> {
  if (!(await acquire(waitMs, signal))) return undefined;
  me.started = true;
  const others = [...running].filter(
    (o) =>
      o !== me &&
      o.started &&
      o.cgroup?.thawFile !== undefined &&
      o.writable.some((w) => me.binds.some((h) => isWithin(h, w) || isWithin(w, h))),
  );
  let guard: ChildProcess | undefined;
  if (others.length > 0) {
    try {
      guard = await startGuard(others.map((o) => o.cgroup?.thawFile as [string, string]));
    } catch (err) {
      unlock();
      throw err;
    }
    await Promise.all(others.map((o) => o.cgroup?.freeze(true)));
  }
  let released: Promise<void> | undefined;
  return {
    frozen: others.length,
    release: () => {
      released ??= (async () => {
        // Thawed here at once; the guard thaws again (harmless) and is
        // waited for, so that its late write cannot thaw a later freeze.
        await Promise.all(others.map((o) => o.cgroup?.freeze(false)));
        if (guard !== undefined) await stopGuard(guard);
        unlock();
      })();
      return released;
    },
  };
}

function acquire(waitMs: number, signal: AbortSignal | undefined): Promise<boolean> {
  if (!held) {
    held = true;
    return Promise.resolve(true);
  }
  return new Promise((resolve) => {
    const stop = (): void => {
      const i = waiters.indexOf(go);
      if (i >= 0) waiters.splice(i, 1);
      clearTimeout(timer);
      signal?.removeEventListener("abort", stop);
      resolve(false);
    };
    const go = (): void => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", stop);
      resolve(true);
    };
    const timer = setTimeout(stop, Math.max(0, waitMs));
    signal?.addEventListener("abort", stop, { once: true });
    waiters.push(go);
  });
}

function unlock(): void {
  const next = waiters.shift();
  // Handed over directly: the lock stays held.
  if (next !== undefined) next();
  else held = false;
}

/**
 * Waits until the guard reads EOF on its stdin, then writes each thaw value
 * (`THAWED`, or `0` for v2 `cgroup.freeze`). Signals a terminal or a
 * process group would send are ignored: only the pipe's end thaws.
 */
const GUARD = [
  "trap '' HUP INT TERM QUIT PIPE",
  "read -r _",
  'while [ "$#" -ge 2 ]; do echo "$2" 2>/dev/null >"$1"; shift 2; done',
].join("\n");

function startGuard(files: [string, string][]): Promise<ChildProcess> {
  return new Promise((resolve, reject) => {
    const child = spawn("/bin/bash", ["-p", "-c", GUARD, "mountbox-thaw", ...files.flat()], {
      cwd: "/",
      env: {},
      // Its own session: a Ctrl-C or a kill of the host's group must not
      // take it away before it thaws.
      detached: true,
      stdio: ["pipe", "ignore", "ignore"],
    });
    child.stdin?.on("error", () => {});
    child.once("spawn", () => resolve(child));
    child.once("error", (e: NodeJS.ErrnoException) =>
      reject(
        new IoError(
          `Cannot run the command: a helper process could not be started (${e.code ?? "error"}). The command was not run. Try again.`,
        ),
      ),
    );
  });
}

function stopGuard(guard: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (guard.exitCode !== null || guard.signalCode !== null) {
      resolve();
      return;
    }
    guard.once("exit", () => resolve());
    guard.stdin?.end();
  });
}
