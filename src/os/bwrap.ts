/**
 * bubblewrap (Linux): the argument vector for one confined command.
 */
import { existsSync, lstatSync, readlinkSync } from "node:fs";
import type { BindPlan } from "./bind-plan.js";
import { toWorkspacePath, WORKSPACE } from "./bind-plan.js";

/**
 * Top-level system folders made visible read-only. On merged-/usr systems
 * most are links into `/usr`; those are recreated as links.
 */
export const SYSTEM_DIRS = ["/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"];

/**
 * Kernel knobs under `/proc` made read-only (as Docker does). A command that
 * is uid 0 mapped to the host's root passes the owner check on these files
 * even without capabilities: a writable `/proc/sys/kernel/core_pattern`
 * would let it run a program of its choice on the host as root.
 */
const PROC_READ_ONLY = [
  "/proc/sys",
  "/proc/sysrq-trigger",
  "/proc/irq",
  "/proc/bus",
  "/proc/fs",
  "/proc/asound",
  "/proc/acpi",
  "/proc/scsi",
];

/**
 * `/proc` files that show host-wide kernel state: replaced by an empty file.
 * The `kpage*` files, `slabinfo`, `vmallocinfo` and `pagetypeinfo` are
 * readable by root only (physical page state, kernel heap layout), and the
 * command is uid 0 mapped to the host's root when the host is root;
 * `cmdline` is the host kernel's boot line.
 */
const PROC_MASKED = [
  "/proc/kcore",
  "/proc/keys",
  "/proc/key-users",
  "/proc/latency_stats",
  "/proc/timer_list",
  "/proc/timer_stats",
  "/proc/sched_debug",
  "/proc/kpageflags",
  "/proc/kpagecount",
  "/proc/kpagecgroup",
  "/proc/slabinfo",
  "/proc/vmallocinfo",
  "/proc/pagetypeinfo",
  "/proc/cmdline",
];

/** bubblewrap's init (pid 1 inside, doing the setup itself): its memory files. */
const INIT_MEMORY = ["/proc/1/mem", "/proc/1/task/1/mem"];

/**
 * The few `/etc` entries bash, the dynamic linker, name resolution and TLS
 * need. Not all of `/etc`: it holds host secrets and configuration.
 */
const ETC_ENTRIES = [
  "/etc/passwd",
  "/etc/group",
  "/etc/hosts",
  "/etc/host.conf",
  "/etc/resolv.conf",
  "/etc/nsswitch.conf",
  "/etc/gai.conf",
  "/etc/services",
  "/etc/protocols",
  "/etc/localtime",
  "/etc/ld.so.cache",
  "/etc/ld.so.conf",
  "/etc/ld.so.conf.d",
  "/etc/alternatives",
  // Certificates only: /etc/ssl/private and /etc/pki/tls/private hold keys
  // that the host's root can read, and so could a command run as root.
  "/etc/ssl/certs",
  "/etc/ssl/openssl.cnf",
  "/etc/ca-certificates",
  "/etc/ca-certificates.conf",
  "/etc/pki/tls/certs",
  "/etc/pki/tls/cert.pem",
  "/etc/pki/tls/openssl.cnf",
  "/etc/pki/ca-trust",
  "/etc/mime.types",
];

/** Default environment of a confined command, before the caller's `env`. */
export const DEFAULT_ENV: Readonly<Record<string, string>> = {
  PATH: "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
  // Home is the private /tmp: tools that write dotfiles must not litter the
  // workspace, and nothing there outlives the command.
  HOME: "/tmp",
  TMPDIR: "/tmp",
  LANG: "C.UTF-8",
};

/** Descriptors the launcher hands to bubblewrap (numbers in bubblewrap's process). */
export interface BwrapFds {
  /** The compiled seccomp filter (`--seccomp`). */
  seccomp: number;
  /** NUL-separated `NAME=value` entries, read by the shell inside. */
  env: number;
  /** An `O_PATH` descriptor per bind step (same index as `plan.steps`), bound with `--bind-fd`. */
  binds: readonly (number | undefined)[];
  /** bubblewrap writes its child's pid here (`--info-fd`). */
  info?: number;
  /**
   * A socket to the host: once the mounts are made, the shell inside writes
   * `r` and waits for `g` before anything else (the host checks the mount
   * table meanwhile); anything else, or none, and it exits.
   */
  sync?: number;
}

/** Options for {@link buildBwrapArgs}. */
export interface BwrapArgsOptions {
  /** Keep the host's network (no new net namespace). */
  network: boolean;
  /** Size of `/tmp` and `/dev/shm` in bytes (each). Default: bubblewrap's (half the RAM). */
  tmpBytes?: number;
  /** Descriptors passed along; without them, binds use host paths and env is empty. */
  fds?: BwrapFds;
  /** Shell text run before the command, inside (rlimits). */
  prefix?: string;
  /** Arguments right after `--dev /dev` (the command's `/dev/pts`: see `pty-bound.ts`). */
  devArgs?: readonly string[];
}

/**
 * The system part of the argument vector: namespaces, system folders, a
 * `/proc` with its kernel knobs read-only, a `/dev` whose only writable place
 * is a sized `/dev/shm`, and a sized private `/tmp`.
 */
export function systemArgs(
  network: boolean,
  tmpBytes?: number,
  devArgs: readonly string[] = [],
): string[] {
  const args = [
    "--unshare-user",
    "--unshare-pid",
    "--unshare-ipc",
    "--unshare-uts",
    "--unshare-cgroup-try",
  ];
  if (!network) args.push("--unshare-net");
  args.push("--cap-drop", "ALL", "--die-with-parent", "--new-session", "--hostname", "mountbox");
  for (const dir of SYSTEM_DIRS) {
    const st = lstatSync(dir, { throwIfNoEntry: false });
    if (st === undefined) continue;
    if (st.isSymbolicLink()) args.push("--symlink", readlinkSync(dir), dir);
    else if (st.isDirectory()) args.push("--ro-bind", dir, dir);
  }
  for (const entry of ETC_ENTRIES) args.push("--ro-bind-try", entry, entry);
  args.push("--proc", "/proc");
  for (const p of PROC_READ_ONLY) args.push("--ro-bind-try", p, p);
  for (const p of PROC_MASKED) if (existsSync(p)) args.push("--ro-bind", "/dev/null", p);
  // pid 1 is bubblewrap's init, whose exit ends the command: its memory is
  // out of reach (the seccomp filter refuses ptrace and process_vm_* on it),
  // so a command cannot stall it and keep processes running past the shell.
  for (const p of INIT_MEMORY) args.push("--ro-bind", "/dev/null", p);
  const size = tmpBytes === undefined ? [] : ["--size", String(tmpBytes)];
  args.push("--dev", "/dev", ...devArgs, "--perms", "1777", ...size, "--tmpfs", "/dev/shm");
  args.push("--remount-ro", "/dev", "--perms", "1777", ...size, "--tmpfs", "/tmp");
  return args;
}

/**
 * Shell text the command is prefixed with inside the sandbox: it reads the
 * environment from its descriptor (so no value sits on a command line,
 * where every host user could read it), then closes the descriptors handed
 * to bubblewrap (it closes the seccomp and bind ones itself; the launcher
 * closed every other one), so only stdin, stdout and stderr reach the command.
 */
function innerPrelude(fds: BwrapFds): string {
  const handed = [fds.seccomp, fds.env, ...fds.binds.filter((fd) => fd !== undefined)];
  if (fds.info !== undefined) handed.push(fds.info);
  if (fds.sync !== undefined) handed.push(fds.sync);
  const wait =
    fds.sync === undefined
      ? []
      : [
          `{ printf r >&${fds.sync} && IFS= read -r -n 1 mountbox_go <&${fds.sync} && [ "$mountbox_go" = g ]; } 2>/dev/null || exit 125`,
          "unset mountbox_go",
        ];
  return [
    ...wait,
    `while IFS= read -r -d '' mountbox_kv <&${fds.env}; do export "$mountbox_kv"; done`,
    "unset mountbox_kv",
    `exec ${handed.map((fd) => `${fd}<&-`).join(" ")}; `,
  ].join("; ");
}

/**
 * The full bubblewrap argument vector for `bash -c command` in the planned
 * workspace. The new root is bubblewrap's own tmpfs; it is remounted
 * read-only at the end, so a write anywhere but a writable bind, `/tmp` or
 * `/dev/shm` fails with EROFS instead of vanishing silently.
 */
export function buildBwrapArgs(plan: BindPlan, command: string, opts: BwrapArgsOptions): string[] {
  const args = systemArgs(opts.network, opts.tmpBytes, opts.devArgs);
  args.push("--dir", WORKSPACE);
  const masks: string[] = [];
  plan.steps.forEach((step, i) => {
    const dest = toWorkspacePath(step.virtual);
    const fd = opts.fds?.binds[i];
    if (step.kind === "bind" && fd !== undefined) {
      args.push(step.writable ? "--bind-fd" : "--ro-bind-fd", String(fd), dest);
    } else if (step.kind === "bind") {
      args.push(step.writable ? "--bind" : "--ro-bind", step.host, dest);
    } else if (step.file) {
      args.push("--ro-bind", "/dev/null", dest);
    } else {
      args.push("--tmpfs", dest);
      masks.push(dest);
    }
  });
  for (const dest of masks) args.push("--remount-ro", dest);
  args.push("--remount-ro", "/", "--chdir", WORKSPACE, "--clearenv");
  if (opts.fds !== undefined) args.push("--seccomp", String(opts.fds.seccomp));
  if (opts.fds?.info !== undefined) args.push("--info-fd", String(opts.fds.info));
  const prelude = opts.fds === undefined ? "" : innerPrelude(opts.fds);
  // `--` so that a command starting with '-' is a command, not a bash option.
  args.push("--", "/bin/bash", "-c", "--", `${prelude}${opts.prefix ?? ""}${command}`);
  return args;
}
