/**
 * Starts one agent process under the kernel confinement of shell commands:
 * bubblewrap with every capability dropped, new user, pid, ipc, uts and
 * (unless the worker asks for the network) net namespaces, the seccomp
 * filter, `--die-with-parent`, a cleared environment, the limits of
 * `runCommand` (rlimits, and a cgroup where the host can make one), a
 * private `/tmp`, and only the files of its {@link ProcessView}. Its
 * descriptors are stdin (`/dev/null`), stdout and stderr (pipes to the
 * host) and descriptor 3, the socket of its channel (see
 * `src/port/frames.ts`); the launcher closes every other one the host has.
 */
import type { ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { systemArgs } from "../os/bwrap.js";
import { createCommandCgroup } from "../os/cgroup.js";
import { LAUNCHER } from "../os/launch.js";
import { type CheckedLimits, rlimitPrefix } from "../os/limits.js";
import { type Channel, type RawResult, runProcess } from "../os/process.js";
import { NO_PTYS } from "../os/pty-bound.js";
import { buildSeccompFilter, detectSeccompArch } from "../os/seccomp.js";
import { buildViewArgs, type ProcessView } from "./process-view.js";

/** The descriptor of the channel inside the process. */
export const CHANNEL_FD = 3;
const SECCOMP_FD = 4;
const FIRST_MANIFEST_FD = 5;
/** Longest delay setTimeout honours: the supervisor's deadline ends an agent, not this. */
const NO_TIMEOUT = 2_147_483_647;

/** Real path of the built process entry. */
export function processEntryPath(): string {
  return fileURLToPath(new URL("../../workers/process-entry.js", import.meta.url));
}

/** How to start one agent process. */
export interface ProcessLaunch {
  /** The trusted bubblewrap binary (see `findBwrap`). */
  bwrap: string;
  /** Real path of the Node binary to run. */
  nodePath: string;
  /** Node's own options (heap size, …), before the entry. */
  nodeArgs: readonly string[];
  /** What it sees. */
  view: ProcessView;
  /** `file:` URL of a module to import ahead (a warm spare), if any. */
  preload?: string;
  network: boolean;
  limits: CheckedLimits;
  /** Gets the host's end of the channel as soon as the process exists. */
  channel: Channel;
  /** Its stdout and stderr, as they come. */
  onOutput: (stream: "stdout" | "stderr", chunk: Buffer) => void;
  /** Kills the process and everything it started. */
  signal: AbortSignal;
  /** Called with the process's handle as soon as it exists. */
  onSpawned?: (child: ChildProcess) => void;
}

/**
 * Starts the process (synchronously: the channel is attached before this
 * returns) and resolves once it and everything it started are gone.
 */
export function launchAgentProcess(l: ProcessLaunch): Promise<RawResult> {
  const arch = detectSeccompArch();
  if (arch === undefined) throw new Error("no seccomp filter for this CPU");
  const cgroup = createCommandCgroup(l.limits);
  // An agent's code needs no terminal: none at all (and no mount namespace
  // set up to bound them, which a command's start pays for).
  const ptys = NO_PTYS;
  const manifestFds = l.view.manifests.map((_, i) => FIRST_MANIFEST_FD + i);
  const handed = [SECCOMP_FD, ...manifestFds];
  // The limits: where a cgroup bounds the processes, all of them are set by
  // the launcher and bubblewrap starts Node itself (bubblewrap closes the
  // descriptors it was handed); elsewhere RLIMIT_NPROC must be set inside
  // the new user namespace (see `rlimitPrefix`), by a shell that then
  // becomes Node with an empty environment.
  // (`env` takes a program path with '=' in it for a variable, `--` or not.)
  const direct = cgroup?.boundsProcesses === true && !l.nodePath.includes("=");
  const launcher = direct ? `${rlimitPrefix(l.limits, false)}${LAUNCHER}` : LAUNCHER;
  // (bubblewrap sets PWD after --clearenv: `env -i` or `exec -c` start Node
  // with nothing in its environment.)
  const inner = direct
    ? ["/usr/bin/env", "-i"]
    : ["/bin/bash", "-p", "-c", `${rlimitPrefix(l.limits)}exec -c "$@"`, "mountbox-agent"];
  const args = [
    ...systemArgs(l.network, l.limits.tmpMb * 1024 * 1024, ptys.devArgs),
    ...buildViewArgs(l.view, manifestFds),
    "--remount-ro",
    "/",
    "--chdir",
    "/tmp",
    "--clearenv",
    "--seccomp",
    String(SECCOMP_FD),
    "--",
    ...inner,
    l.nodePath,
    ...l.nodeArgs,
    processEntryPath(),
    String(CHANNEL_FD),
    ...(l.preload === undefined ? [] : [l.preload]),
  ];
  const done = runProcess(
    {
      file: "/bin/bash",
      args: [
        "-p",
        "-c",
        launcher,
        "mountbox-launch",
        String(handed[handed.length - 1]),
        ...(cgroup?.procsFiles ?? []),
        "--",
        ...ptys.wrap([l.bwrap, ...args]),
      ],
      cwd: "/",
      env: {},
      extra: [
        l.channel,
        buildSeccompFilter(arch),
        ...l.view.manifests.map((m) => Buffer.from(m.text)),
      ],
      onOutput: l.onOutput,
      timeoutMs: NO_TIMEOUT,
      maxOutputBytes: 0,
      signal: l.signal,
      onKill: () => cgroup?.kill(),
    },
    l.onSpawned,
  );
  // Awaited by the caller: a host that exits right after must not leave its cgroup behind.
  return done.finally(() => cgroup?.remove());
}
