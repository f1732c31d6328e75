/**
 * Pseudo-terminals of a confined command, bounded.
 *
 * bubblewrap's `--dev` gives the sandbox its own devpts instance, but with
 * no `max`: every instance outside the host's first one draws from one
 * shared pool (`/proc/sys/kernel/pty/max` minus `pty/reserve`, 3,072 by
 * default), so one command holding them all makes `openpty` fail with
 * ENOSPC in every other sandbox and container of the host. bubblewrap has
 * no way to pass `max=`, and the command cannot mount (no capability,
 * seccomp), so where the host is root the launcher does it: in a private
 * mount namespace of its own (`unshare -m`, nothing reaches the host's
 * mount table) it mounts a new devpts instance with `max=limits.ptys` over
 * `/dev/pts`, and bubblewrap binds that instance over the one `--dev` made.
 * Elsewhere (an unprivileged host, no trusted `unshare`/`mount`) no bound
 * can be set, so the command gets no pseudo-terminal at all: an empty,
 * read-only `/dev/pts` (fail closed).
 */
import { statSync } from "node:fs";
import { checkBwrapTrust } from "./bwrap-binary.js";

/** How one command gets its pseudo-terminals. */
export interface PtyPlan {
  /** bubblewrap arguments placed right after `--dev /dev`. */
  devArgs: string[];
  /** The argument vector that starts bubblewrap (`argv`: bubblewrap and its arguments). */
  wrap(argv: readonly string[]): string[];
  /** True if the command gets up to `max` ptys; false if it gets none. */
  bounded: boolean;
  /**
   * The argument vector that runs `launcher` (shell text ending in
   * `exec "$@"`, run by `bash -p` with `params` then `argv`) and then
   * bubblewrap (`argv`). Bounded, one shell does both the launcher's work
   * and the mount, in the private mount namespace: one program start less
   * per command than {@link PtyPlan.wrap} behind a launcher (issue 25).
   */
  wrapLauncher(launcher: string, params: readonly string[], argv: readonly string[]): string[];
}

const UNSHARE = ["/usr/bin/unshare", "/bin/unshare"];
const MOUNT = ["/usr/bin/mount", "/bin/mount"];

/**
 * Run by `bash -p` in the launcher's private mount namespace: mounts the
 * bounded instance, then becomes bubblewrap. If the mount fails the command
 * does not run: `/dev/pts` there would still be the host's own instance,
 * whose terminals a root command could type into.
 */
const MOUNT_THEN_EXEC = [
  "mount=$1 max=$2; shift 2",
  '"$mount" -n -t devpts -o "nosuid,noexec,newinstance,ptmxmode=0666,mode=620,gid=5,max=$max" devpts /dev/pts || exit 125',
  'exec "$@"',
].join("\n");

/**
 * Plans the ptys of one command: at most `max` where the host can mount
 * (root, with a trusted `unshare` and `mount` outside `writableFolders`),
 * none elsewhere.
 */
export function planPtys(max: number, writableFolders: readonly string[]): PtyPlan {
  const tools = process.geteuid?.() === 0 ? findTools(writableFolders) : undefined;
  if (tools === undefined || !statSync("/dev/pts", { throwIfNoEntry: false })?.isDirectory())
    return NO_PTYS;
  return {
    // The source is resolved in the launcher's namespace: the bounded instance.
    devArgs: ["--dev-bind", "/dev/pts", "/dev/pts"],
    wrap: (argv) => underUnshare(tools, MOUNT_THEN_EXEC, ["mountbox-ptys"], max, argv),
    bounded: true,
    wrapLauncher: (launcher, params, argv) =>
      underUnshare(tools, joinLauncher(launcher), params, max, argv),
  };
}

/**
 * `bash -p -c script` in a private mount namespace, given `params`, then the
 * mount tool and the bound (which the script's mount reads), then `argv`.
 */
function underUnshare(
  tools: { unshare: string; mount: string },
  script: string,
  params: readonly string[],
  max: number,
  argv: readonly string[],
): string[] {
  return [
    tools.unshare,
    "--mount",
    "--propagation",
    "private",
    "--",
    "/bin/bash",
    "-p",
    "-c",
    script,
    ...params,
    tools.mount,
    String(max),
    ...argv,
  ];
}

/** The launcher's text with the mount made before its final `exec`. */
function joinLauncher(launcher: string): string {
  const last = 'exec "$@"';
  if (!launcher.endsWith(last)) throw new Error("pty-bound: the launcher must end with its exec");
  return `${launcher.slice(0, -last.length)}${MOUNT_THEN_EXEC}`;
}

/** No pseudo-terminal at all: an empty, read-only `/dev/pts`. */
export const NO_PTYS: PtyPlan = {
  devArgs: ["--tmpfs", "/dev/pts", "--remount-ro", "/dev/pts"],
  wrap: (argv) => [...argv],
  bounded: false,
  wrapLauncher: (launcher, params, argv) => ["/bin/bash", "-p", "-c", launcher, ...params, ...argv],
};

/** Trusted `unshare` and `mount` binaries (as bubblewrap's own check), if both exist. */
function findTools(
  writableFolders: readonly string[],
): { unshare: string; mount: string } | undefined {
  const pick = (paths: string[]): string | undefined => {
    for (const p of paths) {
      const t = checkBwrapTrust(p, writableFolders);
      if ("real" in t) return t.real;
    }
    return undefined;
  };
  const unshare = pick(UNSHARE);
  const mount = pick(MOUNT);
  return unshare === undefined || mount === undefined ? undefined : { unshare, mount };
}
