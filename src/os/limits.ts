/**
 * Resource limits of a confined command: defaults, validation, the rlimits
 * set inside the sandbox, and the notes that tell a model which limit a
 * command ran into.
 */

/** Kernel-enforced limits of one command. */
export interface CommandLimits {
  /**
   * Memory of each process, in MiB (RLIMIT_DATA: heap and private mappings),
   * and of all of them together where a memory cgroup can be made. Default 2048.
   */
  memoryMb?: number;
  /**
   * Processes and threads the command may have at once. Enforced by a pids
   * cgroup where one can be made, else by RLIMIT_NPROC (which the kernel does
   * not apply to the host's root user). Default 256.
   */
  processes?: number;
  /** Size of each private scratch file system (`/tmp`, `/dev/shm`), in MiB. Default 512. */
  tmpMb?: number;
  /** CPU time of each process, in seconds (RLIMIT_CPU). Default 600. */
  cpuSeconds?: number;
  /**
   * Pseudo-terminals the command may hold at once (the `max` of its own
   * devpts instance), so that it cannot take the host's shared pool. Where
   * the host is not root no bound can be set and the command gets none.
   * Default 16.
   */
  ptys?: number;
  /** Open files of each process (RLIMIT_NOFILE, soft and hard). Default 1024. */
  openFiles?: number;
}

/** Limits after defaults and validation. */
export type CheckedLimits = Required<CommandLimits>;

/** Defaults of {@link CommandLimits}. */
export const DEFAULT_LIMITS: Readonly<CheckedLimits> = {
  memoryMb: 2048,
  processes: 256,
  tmpMb: 512,
  cpuSeconds: 600,
  ptys: 16,
  openFiles: 1024,
};

/** Upper bounds, so that a typo cannot turn a limit into none. */
const MAX: Readonly<CheckedLimits> = {
  memoryMb: 1024 * 1024,
  processes: 1_000_000,
  tmpMb: 1024 * 1024,
  cpuSeconds: 31 * 24 * 3600,
  // The shared pool is 3,072 by default: a command never gets near it.
  ptys: 1024,
  // The kernel's default fs.nr_open.
  openFiles: 1_048_576,
};

/**
 * Merges `limits` over the defaults.
 * @throws TypeError on an unknown key or a value that is not a positive integer
 */
export function checkLimits(limits: unknown): CheckedLimits {
  if (limits === undefined) return { ...DEFAULT_LIMITS };
  if (typeof limits !== "object" || limits === null || Array.isArray(limits))
    throw new TypeError("runCommand: limits must be an object");
  const out: CheckedLimits = { ...DEFAULT_LIMITS };
  for (const [k, v] of Object.entries(limits)) {
    if (!Object.hasOwn(DEFAULT_LIMITS, k))
      throw new TypeError(`runCommand: unknown limit '${k.slice(0, 40)}'`);
    if (v === undefined) continue;
    const key = k as keyof CheckedLimits;
    if (!Number.isInteger(v) || (v as number) <= 0 || (v as number) > MAX[key])
      throw new TypeError(
        `runCommand: limits.${key} must be a positive integer (at most ${MAX[key]})`,
      );
    out[key] = v as number;
  }
  return out;
}

/**
 * Shell text run inside the sandbox, before the command, that sets the
 * rlimits (soft and hard: the command cannot raise them again). RLIMIT_NPROC
 * is set inside the new user namespace on purpose: there the kernel counts
 * only the sandbox's own processes, not every process of the host user.
 */
export function rlimitPrefix(l: CheckedLimits, processes = true): string {
  // CPU: the soft limit sends SIGXCPU (a clear exit status, 152), the hard
  // one a second later SIGKILL for a process that ignores it.
  // Open files: a host whose hard limit is already lower keeps it (an
  // unprivileged user cannot raise it, and it bounds tighter anyway).
  const files = `{ ulimit -n ${l.openFiles} 2>/dev/null || [ "$(ulimit -H -n)" -lt ${l.openFiles} ]; }`;
  const nproc = processes ? ` -u ${l.processes}` : "";
  return `ulimit -t ${l.cpuSeconds + 1} -d ${l.memoryMb * 1024}${nproc} && ${files} && ulimit -S -t ${l.cpuSeconds} || exit 125; `;
}

/** Which limits the cgroup reported as hit (see `cgroup.ts`). */
export interface LimitHits {
  memory: boolean;
  processes: boolean;
}

const SIGXCPU = 24;
const SIGKILL = 9;
const FORK_FAILED =
  /fork: (retry: )?Interrupted system call|Resource temporarily unavailable|Cannot fork/i;
const NO_MEMORY = /Cannot allocate memory|Out of memory|out of memory|MemoryError|bad_alloc|ENOMEM/;
const NO_SPACE = /No space left on device|ENOSPC/;
const NO_PTY = /out of pty devices|openpty|posix_openpt|\/dev\/ptmx/i;
const NO_FILES = /Too many open files|EMFILE/;

/**
 * Notes saying which limit a command ran into. The kernel reports a hit
 * only as a failed call (EAGAIN, ENOMEM, ENOSPC) or a signal, so besides the
 * cgroup's counters the command's exit status and error text are read.
 */
export function describeLimitHits(
  l: CheckedLimits,
  exitCode: number,
  stderr: string,
  hits: LimitHits,
): string[] {
  const notes: string[] = [];
  if (exitCode === 128 + SIGXCPU || (exitCode === 128 + SIGKILL && /CPU time/i.test(stderr)))
    notes.push(
      `A process used up its CPU time limit (${l.cpuSeconds} s per process) and was stopped.`,
    );
  if (hits.memory)
    notes.push(
      `The memory limit (${l.memoryMb} MiB) was reached: a process was killed for using too much memory.`,
    );
  else if (NO_MEMORY.test(stderr))
    notes.push(
      `An allocation failed: the memory limit (${l.memoryMb} MiB per process) may have been reached.`,
    );
  if (hits.processes || FORK_FAILED.test(stderr))
    notes.push(
      `The process limit (${l.processes} processes and threads at once) was reached: a new process could not be started.`,
    );
  if (NO_PTY.test(stderr))
    notes.push(
      `A pseudo-terminal could not be opened: a command may hold at most ${l.ptys} at once (limits.ptys), and none where the host does not run as root.`,
    );
  if (NO_FILES.test(stderr))
    notes.push(`The open-file limit (${l.openFiles} per process, limits.openFiles) was reached.`);
  if (NO_SPACE.test(stderr) && !/out of pty devices/i.test(stderr))
    notes.push(
      `A scratch file system (/tmp or /dev/shm, ${l.tmpMb} MiB each) is full, or the disk of a writable folder is.`,
    );
  return notes;
}
