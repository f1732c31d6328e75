/**
 * A cgroup per confined command, where the host lets us make one: it caps the
 * number of processes (which RLIMIT_NPROC cannot do for the host's root user)
 * and the memory of the whole command, and lets the command be frozen for a
 * moment while another command's mounts are made (v2 `cgroup.freeze`, or a
 * v1 freezer cgroup). Best effort: without a writable pids
 * or memory controller (most unprivileged hosts, many containers) the rlimits
 * set inside the sandbox are all there is.
 */
import { randomBytes } from "node:crypto";
import { mkdirSync, readFileSync, rmdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { sweepDeadHostCgroups } from "./cgroup-sweep.js";
import type { CheckedLimits, LimitHits } from "./limits.js";

const CGROUP_ROOT = "/sys/fs/cgroup";

/** The cgroup(s) made for one command. */
export interface CommandCgroup {
  /** `cgroup.procs` files the launcher writes its own pid into before starting bubblewrap. */
  procsFiles: string[];
  /** Which limits the kernel reported as hit. */
  readHits(): LimitHits;
  /** True if it caps the number of processes (a pids controller was set). */
  boundsProcesses: boolean;
  /** Removes the cgroups (once every process in them is gone). */
  remove(): Promise<void>;
  /**
   * Freezes (true) or thaws (false) every process of the command (cgroup v2
   * `cgroup.freeze`); resolves once frozen (or after a short wait). False
   * if this cgroup cannot be frozen (v1).
   */
  freeze(on: boolean): Promise<boolean>;
  /**
   * The file and value that thaw it (for a guard process that outlives the
   * host, see `setup-gate.ts`); undefined if it cannot be frozen.
   */
  thawFile: [file: string, value: string] | undefined;
  /**
   * Kills every process in it, frozen ones too: v2 `cgroup.kill`; v1 a
   * SIGKILL to each (a frozen cgroup cannot fork meanwhile) and then a thaw,
   * without which a v1-frozen process never dies. Never throws.
   */
  kill(): void;
}

/** One limit-carrying cgroup folder and how to read its counters. */
interface Made {
  dir: string;
  hits: () => Partial<LimitHits>;
}

/**
 * Makes the cgroups for one command, or returns `undefined` when none can be
 * made here. Never throws.
 */
export function createCommandCgroup(l: CheckedLimits): CommandCgroup | undefined {
  const own = readOwnCgroups();
  if (own === undefined) return undefined;
  const made: Made[] = [];
  let freezerV1: string | undefined;
  let boundsProcesses = false;
  const name = `mountbox-${process.pid}-${randomBytes(6).toString("hex")}`;
  const v2 = own.get("");
  if (v2 !== undefined && own.size === 1) {
    const files: [string, string][] = [
      ["pids.max", String(l.processes)],
      ["memory.max", String(l.memoryMb * 1024 * 1024)],
    ];
    // Our own cgroup first; if it has no controllers to give (a cgroup with
    // processes cannot enable them for children), the hierarchy's root.
    const child =
      makeChild(join(CGROUP_ROOT, v2), name, files) ??
      (v2 === "/" ? undefined : makeChild(CGROUP_ROOT, name, files));
    const dir = child?.dir;
    // Only a written pids.max bounds them: a folder may carry memory.max alone
    // (found by an adversarial review: callers then skipped RLIMIT_NPROC).
    boundsProcesses = child?.wrote.has("pids.max") === true;
    if (dir !== undefined)
      made.push({
        dir,
        hits: () => ({
          processes: counter(join(dir, "pids.events"), "max") > 0,
          // Only kills: "max" also counts reclaim at the limit (heavy file I/O).
          memory: counter(join(dir, "memory.events"), "oom_kill") > 0,
        }),
      });
  } else {
    const pids = own.get("pids");
    if (pids !== undefined) {
      const dir = makeChild(join(CGROUP_ROOT, "pids", pids), name, [
        ["pids.max", String(l.processes)],
      ])?.dir;
      if (dir !== undefined) boundsProcesses = true;
      if (dir !== undefined)
        made.push({
          dir,
          hits: () => ({ processes: counter(join(dir, "pids.events"), "max") > 0 }),
        });
    }
    const memory = own.get("memory");
    if (memory !== undefined) {
      const dir = makeChild(join(CGROUP_ROOT, "memory", memory), name, [
        ["memory.limit_in_bytes", String(l.memoryMb * 1024 * 1024)],
      ])?.dir;
      if (dir !== undefined)
        made.push({
          dir,
          // Only kills: failcnt also counts reclaim at the limit (heavy file I/O).
          hits: () => ({ memory: counter(join(dir, "memory.oom_control"), "oom_kill") > 0 }),
        });
    }
    // No limit, only a way to pause the command for a moment (see launch.ts).
    const freezer = own.get("freezer");
    if (made.length > 0 && freezer !== undefined) {
      const dir = join(CGROUP_ROOT, "freezer", freezer, name);
      sweepDeadHostCgroups(join(CGROUP_ROOT, "freezer", freezer));
      try {
        mkdirSync(dir);
        made.push({ dir, hits: () => ({}) });
        freezerV1 = dir;
      } catch {
        // no freezer here
      }
    }
  }
  if (made.length === 0) return undefined;
  const unified = v2 !== undefined && own.size === 1 ? made[0]?.dir : undefined;
  const thawFile: [string, string] | undefined =
    unified !== undefined
      ? [join(unified, "cgroup.freeze"), "0"]
      : freezerV1 !== undefined
        ? [join(freezerV1, "freezer.state"), "THAWED"]
        : undefined;
  return {
    thawFile,
    boundsProcesses,
    kill: () =>
      killAll(
        made.map((m) => m.dir),
        thawFile,
      ),
    freeze: (on) =>
      unified !== undefined ? freezeCgroup(unified, on) : freezeCgroupV1(freezerV1, on),
    procsFiles: made.map((m) => join(m.dir, "cgroup.procs")),
    readHits: () => {
      const out: LimitHits = { memory: false, processes: false };
      for (const m of made) {
        const h = m.hits();
        out.memory ||= h.memory === true;
        out.processes ||= h.processes === true;
      }
      return out;
    },
    remove: () => removeAll(made.map((m) => m.dir)),
  };
}

async function freezeCgroup(dir: string | undefined, on: boolean): Promise<boolean> {
  if (dir === undefined) return false;
  try {
    writeFileSync(join(dir, "cgroup.freeze"), on ? "1" : "0");
  } catch {
    return false;
  }
  if (!on) return true;
  // Usually frozen at once; a task in an uninterruptible wait takes longer.
  for (let i = 0; i < 100; i++) {
    if (counter(join(dir, "cgroup.events"), "frozen") === 1) return true;
    await new Promise((r) => setTimeout(r, 1));
  }
  return false;
}

async function freezeCgroupV1(dir: string | undefined, on: boolean): Promise<boolean> {
  if (dir === undefined) return false;
  const state = join(dir, "freezer.state");
  try {
    writeFileSync(state, on ? "FROZEN" : "THAWED");
  } catch {
    return false;
  }
  if (!on) return true;
  for (let i = 0; i < 100; i++) {
    try {
      if (readFileSync(state, "utf8").trim() === "FROZEN") return true;
    } catch {
      return false;
    }
    await new Promise((r) => setTimeout(r, 1));
  }
  return false;
}

/**
 * This process's cgroup per controller (`""` for the unified hierarchy), or
 * `undefined` if /proc/self/cgroup cannot be read.
 */
function readOwnCgroups(): Map<string, string> | undefined {
  let text: string;
  try {
    text = readFileSync("/proc/self/cgroup", "utf8");
  } catch {
    return undefined;
  }
  const out = new Map<string, string>();
  for (const line of text.split("\n")) {
    const m = /^\d+:([^:]*):(\/.*)$/.exec(line);
    if (m === null) continue;
    for (const c of m[1]!.split(",")) out.set(c, m[2]!);
  }
  return out;
}

/**
 * Makes `parent/name` and writes its limit files (each one the controller
 * offers): the folder and the files written, or undefined, and nothing left
 * behind, if none could be written.
 */
function makeChild(
  parent: string,
  name: string,
  files: [string, string][],
): { dir: string; wrote: Set<string> } | undefined {
  const dir = join(parent, name);
  sweepDeadHostCgroups(parent);
  try {
    mkdirSync(dir);
  } catch {
    return undefined;
  }
  const wrote = new Set<string>();
  for (const [f, v] of files) {
    try {
      writeFileSync(join(dir, f), v);
      wrote.add(f);
    } catch {
      // this controller is not available here
    }
  }
  if (wrote.size > 0) return { dir, wrote };
  try {
    rmdirSync(dir);
  } catch {
    // nothing more to do
  }
  return undefined;
}

function killAll(dirs: string[], thaw: [string, string] | undefined): void {
  for (const dir of dirs) {
    try {
      writeFileSync(join(dir, "cgroup.kill"), "1");
      continue;
    } catch {
      // cgroup v1, or a kernel before 5.14: one by one
    }
    let pids: string[] = [];
    try {
      pids = readFileSync(join(dir, "cgroup.procs"), "utf8").split("\n");
    } catch {
      // already gone
    }
    for (const pid of pids) {
      const n = Number(pid);
      if (!Number.isInteger(n) || n <= 0) continue;
      try {
        process.kill(n, "SIGKILL");
      } catch {
        // already gone
      }
    }
  }
  if (thaw !== undefined) {
    try {
      writeFileSync(thaw[0], thaw[1]);
    } catch {
      // already gone
    }
  }
}

/** A `key value` counter from a cgroup events file; 0 if absent. */
function counter(file: string, key: string): number {
  try {
    const line = readFileSync(file, "utf8")
      .split("\n")
      .find((l) => l.startsWith(`${key} `));
    return line === undefined ? 0 : Number(line.slice(key.length + 1)) || 0;
  } catch {
    return 0;
  }
}

/**
 * Removes each folder, retrying briefly while the kernel reaps the last
 * processes (cgroup v2 `cgroup.kill` first makes sure none is left).
 */
async function removeAll(dirs: string[]): Promise<void> {
  for (const dir of dirs) {
    try {
      writeFileSync(join(dir, "cgroup.kill"), "1");
    } catch {
      // cgroup v1, or a kernel before 5.14: the pid namespace is gone anyway
    }
    for (let attempt = 0; attempt < 500; attempt++) {
      try {
        rmdirSync(dir);
        break;
      } catch (err) {
        // Only "still in use" is worth waiting for.
        if ((err as NodeJS.ErrnoException).code !== "EBUSY") break;
        // Polled briefly: the last processes are usually reaped within a few ms.
        await new Promise((r) => setTimeout(r, 2));
      }
    }
  }
}
