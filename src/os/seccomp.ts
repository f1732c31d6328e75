/**
 * The seccomp filter every confined command runs under: a classic-BPF
 * program handed to bubblewrap (`--seccomp FD`), in the spirit of Docker's
 * default profile. When the host runs as root the command is uid 0 mapped to
 * the host's root (the sandbox's files must keep their owner), so the kernel
 * calls that need no capability but reach beyond the sandbox are refused here:
 * the kernel keyrings, modules, clocks, mounts, new namespaces, io_uring (which
 * bypasses seccomp), file handles, and set-uid/set-gid bits on new files
 * (a set-uid program left in a writable area would run as root for any host
 * user who finds it).
 */

import { assemble, type Insn } from "./seccomp-assemble.js";

/** Architectures the filter knows; elsewhere no filter can be built. */
export type SeccompArch = "x64" | "arm64";

const LD_W_ABS = 0x20;
const JEQ_K = 0x15;
const JSET_K = 0x45;
const RET_K = 0x06;

const RET_ALLOW = 0x7fff0000;
const RET_ERRNO = 0x00050000;
const EPERM = 1;
const ENOSYS = 38;
const EAFNOSUPPORT = 97;

/** Address families `socket`/`socketpair` may use: AF_UNIX, AF_INET, AF_INET6, AF_NETLINK. */
const ALLOWED_FAMILIES = [1, 2, 10, 16];
const AF_UNIX = 1;

const OFF_NR = 0;
const OFF_ARCH = 4;
/** Low 32 bits of argument `i` (both supported architectures are little-endian). */
const offArg = (i: number): number => 16 + 8 * i;

const AUDIT_ARCH: Record<SeccompArch, number> = { x64: 0xc000003e, arm64: 0xc00000b7 };
const X32_BIT = 0x40000000;

/** Namespace flags of clone(2): creating namespaces is refused (Docker does too). */
const CLONE_NS_FLAGS = 0x7e020000;
/** O_CREAT | __O_TMPFILE: the mode argument of open/openat only counts with these. */
const OPEN_CREATES = 0x40 | 0x400000;
/** S_ISUID | S_ISGID. */
const SET_ID_BITS = 0o6000;

/** Calls refused outright, by name; numbers per architecture below. */
const DENIED = [
  // Kernel keyrings: shared with the host process's session.
  "keyctl",
  "add_key",
  "request_key",
  // Kernel modules and kexec.
  "init_module",
  "finit_module",
  "delete_module",
  "kexec_load",
  "kexec_file_load",
  // Clocks.
  "clock_settime",
  "clock_adjtime",
  "settimeofday",
  "adjtimex",
  // Mounts (also from a nested user namespace) and namespaces.
  "mount",
  "umount2",
  "pivot_root",
  "open_tree",
  "move_mount",
  "fsopen",
  "fsconfig",
  "fsmount",
  "fspick",
  "mount_setattr",
  "unshare",
  "setns",
  // Host-wide or capability-bypassing interfaces.
  "bpf",
  "perf_event_open",
  "userfaultfd",
  "acct",
  "swapon",
  "swapoff",
  "reboot",
  "sethostname",
  "setdomainname",
  "quotactl",
  "quotactl_fd",
  "lookup_dcookie",
  "syslog",
  "vhangup",
  "open_by_handle_at",
  "name_to_handle_at",
  "io_uring_setup",
  "io_uring_enter",
  "io_uring_register",
] as const;

/** Calls answered ENOSYS so the C library falls back to one the filter can inspect. */
const NOT_IMPLEMENTED = ["clone3", "openat2"] as const;

type Name =
  | (typeof DENIED)[number]
  | (typeof NOT_IMPLEMENTED)[number]
  | ArgChecked
  | keyof typeof PID_ARG
  | "socket"
  | "socketpair";

/**
 * Calls refused when they name pid 1, bubblewrap's init, by the argument
 * that holds the pid: stopped or rewritten by a tracer, the init would not
 * end the command when the shell exits, and background processes would run
 * on until the timeout. (The kernel truncates the pid to 32 bits, the part
 * checked.) Other processes of the command stay traceable (strace, gdb).
 */
const PID_ARG = { ptrace: 1, process_vm_readv: 0, process_vm_writev: 0, pidfd_open: 0 } as const;
type ArgChecked =
  | "clone"
  | "open"
  | "openat"
  | "creat"
  | "chmod"
  | "fchmod"
  | "fchmodat"
  | "fchmodat2"
  | "mknod"
  | "mknodat";

/** Syscall numbers (absent: the call does not exist on that architecture). */
const NR: Record<SeccompArch, Partial<Record<Name, number>>> = {
  x64: {
    keyctl: 250,
    add_key: 248,
    request_key: 249,
    init_module: 175,
    finit_module: 313,
    delete_module: 176,
    kexec_load: 246,
    kexec_file_load: 320,
    clock_settime: 227,
    clock_adjtime: 305,
    settimeofday: 164,
    adjtimex: 159,
    mount: 165,
    umount2: 166,
    pivot_root: 155,
    open_tree: 428,
    move_mount: 429,
    fsopen: 430,
    fsconfig: 431,
    fsmount: 432,
    fspick: 433,
    mount_setattr: 442,
    unshare: 272,
    setns: 308,
    bpf: 321,
    perf_event_open: 298,
    userfaultfd: 323,
    acct: 163,
    swapon: 167,
    swapoff: 168,
    reboot: 169,
    sethostname: 170,
    setdomainname: 171,
    quotactl: 179,
    quotactl_fd: 443,
    lookup_dcookie: 212,
    syslog: 103,
    vhangup: 153,
    open_by_handle_at: 304,
    name_to_handle_at: 303,
    io_uring_setup: 425,
    io_uring_enter: 426,
    io_uring_register: 427,
    clone3: 435,
    openat2: 437,
    clone: 56,
    open: 2,
    openat: 257,
    creat: 85,
    chmod: 90,
    fchmod: 91,
    fchmodat: 268,
    fchmodat2: 452,
    mknod: 133,
    mknodat: 259,
    socket: 41,
    socketpair: 53,
    ptrace: 101,
    process_vm_readv: 310,
    process_vm_writev: 311,
    pidfd_open: 434,
  },
  arm64: {
    keyctl: 219,
    add_key: 217,
    request_key: 218,
    init_module: 105,
    finit_module: 273,
    delete_module: 106,
    kexec_load: 104,
    kexec_file_load: 294,
    clock_settime: 112,
    clock_adjtime: 266,
    settimeofday: 170,
    adjtimex: 171,
    mount: 40,
    umount2: 39,
    pivot_root: 41,
    open_tree: 428,
    move_mount: 429,
    fsopen: 430,
    fsconfig: 431,
    fsmount: 432,
    fspick: 433,
    mount_setattr: 442,
    unshare: 97,
    setns: 268,
    bpf: 280,
    perf_event_open: 241,
    userfaultfd: 282,
    acct: 89,
    swapon: 224,
    swapoff: 225,
    reboot: 142,
    sethostname: 161,
    setdomainname: 162,
    quotactl: 60,
    quotactl_fd: 443,
    lookup_dcookie: 18,
    syslog: 116,
    vhangup: 58,
    open_by_handle_at: 265,
    name_to_handle_at: 264,
    io_uring_setup: 425,
    io_uring_enter: 426,
    io_uring_register: 427,
    clone3: 435,
    openat2: 437,
    clone: 220,
    openat: 56,
    fchmod: 52,
    fchmodat: 53,
    fchmodat2: 452,
    mknodat: 33,
    socket: 198,
    socketpair: 199,
    ptrace: 117,
    process_vm_readv: 270,
    process_vm_writev: 271,
    pidfd_open: 434,
  },
};

/**
 * Which argument must not carry set-uid/set-gid bits, and (for open calls)
 * which argument holds the flags that make the mode count.
 */
const MODE_ARG: Record<Exclude<ArgChecked, "clone">, { mode: number; flags?: number }> = {
  open: { mode: 2, flags: 1 },
  openat: { mode: 3, flags: 2 },
  creat: { mode: 1 },
  chmod: { mode: 1 },
  fchmod: { mode: 1 },
  fchmodat: { mode: 2 },
  fchmodat2: { mode: 2 },
  mknod: { mode: 1 },
  mknodat: { mode: 2 },
};

/** The architecture of this process, if the filter supports it. */
export function detectSeccompArch(arch: string = process.arch): SeccompArch | undefined {
  return arch === "x64" || arch === "arm64" ? arch : undefined;
}

/** What {@link buildSeccompFilter} may let through besides the fixed rules. */
export interface SeccompOptions {
  /**
   * Let `socket(AF_UNIX, …)` through. Default false: a unix socket made by
   * `socket` can `connect` to any socket file the command can see (a
   * read-only mount too) — docker.sock, systemd's, a database's — and the
   * peer sees the host user (root on a root host). seccomp cannot read the
   * path `connect` is given, so the socket itself is refused, as Anthropic's
   * sandbox-runtime does; `socketpair(AF_UNIX, …)` stays (a connected pair,
   * no path: pipes between the command's own processes).
   */
  allowUnixSockets?: boolean;
}

/**
 * Builds the filter for `arch` as bytes ready for `--seccomp`. A call made
 * with another architecture's convention (i386 via `int 0x80`, x32) fails
 * with ENOSYS / EPERM: the numbers checked here would not mean the same.
 */
export function buildSeccompFilter(arch: SeccompArch, opts: SeccompOptions = {}): Buffer {
  const nr = NR[arch];
  const p: Insn[] = [
    { code: LD_W_ABS, k: OFF_ARCH },
    { code: JEQ_K, k: AUDIT_ARCH[arch], jt: "native", jf: "enosys" },
    { code: LD_W_ABS, k: OFF_NR, label: "native" },
  ];
  // x32 calls share the architecture value and set this bit in the number.
  if (arch === "x64") p.push({ code: JSET_K, k: X32_BIT, jt: "eperm", jf: "" });
  for (const name of DENIED) {
    const n = nr[name];
    if (n !== undefined) p.push({ code: JEQ_K, k: n, jt: "eperm", jf: "" });
  }
  for (const name of NOT_IMPLEMENTED) {
    const n = nr[name];
    if (n !== undefined) p.push({ code: JEQ_K, k: n, jt: "enosys", jf: "" });
  }
  const checked = Object.keys(MODE_ARG) as (keyof typeof MODE_ARG)[];
  for (const name of ["clone", ...checked] as const) {
    const n = nr[name];
    if (n !== undefined) p.push({ code: JEQ_K, k: n, jt: `check_${name}`, jf: "" });
  }
  const pidChecked = Object.keys(PID_ARG) as (keyof typeof PID_ARG)[];
  for (const name of pidChecked) {
    const n = nr[name];
    if (n !== undefined) p.push({ code: JEQ_K, k: n, jt: `pid_${name}`, jf: "" });
  }
  const unixSocket = opts.allowUnixSockets === true ? "check_family" : "check_socket";
  if (nr.socket !== undefined) p.push({ code: JEQ_K, k: nr.socket, jt: unixSocket, jf: "" });
  if (nr.socketpair !== undefined)
    p.push({ code: JEQ_K, k: nr.socketpair, jt: "check_family", jf: "" });
  p.push({ code: RET_K, k: RET_ALLOW });

  if (opts.allowUnixSockets !== true) {
    // EPERM, like sandbox-runtime: a policy refusal, not a missing family.
    p.push({ code: LD_W_ABS, k: offArg(0), label: "check_socket" });
    p.push({ code: JEQ_K, k: AF_UNIX, jt: "eperm", jf: "check_family" });
  }
  // The family is an int: the low 32 bits of the first argument.
  p.push({ code: LD_W_ABS, k: offArg(0), label: "check_family" });
  for (const family of ALLOWED_FAMILIES) p.push({ code: JEQ_K, k: family, jt: "allow", jf: "" });
  p.push({ code: RET_K, k: RET_ERRNO | EAFNOSUPPORT });

  for (const name of pidChecked) {
    if (nr[name] === undefined) continue;
    p.push({ code: LD_W_ABS, k: offArg(PID_ARG[name]), label: `pid_${name}` });
    p.push({ code: JEQ_K, k: 1, jt: "eperm", jf: "allow" });
  }
  if (nr.clone !== undefined) {
    p.push({ code: LD_W_ABS, k: offArg(0), label: "check_clone" });
    p.push({ code: JSET_K, k: CLONE_NS_FLAGS, jt: "eperm", jf: "allow" });
  }
  for (const name of checked) {
    if (nr[name] === undefined) continue;
    const { mode, flags } = MODE_ARG[name];
    const modeLabel = `mode_${name}`;
    if (flags !== undefined) {
      p.push({ code: LD_W_ABS, k: offArg(flags), label: `check_${name}` });
      p.push({ code: JSET_K, k: OPEN_CREATES, jt: modeLabel, jf: "allow" });
      p.push({ code: LD_W_ABS, k: offArg(mode), label: modeLabel });
    } else {
      p.push({ code: LD_W_ABS, k: offArg(mode), label: `check_${name}` });
    }
    p.push({ code: JSET_K, k: SET_ID_BITS, jt: "eperm", jf: "allow" });
  }
  // Classic BPF only jumps forward: the shared returns come last.
  p.push({ code: RET_K, k: RET_ALLOW, label: "allow" });
  p.push({ code: RET_K, k: RET_ERRNO | EPERM, label: "eperm" });
  p.push({ code: RET_K, k: RET_ERRNO | ENOSYS, label: "enosys" });
  return assemble(p);
}

const built = new Map<string, Buffer>();

/**
 * {@link buildSeccompFilter}, built once per architecture and option (the
 * program depends on nothing else). Callers only write it to a pipe.
 */
export function getSeccompFilter(arch: SeccompArch, allowUnixSockets: boolean): Buffer {
  const key = `${arch}:${allowUnixSockets}`;
  let filter = built.get(key);
  if (filter === undefined) {
    filter = buildSeccompFilter(arch, { allowUnixSockets });
    built.set(key, filter);
  }
  return filter;
}
