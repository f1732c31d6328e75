/**
 * `runCommand`: a shell command confined by the operating system to what a
 * sandbox permits (DESIGN §8). On Linux it runs `bash -c` under bubblewrap,
 * with the sandbox's areas bound under `/workspace`. The pieces: `bind-plan`
 * (what is bound where), `bind-fds` (pinning it), `bwrap` (the arguments),
 * `bwrap-binary` (which bubblewrap), `seccomp`, `limits`, `cgroup`,
 * `launch` (descriptors, cgroups, start), `setup-gate` (concurrent
 * commands: one setup at a time, guarded freezes), `process` (output, timeout),
 * `command-options` (checking the options) and `command-notes` (what a
 * model is told).
 */
import { tmpdir } from "node:os";
import type { Policy } from "../sandbox/policy.js";
import { policyOf, type Sandbox } from "../sandbox/sandbox.js";
import { planBinds } from "./bind-plan.js";
import { findBwrap, type Unavailability } from "./bwrap-binary.js";
import {
  buildCommandResult,
  describeUnconfined,
  makeUnavailableError,
  redactBwrapLines,
} from "./command-notes.js";
import { type CheckedCommandOptions, checkCommandOptions } from "./command-options.js";
import { refuseLinkedHostCode } from "./host-code-links.js";
import { runConfined } from "./launch.js";
import type { CommandLimits } from "./limits.js";
import { describeNestedRepos, findNestedRepos } from "./nested-repos.js";
import { runProcess } from "./process.js";
import { guardsGit } from "./protected-entries.js";
import { checkSeatbelt, findWorkingFolder, runSeatbelt } from "./seatbelt-run.js";
import { addSecretMasks, checkSecretsMasked, findSecretPlaces } from "./secret-masks.js";

export { describeCommandSandbox } from "./command-notes.js";
export type { CommandLimits } from "./limits.js";

/** Options of {@link runCommand}. */
export interface RunCommandOptions {
  /** Wall-clock limit; the whole process tree is killed when it passes. Default 60 000. */
  timeoutMs?: number;
  /** Keep network access. Default false: a new, empty network namespace. */
  network?: boolean;
  /**
   * Let the command create unix sockets with `socket(AF_UNIX, …)`. Default
   * false: such a socket could `connect` to any socket file the command can
   * see (a read-only mount too: docker.sock, an agent's or a database's
   * socket), and the server would see the host user (root on a root host),
   * whatever `network` says. `socketpair` keeps working either way. Turn on
   * only for commands that must talk to a local server, or listen on a unix
   * socket themselves.
   */
  allowUnixSockets?: boolean;
  /**
   * The command's environment, on top of a minimal default (`PATH`,
   * `HOME=/tmp`, `TMPDIR=/tmp`, `LANG=C.UTF-8`). Nothing is inherited from
   * the host process.
   */
  env?: Record<string, string>;
  /** Cap per stream (stdout, stderr), in bytes. Default 1 MiB. */
  maxOutputBytes?: number;
  /** Stops the command (and every process it started) when aborted. */
  signal?: AbortSignal;
  /**
   * DANGEROUS. When OS enforcement is unavailable, run the command anyway,
   * unconfined, as the host user, in the host folder of the sandbox's first
   * readable area. Nothing but the environment is restricted then. Default
   * false: `runCommand` throws {@link OsSandboxUnavailableError} instead.
   */
  unsafeAllowUnconfined?: boolean;
  /**
   * Path of the bubblewrap binary. Default: `MOUNTBOX_BWRAP` from the
   * environment, else the first of `/usr/bin/bwrap`, `/bin/bwrap`,
   * `/usr/sbin/bwrap`, `/usr/local/bin/bwrap` (never `PATH`). It must be
   * owned by root (or the current user), writable by no one else, and
   * outside the sandbox's writable folders.
   */
  bwrapPath?: string;
  /**
   * Kernel-enforced limits (defaults: 2048 MiB memory per process, 256
   * processes, 512 MiB for `/tmp` and for `/dev/shm`, 600 CPU seconds per
   * process). A command that hits one gets a note saying which.
   */
  limits?: CommandLimits;
  /**
   * Copy the command's stdout and stderr to this process's own as they come,
   * byte for byte (nothing captured: `stdout`/`stderr` in the result are
   * empty and notes that depend on them are not made). The command gets
   * pipes, never this process's descriptors (it could reopen them through
   * `/proc` and read or truncate the caller's file, or read its terminal);
   * when this process's stdout and stderr are the same open file (`2>&1`,
   * a terminal) both streams share one pipe, so their order is kept.
   * Default false.
   */
  passThrough?: boolean;
  /**
   * DANGEROUS. Run the command even though a file of the host's own code
   * has a hard link the host does not know of, on a file system one of the
   * command's writable folders reaches (a package store shared with another
   * project, as pnpm does by default, `cp -al`, a hard-linking installer):
   * the command could change that file in place, and with it what the host
   * runs. Default false: `runCommand` throws {@link OsSandboxUnavailableError}
   * instead. Turn on only when the host's code is installed by copy or no
   * writable folder can hold such a link.
   */
  allowHardLinkedHostCode?: boolean;
}

/** What a command did. */
export interface CommandResult {
  /** Exit status; 128 + signal number when killed by a signal (shell convention). */
  exitCode: number;
  /** Standard output (UTF-8), at most `maxOutputBytes`. */
  stdout: string;
  /** Standard error (UTF-8), at most `maxOutputBytes`. */
  stderr: string;
  /** True if the timeout stopped it. */
  timedOut: boolean;
  /** True if stdout or stderr was cut at `maxOutputBytes`. */
  truncated: boolean;
  /**
   * Explanations for a model: why a write or a network call failed, that the
   * output was cut, that the timeout hit, that the command made or changed a
   * git repository below the top of a writable folder. Virtual paths only. Kept apart from
   * `stderr` so the command's own output stays exactly what it printed.
   */
  notes: string[];
  /** False only when `unsafeAllowUnconfined` let it run without OS enforcement. */
  confined: boolean;
}

/**
 * Runs `bash -c command` confined to what `sandbox` permits.
 *
 * Linux: bubblewrap with all capabilities dropped; new user, pid, ipc, uts
 * and (unless `network`) net namespaces; `--die-with-parent`,
 * `--new-session`; a cleared environment; system folders read-only; a
 * private `/tmp`; and the sandbox's areas bound under `/workspace` (the
 * working directory) at their virtual paths — readable areas read-only,
 * writable areas read-write, read-only mounts kept read-only, areas the
 * sandbox cannot read absent. Virtual `/src/a.ts` is `/workspace/src/a.ts`.
 * The command runs as the host user (uid 0 when the host is root, so that
 * what it writes belongs to the same owner as the rest of the sandbox) with
 * no capability, `/proc/sys` and the other kernel knobs read-only, a seccomp
 * filter (no keyring, modules, clocks, mounts, new namespaces or set-id
 * bits), only descriptors 0–2, and kernel-enforced `limits`. Mount sources
 * must still be the folders they were when the sandbox was created.
 *
 * macOS: `/bin/sh -c command` under `sandbox-exec` with a Seatbelt profile
 * built from the same policy (`seatbelt-profile.ts`). No mount namespace:
 * the command sees the areas at their host paths (virtual paths are not
 * remapped), starts in the host folder of the sandbox's root, and has a
 * private scratch folder as HOME and TMPDIR; `limits` and `bwrapPath` do
 * not apply. Tested by its text, not executed, on this project's machines.
 *
 * @throws OsSandboxUnavailableError if bubblewrap is missing, untrusted, too
 *   old or cannot create namespaces (unless `unsafeAllowUnconfined`), or a
 *   writable folder reaches a file system where the host's code has hard
 *   links the host does not know of (unless `allowHardLinkedHostCode`)
 * @throws IoError if a mount source was moved or replaced since the sandbox
 *   was created, a mount point cannot be made without following a link, or
 *   the sandbox's mount table (checked after bubblewrap's setup, before the
 *   command starts) is not the plan (a folder on the way was swapped)
 * @throws TypeError on bad arguments
 */
export async function runCommand(
  sandbox: Sandbox,
  command: string,
  options: RunCommandOptions = {},
): Promise<CommandResult> {
  const policy = policyOf(sandbox);
  if (typeof command !== "string" || command.trim() === "")
    throw new TypeError("runCommand: command must be a non-empty string");
  if (command.includes("\0")) throw new TypeError("runCommand: command must not contain NUL");
  const opts = checkCommandOptions(options);
  if (opts.signal?.aborted) throw new TypeError("runCommand: the signal is already aborted");

  if (process.platform === "darwin") {
    // macOS: Seatbelt (see `seatbelt-run.ts`); host paths, no /workspace.
    const why = checkSeatbelt();
    if (why !== undefined) {
      if (!opts.unsafeAllowUnconfined) throw makeUnavailableError(why);
      return runUnconfined(policy, command, opts, why);
    }
    const raw = await runSeatbelt(policy, command, opts);
    return buildCommandResult(raw, policy, opts, true, undefined, "host");
  }
  const found = await findBwrap(policy, opts.bwrapPath);
  if ("why" in found) {
    if (!opts.unsafeAllowUnconfined) throw makeUnavailableError(found.why);
    return runUnconfined(policy, command, opts, found.why);
  }
  const plan = planBinds(policy);
  // Secrets the binds would show are masked (see `secret-masks.ts`).
  const secrets = await findSecretPlaces(policy, plan);
  addSecretMasks(plan, secrets);
  if (!opts.allowHardLinkedHostCode) refuseLinkedHostCode(plan);
  const startMs = Date.now();
  const raw = await runConfined(policy, plan, {
    bwrap: found.path,
    command,
    network: opts.network,
    allowUnixSockets: opts.allowUnixSockets,
    env: opts.env,
    limits: opts.limits,
    timeoutMs: opts.timeoutMs,
    maxOutputBytes: opts.maxOutputBytes,
    signal: opts.signal,
    passThrough: opts.passThrough,
    recheck:
      policy.secrets.entries.length === 0
        ? undefined
        : () => checkSecretsMasked(policy, plan, secrets),
  });
  raw.stderr = redactBwrapLines(raw.stderr, plan);
  const result = buildCommandResult(raw, policy, opts, true, raw.hits);
  // A repository the command made below the top runs its config at the
  // host's next git there, or at the top once committed: say so (see
  // `nested-repos.ts`). Part of guarding `.git`, so off with it.
  if (guardsGit(policy)) {
    const note = describeNestedRepos(await findNestedRepos(plan, startMs));
    if (note !== undefined) result.notes.push(note);
  }
  return result;
}

/**
 * Runs the command without OS confinement (`unsafeAllowUnconfined`), in the
 * host folder of the sandbox's first readable area; a note says so.
 */
async function runUnconfined(
  policy: Policy,
  command: string,
  opts: CheckedCommandOptions,
  why: Unavailability,
): Promise<CommandResult> {
  const cwd = findWorkingFolder(policy) ?? tmpdir();
  const raw = await runProcess({
    file: "/bin/bash",
    args: ["-c", "--", command],
    cwd,
    env: opts.env,
    passThrough: opts.passThrough,
    killGroupOnExit: true,
    timeoutMs: opts.timeoutMs,
    maxOutputBytes: opts.maxOutputBytes,
    signal: opts.signal,
  });
  const result = buildCommandResult(raw, policy, opts, false);
  result.notes.unshift(describeUnconfined(why));
  return result;
}
