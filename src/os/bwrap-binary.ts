/**
 * Which bubblewrap binary runs, and whether it can be trusted and used.
 *
 * Never looked up on `PATH`: `npm start` and friends put `node_modules/.bin`
 * folders first, and a command that can write one of them could plant a fake
 * `bwrap` that the next run would start unconfined. The binary is an explicit
 * path (`bwrapPath`, `MOUNTBOX_BWRAP`) or the first of a fixed list of system
 * folders, and before each use it must be owned by root (or by the user
 * running mountbox), writable by nobody else, in folders that only those can
 * change, and outside every folder of the sandbox.
 */
import { spawn } from "node:child_process";
import { lstatSync, realpathSync, statSync } from "node:fs";
import { dirname, isAbsolute } from "node:path";
import type { Policy } from "../sandbox/policy.js";
import { isWithin } from "../sandbox/virtual-path.js";
import { systemArgs } from "./bwrap.js";
import { detectSeccompArch } from "./seccomp.js";

/** Where bubblewrap is looked for when no path is given, in order. */
export const SYSTEM_BWRAP_PATHS: readonly string[] = [
  "/usr/bin/bwrap",
  "/bin/bwrap",
  "/usr/sbin/bwrap",
  "/usr/local/bin/bwrap",
];

/** Why bubblewrap cannot be used, or `undefined` if it can. */
export type Unavailability =
  | "missing"
  | "untrusted"
  | "too-old"
  | "no-namespaces"
  | "unsupported-platform"
  /** macOS without `/usr/bin/sandbox-exec`. */
  | "no-sandbox-exec";

/** The trusted bubblewrap to run (its real path), or why there is none. */
export async function findBwrap(
  policy: Policy,
  explicit: string | undefined,
): Promise<{ path: string } | { why: Unavailability }> {
  if (process.platform !== "linux" || detectSeccompArch() === undefined)
    return { why: "unsupported-platform" };
  const trust = checkBwrapTrust(locateBwrap(explicit), listWritableHostFolders(policy));
  if ("why" in trust) return trust;
  const why = await probeBwrap(trust.real);
  return why === undefined ? { path: trust.real } : { why };
}

/**
 * Host folders the sandbox can write, by a command or in-process: a
 * bubblewrap binary inside one could be replaced through the sandbox. A
 * bubblewrap inside a read-only area (a read-only sandbox over `/`) is fine.
 */
function listWritableHostFolders(policy: Policy): string[] {
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
 * The bubblewrap binary to use: `explicit`, else `MOUNTBOX_BWRAP`, else the
 * first of {@link SYSTEM_BWRAP_PATHS} that exists. Returns a path even if it
 * does not exist (the checks then report it missing).
 */
export function locateBwrap(explicit?: string): string {
  if (explicit !== undefined) return explicit;
  const fromEnv = process.env.MOUNTBOX_BWRAP;
  if (fromEnv !== undefined && fromEnv !== "") return fromEnv;
  for (const p of SYSTEM_BWRAP_PATHS)
    if (statSync(p, { throwIfNoEntry: false })?.isFile()) return p;
  return SYSTEM_BWRAP_PATHS[0]!;
}

/**
 * Checks that `path` names a bubblewrap binary nobody but root (or this
 * process's user) can have replaced, outside every host folder in
 * `sandboxFolders` (the sandbox's writable folders). Returns the real path
 * to run, or why it cannot be used.
 */
export function checkBwrapTrust(
  path: string,
  sandboxFolders: readonly string[],
): { real: string } | { why: "missing" | "untrusted" } {
  if (!isAbsolute(path)) return { why: "untrusted" };
  let real: string;
  try {
    real = realpathSync(path);
  } catch {
    return { why: "missing" };
  }
  const st = statSync(real, { throwIfNoEntry: false });
  if (st === undefined) return { why: "missing" };
  if (!st.isFile() || !isTrustedOwner(st.uid) || (st.mode & 0o022) !== 0)
    return { why: "untrusted" };
  for (const folder of sandboxFolders) if (isWithin(real, folder)) return { why: "untrusted" };
  // Every folder above it: a writable one would let its owner swap the file.
  for (let dir = dirname(real); ; dir = dirname(dir)) {
    const d = lstatSync(dir, { throwIfNoEntry: false });
    if (d === undefined || !isTrustedOwner(d.uid)) return { why: "untrusted" };
    const sticky = (d.mode & 0o1000) !== 0;
    if ((d.mode & 0o022) !== 0 && !sticky) return { why: "untrusted" };
    if (dir === "/") break;
  }
  return { real };
}

function isTrustedOwner(uid: number): boolean {
  return uid === 0 || uid === process.geteuid?.();
}

const probes = new Map<string, Promise<Unavailability | undefined>>();

/**
 * Checks, once per binary, that bubblewrap can create the namespaces used
 * here. A success is cached; a failure is not (bubblewrap may be installed
 * later, and a failing probe is cheap). Run {@link checkBwrapTrust} first.
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
  return new Promise((resolve) => {
    const args = [...systemArgs(false, 16), "--", "/bin/sh", "-c", "exit 0"];
    let child: ReturnType<typeof spawn>;
    try {
      child = spawn(bwrapPath, args, { stdio: ["ignore", "ignore", "pipe"], env: {}, cwd: "/" });
    } catch {
      resolve("missing");
      return;
    }
    const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
    let stderr = "";
    child.stderr?.on("data", (b: Buffer) => {
      if (stderr.length < 4096) stderr += b.toString("utf8");
    });
    child.once("error", (err: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      resolve(err.code === "ENOENT" || err.code === "EACCES" ? "missing" : "no-namespaces");
    });
    child.once("close", (code) => {
      clearTimeout(timer);
      // --size, --perms and --bind-fd need bubblewrap 0.6 or newer.
      if (code !== 0 && /Unknown option/i.test(stderr)) resolve("too-old");
      else resolve(code === 0 ? undefined : "no-namespaces");
    });
  });
}
