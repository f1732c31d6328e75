/**
 * Starts bubblewrap for one confined command, through a tiny launcher that
 * first closes every descriptor this process inherited beyond the ones
 * handed over on purpose (Node closes only its own; a host started with, say,
 * descriptor 100 open on some folder would otherwise pass it to the command),
 * then joins the command's cgroups, then becomes bubblewrap.
 *
 * Descriptors handed to bubblewrap: 3 the seccomp filter, 4 the environment
 * (NUL-separated, read by the shell inside: never on a command line), 5
 * bubblewrap's `--info-fd` (its child's pid), 6 the sync socket (see
 * `verify-mounts.ts`: the shell inside waits there, before the command, until
 * the host has checked the sandbox's mount table), 7… one per bind. None of
 * them reaches the command itself.
 */
import { readFileSync } from "node:fs";
import { IoError, OsSandboxUnavailableError } from "../errors/index.js";
import type { Policy } from "../sandbox/policy.js";
import { pinBinds } from "./bind-fds.js";
import type { BindPlan } from "./bind-plan.js";
import { buildBwrapArgs } from "./bwrap.js";
import { createCommandCgroup } from "./cgroup.js";
import { type CheckedLimits, type LimitHits, rlimitPrefix } from "./limits.js";
import { type Channel, type RawResult, runProcess } from "./process.js";
import { planPtys } from "./pty-bound.js";
import { detectSeccompArch, getSeccompFilter } from "./seccomp.js";
import { addRunning, enterSetup, type Running, removeRunning, type Setup } from "./setup-gate.js";
import { checkMounts, type ExpectedMount, expectMounts } from "./verify-mounts.js";

const FD_SECCOMP = 3;
const FD_ENV = 4;
const FD_INFO = 5;
const FD_SYNC = 6;
const FD_FIRST_BIND = 7;

/**
 * For tests only: called after the binds are pinned and just before
 * bubblewrap starts (the window a concurrent command could use).
 */
export const launchTestHooks: { beforeSpawn?: (info: { frozen: number }) => void } = {};

function writableHosts(plan: BindPlan): string[] {
  return plan.steps.filter((s) => s.kind === "bind" && s.writable).map((s) => s.host);
}

/**
 * The launcher (run by `bash -p`: no startup files, no functions or shell
 * options taken from the environment, which is empty anyway). Arguments:
 * the highest descriptor to keep, `cgroup.procs` files to join, `--`, then
 * bubblewrap and its arguments. Where the command's ptys are bounded it runs
 * under `unshare --mount` and mounts their instance before its `exec` (see
 * `pty-bound.ts`): the trusted `unshare` gets the inherited descriptors
 * for that moment, and touches none of them.
 */
export const LAUNCHER = [
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
  allowUnixSockets: boolean;
  env: Readonly<Record<string, string>>;
  limits: CheckedLimits;
  timeoutMs: number;
  maxOutputBytes: number;
  signal: AbortSignal | undefined;
  passThrough: boolean;
  /**
   * Called once the mounts are made, before the command starts: `false`
   * stops it (a secret the masks do not cover, see `secret-masks.ts`).
   */
  recheck?: (() => Promise<boolean>) | undefined;
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
  const cgroup = createCommandCgroup(run.limits);
  const me: Running = {
    binds: plan.steps.filter((s) => s.kind === "bind").map((s) => s.host),
    writable: writableHosts(plan),
    cgroup,
    started: false,
  };
  addRunning(me);
  // Other commands of this process that can write where this one's mounts
  // go are frozen until bubblewrap has made them: they cannot swap a folder
  // on the way meanwhile (the mount table check catches a mount landing
  // elsewhere, but bubblewrap may already have made a folder there). One
  // setup at a time, and never a frozen one: see `setup-gate.ts`.
  const waitStart = Date.now();
  let setup: Setup | undefined;
  try {
    setup = await enterSetup(me, run.timeoutMs, run.signal);
  } catch (err) {
    removeRunning(me);
    await cgroup?.remove();
    throw err;
  }
  if (setup === undefined) {
    removeRunning(me);
    await cgroup?.remove();
    // Never started: the wait for the other commands' setups took its time.
    const aborted = run.signal?.aborted === true;
    return { ...notStarted(aborted), hits: { memory: false, processes: false } };
  }
  const held = setup;
  let pinned: ReturnType<typeof pinBinds>;
  try {
    pinned = pinBinds(policy, plan);
  } catch (err) {
    await held.release();
    removeRunning(me);
    await cgroup?.remove();
    throw err;
  }
  let next = FD_FIRST_BIND;
  const bindFds = pinned.fds.map((fd) => (fd === undefined ? undefined : next++));
  try {
    const verify = new MountCheck(
      expectMounts(plan, pinned.fds),
      () => void held.release(),
      run.recheck,
    );
    const ptys = planPtys(run.limits.ptys, me.writable);
    const args = buildBwrapArgs(plan, run.command, {
      devArgs: ptys.devArgs,
      network: run.network,
      tmpBytes: run.limits.tmpMb * 1024 * 1024,
      prefix: rlimitPrefix(run.limits),
      fds: { seccomp: FD_SECCOMP, env: FD_ENV, info: FD_INFO, sync: FD_SYNC, binds: bindFds },
    });
    const env = Buffer.from(
      Object.entries(run.env)
        .map(([k, v]) => `${k}=${v}\0`)
        .join(""),
    );
    const extra: (Buffer | number | Channel)[] = [
      getSeccompFilter(arch, run.allowUnixSockets),
      env,
      verify.info,
      verify.sync,
      ...pinned.fds.filter((fd): fd is number => fd !== undefined),
    ];
    launchTestHooks.beforeSpawn?.({ frozen: held.frozen });
    const [file, ...argv] = ptys.wrapLauncher(
      LAUNCHER,
      ["mountbox-launch", String(next - 1), ...(cgroup?.procsFiles ?? []), "--"],
      [run.bwrap, ...args],
    );
    const raw = await runProcess(
      {
        file: file!,
        args: argv,
        cwd: "/",
        env: {},
        extra,
        passThrough: run.passThrough,
        timeoutMs: Math.max(1, run.timeoutMs - (Date.now() - waitStart)),
        maxOutputBytes: run.maxOutputBytes,
        signal: run.signal,
        // A frozen process (cgroup v1) does not die of the group's SIGKILL
        // until thawed: the timeout kills the cgroup, which thaws it too.
        onKill: () => cgroup?.kill(),
      },
      pinned.close,
    );
    // Stopped during setup, the check fails too (its peer is killed): the
    // stop is what happened, not a changed folder (a race CI hit: `exec`
    // killed by SIGTERM exited 125 with this error instead of 143).
    if (verify.failed && run.signal?.aborted !== true)
      throw new IoError(
        "Cannot run the command: the sandbox's folders changed while the command was being set up (a folder on the way to a mount was moved or replaced, or a folder holding a secret was moved, perhaps by another command running at the same time). The command was not run. Try again.",
      );
    const hits = cgroup?.readHits() ?? { memory: false, processes: false };
    return { ...raw, hits };
  } finally {
    await held.release();
    removeRunning(me);
    pinned.close();
    pinned.release();
    // Awaited (a few ms at most while the kernel reaps the last processes):
    // a host that exits right after the command, like the CLI, must not
    // leave its cgroup behind.
    await cgroup?.remove();
  }
}

function notStarted(aborted: boolean): RawResult {
  return { exitCode: 137, stdout: "", stderr: "", timedOut: !aborted, aborted, truncated: false };
}

/**
 * The host's side of the check made between bubblewrap's setup and the
 * command: bubblewrap reports its child's pid on `info`; the shell inside
 * writes `r` on `sync` once every mount is made and waits; the host reads
 * the child's mount table, compares it with the plan and answers `g`, or
 * kills the whole tree. The command cannot skip this: it has not started.
 */
class MountCheck {
  failed = false;
  readonly #onReady: () => void;
  #pid: number | undefined;
  #ready = false;
  #socket: import("node:stream").Duplex | undefined;
  #kill: (() => void) | undefined;
  #infoText = "";
  #done = false;
  readonly #expected: ExpectedMount[];
  readonly #recheck: (() => Promise<boolean>) | undefined;

  /**
   * `onReady`: called once bubblewrap has made every mount (or failed);
   * `recheck`: a last look after the mount table's, `false` to stop.
   */
  constructor(
    expected: ExpectedMount[],
    onReady: () => void,
    recheck?: (() => Promise<boolean>) | undefined,
  ) {
    this.#expected = expected;
    this.#onReady = onReady;
    this.#recheck = recheck;
  }

  readonly info: Channel = {
    attach: (socket) => {
      socket.on("data", (b: Buffer) => {
        if (this.#pid !== undefined || this.#infoText.length > 4096) return;
        this.#infoText += b.toString("utf8");
        const m = /"child-pid"\s*:\s*(\d+)/.exec(this.#infoText);
        if (m !== null) {
          this.#pid = Number(m[1]);
          this.#maybeCheck();
        }
      });
    },
  };

  readonly sync: Channel = {
    attach: (socket, kill) => {
      this.#socket = socket;
      this.#kill = kill;
      socket.on("data", (b: Buffer) => {
        // Once the check has begun, the shell inside has closed its end:
        // anything later is not its doing and changes nothing.
        if (this.#done) return;
        if (this.#ready || b.length !== 1 || b[0] !== 0x72) {
          // Anything but one `r` before the answer: not our shell.
          this.#fail();
          return;
        }
        this.#ready = true;
        this.#onReady();
        this.#maybeCheck();
      });
    },
  };

  #maybeCheck(): void {
    if (!this.#ready || this.#pid === undefined || this.#done) return;
    this.#done = true;
    const pid = this.#pid;
    // Read at once (a few KiB from procfs): a thread-pool round trip here
    // is time every command waits, before it starts (issue 25).
    Promise.resolve()
      .then(async () => {
        const text = readFileSync(`/proc/${pid}/mountinfo`, "utf8");
        const ok =
          checkMounts(text, this.#expected) === undefined &&
          (this.#recheck === undefined || (await this.#recheck()));
        if (ok) this.#socket?.end("g");
        else this.#fail();
      })
      .catch(() => this.#fail());
  }

  #fail(): void {
    this.failed = true;
    this.#kill?.();
    this.#socket?.destroy();
  }
}
