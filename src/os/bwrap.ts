/**
 * bubblewrap (Linux): the argument vector for one confined command, and a
 * cached probe that tells whether bubblewrap can run here at all.
 */
import { spawn } from "node:child_process";
import { accessSync, constants, existsSync, lstatSync, readlinkSync } from "node:fs";
import { delimiter, join } from "node:path";
import type { BindPlan } from "./bind-plan.js";
import { toWorkspacePath, WORKSPACE } from "./bind-plan.js";

/**
 * Top-level system folders made visible read-only. On merged-/usr systems
 * most are links into `/usr`; those are recreated as links.
 */
const SYSTEM_DIRS = ["/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"];

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
  "/etc/ssl",
  "/etc/ca-certificates",
  "/etc/pki",
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

/** Options for {@link buildBwrapArgs}. */
export interface BwrapArgsOptions {
  /** Keep the host's network (no new net namespace). */
  network: boolean;
  /** Full environment of the command (defaults already merged). */
  env: Readonly<Record<string, string>>;
}

/** The system part of the argument vector (namespaces, system dirs, /proc, /tmp). */
function systemArgs(network: boolean): string[] {
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
  args.push("--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp");
  return args;
}

/**
 * The full bubblewrap argument vector for `bash -c command` in the planned
 * workspace. The new root is bubblewrap's own tmpfs; it is remounted
 * read-only at the end, so a write anywhere but a writable bind or `/tmp`
 * fails with EROFS instead of vanishing silently.
 */
export function buildBwrapArgs(plan: BindPlan, command: string, opts: BwrapArgsOptions): string[] {
  const args = systemArgs(opts.network);
  args.push("--dir", WORKSPACE);
  const masks: string[] = [];
  for (const step of plan.steps) {
    const dest = toWorkspacePath(step.virtual);
    if (step.kind === "bind") {
      args.push(step.writable ? "--bind" : "--ro-bind", step.host, dest);
    } else if (step.file) {
      args.push("--ro-bind", "/dev/null", dest);
    } else {
      args.push("--tmpfs", dest);
      masks.push(dest);
    }
  }
  for (const dest of masks) args.push("--remount-ro", dest);
  args.push("--remount-ro", "/", "--chdir", WORKSPACE, "--clearenv");
  for (const [k, v] of Object.entries(opts.env)) args.push("--setenv", k, v);
  args.push("--", "/bin/bash", "-c", command);
  return args;
}

/** Why bubblewrap cannot be used, or `undefined` if it can. */
export type Unavailability = "missing" | "no-namespaces" | "unsupported-platform";

const probes = new Map<string, Promise<Unavailability | undefined>>();

/**
 * Finds the bubblewrap binary: the explicit path, else `MOUNTBOX_BWRAP`, else
 * `bwrap` on `PATH`. Returns the path even if it does not exist (the probe
 * then reports it missing).
 */
export function locateBwrap(explicit?: string): string {
  if (explicit !== undefined) return explicit;
  const fromEnv = process.env.MOUNTBOX_BWRAP;
  if (fromEnv !== undefined && fromEnv !== "") return fromEnv;
  for (const dir of (process.env.PATH ?? "/usr/bin:/bin").split(delimiter)) {
    if (dir === "") continue;
    const candidate = join(dir, "bwrap");
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here; keep looking
    }
  }
  return "/usr/bin/bwrap";
}

/**
 * Checks, once per binary, that bubblewrap exists and can create the
 * namespaces used here. A success is cached; a failure is not (bubblewrap may
 * be installed later, and a failing probe is cheap).
 */
export function probeBwrap(bwrapPath: string): Promise<Unavailability | undefined> {
  if (process.platform !== "linux") return Promise.resolve("unsupported-platform");
  const cached = probes.get(bwrapPath);
  if (cached !== undefined) return cached;
  const p = runProbe(bwrapPath);
  probes.set(bwrapPath, p);
  void p.then((r) => {
    if (r !== undefined) probes.delete(bwrapPath);
  });
  return p;
}

function runProbe(bwrapPath: string): Promise<Unavailability | undefined> {
  if (!existsSync(bwrapPath)) return Promise.resolve("missing");
  return new Promise((resolve) => {
    const args = [...systemArgs(false), "--", "/bin/sh", "-c", "exit 0"];
    let child: ReturnType<typeof spawn>;
    try {
      child = spawn(bwrapPath, args, { stdio: "ignore" });
    } catch {
      resolve("missing");
      return;
    }
    const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
    child.once("error", (err: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      resolve(err.code === "ENOENT" || err.code === "EACCES" ? "missing" : "no-namespaces");
    });
    child.once("close", (code) => {
      clearTimeout(timer);
      resolve(code === 0 ? undefined : "no-namespaces");
    });
  });
}
