/**
 * `runCommand`: a shell command confined by the operating system to what a
 * sandbox permits (DESIGN §8). On Linux it runs `bash -c` under bubblewrap,
 * with the sandbox's areas bound under `/workspace`. The pieces: `bind-plan`
 * (what is bound where), `bind-fds` (pinning it), `bwrap` (the arguments),
 * `bwrap-binary` (which bubblewrap), `seccomp`, `limits`, `cgroup`,
 * `launch` (descriptors, cgroups, start) and `process` (output, timeout).
 */
import { tmpdir } from "node:os";
import { formatPathList, OsSandboxUnavailableError } from "../errors.js";
import type { Policy } from "../sandbox/policy.js";
import { policyOf, type Sandbox } from "../sandbox/sandbox.js";
import { isWithin } from "../sandbox/virtual-path.js";
import { type BindPlan, planBinds, toWorkspacePath, WORKSPACE } from "./bind-plan.js";
import { DEFAULT_ENV } from "./bwrap.js";
import { checkBwrapTrust, locateBwrap, probeBwrap, type Unavailability } from "./bwrap-binary.js";
import { runConfined } from "./launch.js";
import {
  type CheckedLimits,
  type CommandLimits,
  checkLimits,
  describeLimitHits,
  type LimitHits,
} from "./limits.js";
import { type RawResult, runProcess } from "./process.js";
import { detectSeccompArch } from "./seccomp.js";

export type { CommandLimits } from "./limits.js";

/** Options of {@link runCommand}. */
export interface RunCommandOptions {
  /** Wall-clock limit; the whole process tree is killed when it passes. Default 60 000. */
  timeoutMs?: number;
  /** Keep network access. Default false: a new, empty network namespace. */
  network?: boolean;
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
   * output was cut, that the timeout hit. Virtual paths only. Kept apart from
   * `stderr` so the command's own output stays exactly what it printed.
   */
  notes: string[];
  /** False only when `unsafeAllowUnconfined` let it run without OS enforcement. */
  confined: boolean;
}

const DEFAULT_TIMEOUT_MS = 60_000;
const DEFAULT_MAX_OUTPUT = 1024 * 1024;
const MAX_TIMER_MS = 2_147_483_647;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Options after validation. */
interface Checked {
  timeoutMs: number;
  network: boolean;
  env: Record<string, string>;
  maxOutputBytes: number;
  signal: AbortSignal | undefined;
  unsafeAllowUnconfined: boolean;
  bwrapPath: string | undefined;
  limits: CheckedLimits;
  passThrough: boolean;
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
 * @throws OsSandboxUnavailableError if bubblewrap is missing, untrusted, too
 *   old or cannot create namespaces (unless `unsafeAllowUnconfined`)
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
  const opts = checkOptions(options);
  if (opts.signal?.aborted) throw new TypeError("runCommand: the signal is already aborted");

  const found = await findBwrap(policy, opts.bwrapPath);
  if ("why" in found) {
    if (!opts.unsafeAllowUnconfined) throw unavailableError(found.why);
    return runUnconfined(policy, command, opts, found.why);
  }
  const plan = planBinds(policy);
  const raw = await runConfined(policy, plan, {
    bwrap: found.path,
    command,
    network: opts.network,
    env: opts.env,
    limits: opts.limits,
    timeoutMs: opts.timeoutMs,
    maxOutputBytes: opts.maxOutputBytes,
    signal: opts.signal,
    passThrough: opts.passThrough,
  });
  raw.stderr = redactBwrapLines(raw.stderr, plan);
  return finish(raw, policy, opts, true, raw.hits);
}

/** The trusted bubblewrap to run (its real path), or why there is none. */
async function findBwrap(
  policy: Policy,
  explicit: string | undefined,
): Promise<{ path: string } | { why: Unavailability }> {
  if (process.platform !== "linux" || detectSeccompArch() === undefined)
    return { why: "unsupported-platform" };
  const trust = checkBwrapTrust(locateBwrap(explicit), writableHostFolders(policy));
  if ("why" in trust) return trust;
  const why = await probeBwrap(trust.real);
  return why === undefined ? { path: trust.real } : { why };
}

/**
 * Host folders the sandbox can write, by a command or in-process: a
 * bubblewrap binary inside one could be replaced through the sandbox. A
 * bubblewrap inside a read-only area (a read-only sandbox over `/`) is fine.
 */
function writableHostFolders(policy: Policy): string[] {
  const out = new Set<string>();
  for (const m of policy.table.mounts) {
    if (m.readonly) continue;
    const touched = policy.write.some(
      (a) => isWithin(a.path, m.target) || isWithin(m.target, a.path),
    );
    if (touched) out.add(m.source);
  }
  for (const v of policy.writableRoots) {
    try {
      out.add(policy.resolveVirtual(v, "write", false).real);
    } catch {
      // not writable now
    }
  }
  return [...out];
}

/**
 * A text for a model (or a user) explaining where a sandbox's files are
 * inside a confined command, what may be written and whether the network is
 * on. Put it in a shell tool's description.
 */
export function describeCommandSandbox(sandbox: Sandbox, opts: { network?: boolean } = {}): string {
  const p = policyOf(sandbox);
  const readable = p.readableRoots.map(toWorkspacePath);
  return [
    `Commands run with bash in an OS sandbox. The sandbox's files are under ${WORKSPACE}, the working directory: the sandbox path '/src/a.ts' is '${WORKSPACE}/src/a.ts' there.`,
    `Readable: ${formatPathList(readable)}.`,
    `Writable: ${writableText(p)}.`,
    "/tmp is private scratch space, discarded when the command ends. Nothing else is writable; paths outside these do not exist.",
    `Network: ${opts.network === true ? "on" : "off"}. The environment is empty except PATH, HOME=/tmp, TMPDIR=/tmp and LANG.`,
  ].join("\n");
}

function writableText(p: Policy): string {
  const w = formatPathList(p.writableRoots.map(toWorkspacePath));
  const ro = p.readOnlyInside().map(toWorkspacePath);
  return ro.length > 0 ? `${w} (read-only inside: ${ro.join(", ")})` : w;
}

function checkOptions(o: RunCommandOptions): Checked {
  if (typeof o !== "object" || o === null)
    throw new TypeError("runCommand: options must be an object");
  const known = new Set([
    "timeoutMs",
    "network",
    "env",
    "maxOutputBytes",
    "signal",
    "unsafeAllowUnconfined",
    "bwrapPath",
    "limits",
    "passThrough",
  ]);
  for (const k of Object.keys(o))
    if (!known.has(k)) throw new TypeError(`runCommand: unknown option '${k}'`);
  const timeoutMs = o.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  if (!Number.isInteger(timeoutMs) || timeoutMs <= 0 || timeoutMs > MAX_TIMER_MS)
    throw new TypeError("runCommand: timeoutMs must be a positive integer (milliseconds)");
  const maxOutputBytes = o.maxOutputBytes ?? DEFAULT_MAX_OUTPUT;
  if (!Number.isInteger(maxOutputBytes) || maxOutputBytes <= 0)
    throw new TypeError("runCommand: maxOutputBytes must be a positive integer (bytes)");
  for (const k of ["network", "unsafeAllowUnconfined", "passThrough"] as const) {
    if (o[k] !== undefined && typeof o[k] !== "boolean")
      throw new TypeError(`runCommand: ${k} must be a boolean`);
  }
  if (o.bwrapPath !== undefined && (typeof o.bwrapPath !== "string" || o.bwrapPath === ""))
    throw new TypeError("runCommand: bwrapPath must be a non-empty string");
  if (o.signal !== undefined && !(o.signal instanceof AbortSignal))
    throw new TypeError("runCommand: signal must be an AbortSignal");
  const env: Record<string, string> = { ...DEFAULT_ENV };
  if (o.env !== undefined) {
    if (typeof o.env !== "object" || o.env === null || Array.isArray(o.env))
      throw new TypeError("runCommand: env must be an object of strings");
    for (const [k, v] of Object.entries(o.env)) {
      if (!ENV_NAME.test(k))
        throw new TypeError(
          `runCommand: env name '${k.slice(0, 60)}' is not a valid variable name`,
        );
      if (typeof v !== "string" || v.includes("\0"))
        throw new TypeError(`runCommand: env.${k} must be a string without NUL`);
      env[k] = v;
    }
  }
  return {
    timeoutMs,
    maxOutputBytes,
    env,
    network: o.network ?? false,
    signal: o.signal,
    unsafeAllowUnconfined: o.unsafeAllowUnconfined ?? false,
    bwrapPath: o.bwrapPath,
    limits: checkLimits(o.limits),
    passThrough: o.passThrough ?? false,
  };
}

function unavailableError(why: Unavailability): OsSandboxUnavailableError {
  const reasons: Record<Unavailability, string> = {
    missing: "bubblewrap (bwrap) was not found. Install it (e.g. `apt install bubblewrap`)",
    "too-old": "the installed bubblewrap is too old (0.6 or newer is needed)",
    untrusted:
      "the bubblewrap binary is not trusted (it must be an absolute path to a file owned by root or the current user, writable by no one else, in folders only they can change, and outside the sandbox's writable folders; set MOUNTBOX_BWRAP or bwrapPath to a system copy)",
    "no-namespaces":
      "bubblewrap cannot create the namespaces it needs here (user namespaces may be disabled, e.g. by kernel.unprivileged_userns_clone=0 or a container's seccomp policy)",
    "unsupported-platform": `there is no OS sandbox for this platform (${process.platform}, ${process.arch}); only Linux on x86_64 or arm64 with bubblewrap is supported`,
  };
  return new OsSandboxUnavailableError(
    `Cannot run the command: OS sandboxing is unavailable: ${reasons[why]}. The command was not run. To run commands without OS confinement anyway, pass unsafeAllowUnconfined: true (not recommended).`,
  );
}

/** bubblewrap's own messages name host paths: show their virtual places instead. */
function redactBwrapLines(stderr: string, plan: BindPlan): string {
  if (!stderr.includes("bwrap:")) return stderr;
  const binds = plan.steps
    .filter((s) => s.kind === "bind")
    .sort((a, b) => b.host.length - a.host.length);
  return stderr
    .split("\n")
    .map((line) => {
      if (!line.startsWith("bwrap:")) return line;
      let out = line;
      for (const s of binds) out = out.split(s.host).join(toWorkspacePath(s.virtual));
      return out;
    })
    .join("\n");
}

async function runUnconfined(
  policy: Policy,
  command: string,
  opts: Checked,
  why: Unavailability,
): Promise<CommandResult> {
  let cwd = tmpdir();
  for (const v of policy.readableRoots) {
    try {
      cwd = policy.resolveVirtual(v, "read", false).real;
      break;
    } catch {
      // try the next area
    }
  }
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
  const result = finish(raw, policy, opts, false);
  result.notes.unshift(
    `This command ran WITHOUT OS confinement (${why === "missing" ? "bubblewrap is missing" : why === "untrusted" ? "the bubblewrap binary is not trusted" : "OS sandboxing is unavailable"}; unsafeAllowUnconfined was set). File access was not restricted.`,
  );
  return result;
}

const WRITE_REFUSED = /Read-only file system|Permission denied|No such file or directory/;
const NETWORK_FAILED =
  /Could not resolve host|Temporary failure in name resolution|Name or service not known|Network is unreachable|Connection refused|getaddrinfo|ENOTFOUND|EAI_AGAIN|ENETUNREACH|ECONNREFUSED|Failed to connect|No address associated/i;

function finish(
  raw: RawResult,
  policy: Policy,
  opts: Checked,
  confined: boolean,
  hits?: LimitHits,
): CommandResult {
  const notes: string[] = [];
  if (confined && hits !== undefined)
    notes.push(...describeLimitHits(opts.limits, raw.exitCode, raw.stderr, hits));
  if (raw.timedOut)
    notes.push(
      `The command was stopped after ${opts.timeoutMs} ms (timeout); every process it started was killed.`,
    );
  if (raw.aborted) notes.push("The command was cancelled; every process it started was killed.");
  if (raw.truncated)
    notes.push(
      `Output was cut at ${opts.maxOutputBytes} bytes per stream. Redirect it to a file under /tmp and read parts of it (head, tail, grep).`,
    );
  if (confined && WRITE_REFUSED.test(raw.stderr)) {
    notes.push(
      `A path was refused or not found by the OS sandbox. The sandbox's files are under ${WORKSPACE} (the sandbox path '/x' is '${WORKSPACE}/x'). Writable: ${writableText(policy)}; /tmp is private scratch space. Everything else is read-only or absent.`,
    );
  }
  if (confined && !opts.network && NETWORK_FAILED.test(raw.stderr)) {
    notes.push(
      "Network access is off for this command (it runs in an empty network namespace, the host's 127.0.0.1 included). Ask for network access if it is needed.",
    );
  }
  return {
    exitCode: raw.exitCode,
    stdout: raw.stdout,
    stderr: raw.stderr,
    timedOut: raw.timedOut,
    truncated: raw.truncated,
    notes,
    confined,
  };
}
