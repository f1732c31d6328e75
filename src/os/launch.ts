/**
 * Starts bubblewrap for one confined command, through a tiny launcher that
 * first closes every descriptor this process inherited beyond the ones
 * handed over on purpose (Node closes only its own; a host started with, say,
 * descriptor 100 open on some folder would otherwise pass it to the command),
 * then joins the command's cgroups, then becomes bubblewrap.
 *
 * Descriptors handed to bubblewrap: 3 the seccomp filter, 4 the environment
 * (NUL-separated, read by the shell inside: never on a command line), 5… one
 * per bind. None of them reaches the command itself.
 */
import { OsSandboxUnavailableError } from "../errors.js";
import type { Policy } from "../sandbox/policy.js";
import { pinBinds } from "./bind-fds.js";
import type { BindPlan } from "./bind-plan.js";
import { buildBwrapArgs } from "./bwrap.js";
import { createCommandCgroup } from "./cgroup.js";
import { type CheckedLimits, type LimitHits, rlimitPrefix } from "./limits.js";
import { type RawResult, runProcess } from "./process.js";
import { buildSeccompFilter, detectSeccompArch } from "./seccomp.js";

const FD_SECCOMP = 3;
const FD_ENV = 4;
const FD_FIRST_BIND = 5;

/**
 * The launcher (run by `bash -p`: no startup files, no functions or shell
 * options taken from the environment, which is empty anyway). Arguments:
 * the highest descriptor to keep, `cgroup.procs` files to join, `--`, then
 * bubblewrap and its arguments.
 */
const LAUNCHER = [
  "keep=$1; shift",
  // biome-ignore lint/suspicious/noTemplateCurlyInString: shell parameter expansion
  'for f in /proc/self/fd/*; do n=${f##*/}; if [ "$n" -gt "$keep" ]; then exec {n}>&-; fi; done',
  'while [ "$1" != "--" ]; do echo $$ 2>/dev/null >"$1"; shift; done; shift',
  'exec "$@"',
].join("\n");

/** What {@link runConfined} needs besides the plan. */
export interface ConfinedRun {
  bwrap: string;
  command: string;
  network: boolean;
  env: Readonly<Record<string, string>>;
  limits: CheckedLimits;
  timeoutMs: number;
  maxOutputBytes: number;
  signal: AbortSignal | undefined;
  passThrough: boolean;
}

/**
 * Runs the command under bubblewrap with the plan's binds pinned, the
 * seccomp filter, the limits and only descriptors 0–2.
 * @throws IoError if a mount source was replaced or a bind moved (see `bind-fds.ts`)
 * @throws OsSandboxUnavailableError if no seccomp filter exists for this
 *   architecture (the caller checks that first)
 */
export async function runConfined(
  policy: Policy,
  plan: BindPlan,
  run: ConfinedRun,
): Promise<RawResult & { hits: LimitHits }> {
  const arch = detectSeccompArch();
  if (arch === undefined)
    throw new OsSandboxUnavailableError(
      `Cannot run the command: there is no seccomp filter for this CPU (${process.arch}); only x86_64 and arm64 are supported.`,
    );
  const pinned = pinBinds(policy, plan);
  let next = FD_FIRST_BIND;
  const bindFds = pinned.fds.map((fd) => (fd === undefined ? undefined : next++));
  const cgroup = createCommandCgroup(run.limits);
  try {
    const args = buildBwrapArgs(plan, run.command, {
      network: run.network,
      tmpBytes: run.limits.tmpMb * 1024 * 1024,
      prefix: rlimitPrefix(run.limits),
      fds: { seccomp: FD_SECCOMP, env: FD_ENV, binds: bindFds },
    });
    const env = Buffer.from(
      Object.entries(run.env)
        .map(([k, v]) => `${k}=${v}\0`)
        .join(""),
    );
    const extra: (Buffer | number)[] = [
      buildSeccompFilter(arch),
      env,
      ...pinned.fds.filter((fd): fd is number => fd !== undefined),
    ];
    const raw = await runProcess(
      {
        file: "/bin/bash",
        args: [
          "-p",
          "-c",
          LAUNCHER,
          "mountbox-launch",
          String(next - 1),
          ...(cgroup?.procsFiles ?? []),
          "--",
          run.bwrap,
          ...args,
        ],
        cwd: "/",
        env: {},
        extra,
        passThrough: run.passThrough,
        timeoutMs: run.timeoutMs,
        maxOutputBytes: run.maxOutputBytes,
        signal: run.signal,
      },
      pinned.close,
    );
    const hits = cgroup?.readHits() ?? { memory: false, processes: false };
    return { ...raw, hits };
  } finally {
    pinned.close();
    // Awaited (a few ms at most while the kernel reaps the last processes):
    // a host that exits right after the command, like the CLI, must not
    // leave its cgroup behind.
    await cgroup?.remove();
  }
}
