/**
 * Guards: what a confined command must not be able to write inside a
 * writable folder bind although the folder is writable — protected entries
 * (named ones such as `.git` at the top of the bind, absolute ones such as
 * `/workers` wherever the bind shows them, present or absent) and what the
 * host's git executes from (see `git-places.ts`).
 *
 * A guard is a read-only bind whose final shape is settled when the binds
 * are pinned (`bind-fds.ts`), not when the plan is made: what is there then
 * is bound read-only as it is; if nothing is there, an empty read-only
 * placeholder folder (or file, for a name that is a file by convention) is
 * made (and removed after the command if still empty). So a placeholder of another command that comes or goes between
 * the plan and the run changes nothing.
 */
import { accessSync, constants, readdirSync, realpathSync, statSync } from "node:fs";
import { homedir } from "node:os";
import type { Policy } from "../sandbox/policy.js";
import { isFileByConvention, isHomeOnly } from "../sandbox/protected-defaults.js";
import { baseName, isWithin } from "../sandbox/virtual-path.js";
import type { BindStep, MountPoint } from "./bind-plan.js";
import { findGitPlaces } from "./git-places.js";
import { hasLinkOnTheWay, readKind } from "./host-lookup.js";
import { findEnclosingStep, joinHost, splitBelow } from "./plan-steps.js";

/**
 * The guards of a writable folder shown at `step.virtual` from `step.host`
 * (a bind, or a second place of one). Places that cannot be held (a link
 * in the way) are added to `unsafe`; the bind itself to `gitUnreadable` if
 * its repository's git files cannot be read safely (see `git-places.ts`).
 */
export function planProtectedEntries(
  policy: Policy,
  step: BindStep,
  unsafe: string[],
  gitUnreadable: string[],
): BindStep[] {
  const hosts = new Map<string, string>(); // host path → virtual path
  const at = (rest: string): void => {
    const v = step.virtual === "/" ? rest : `${step.virtual}${rest}`;
    hosts.set(step.host === "/" ? rest : `${step.host}${rest}`, v);
  };
  // Shell rc files and `.gitconfig` are held when absent only in a home
  // folder (see `protected-defaults.ts`): elsewhere, only if present.
  const home = isHomeFolder(step.host);
  const presentOnly = new Set<string>();
  for (const name of listExactNames(policy)) {
    at(`/${name}`);
    if (!home && isHomeOnly(name))
      presentOnly.add(step.host === "/" ? `/${name}` : `${step.host}/${name}`);
  }
  // Case twins (`.GIT` beside or instead of `.git`) are held read-only too:
  // never a reason to protect less. A folder the host cannot list (a command
  // may `chmod 100` it) still gets its exact names guarded above.
  for (const name of listQuietly(step.host))
    if (policy.table.isProtected(step.virtual === "/" ? `/${name}` : `${step.virtual}/${name}`))
      at(`/${name}`);
  for (const p of listProtectedPaths(policy)) {
    const v = placeOf(policy, step, p);
    if (v !== undefined) hosts.set(joinHost(step, v), v);
  }
  if (guardsGit(policy)) {
    const git = findGitPlaces(step.host);
    if (git.unreadable) gitUnreadable.push(step.virtual);
    for (const h of git.places) at(h.slice(step.host === "/" ? 0 : step.host.length));
  }
  const out: BindStep[] = [];
  for (const [host, virtual] of hosts) {
    const kind = readKind(host);
    if (kind === "link" || hasLinkOnTheWay(step.host, splitBelow(step, virtual))) {
      // A link cannot be bound over (the bind would follow it), nor a place
      // behind one: the command could put a folder of its own there.
      unsafe.push(virtual);
      continue;
    }
    if (kind === undefined && (presentOnly.has(host) || !mayBeCreated(host, step.host))) continue;
    out.push({
      kind: "bind",
      virtual,
      host,
      writable: false,
      file: kind === "file",
      placeholder: true,
      ...(isFileByConvention(baseName(virtual)) ? { absentAsFile: true } : {}),
    });
  }
  return out;
}

/**
 * Drops the guards that a deeper bind or mask of the final plan covers with
 * something else (that bind has its own guards), and points the mount point
 * of every other one at the bind it is seen through.
 */
export function dropHiddenGuards(steps: BindStep[], mountPoints: MountPoint[]): void {
  for (let i = steps.length - 1; i >= 0; i--) {
    const g = steps[i]!;
    if (g.placeholder !== true) continue;
    const above = findEnclosingStep(steps, g.virtual);
    const j = mountPoints.findIndex((mp) => mp.virtual === g.virtual);
    if (above?.kind === "bind" && joinHost(above, g.virtual) === g.host) {
      const mp = { base: above.host, rest: splitBelow(above, g.virtual), virtual: g.virtual };
      if (j >= 0) mountPoints[j] = { ...mp, create: false };
      else mountPoints.push({ ...mp, create: false });
      continue;
    }
    steps.splice(i, 1);
    if (j >= 0) mountPoints.splice(j, 1);
  }
}

/**
 * Where the absolute protected path `p` appears through the folder shown
 * at `step`, strictly below it: its own place, or a second place (the
 * host folder that `p` maps to, seen through this bind). `undefined` if
 * nowhere.
 */
function placeOf(policy: Policy, step: BindStep, p: string): string | undefined {
  const t = policy.table;
  const m = t.lookup(p);
  if (m === undefined) return undefined;
  if (p !== step.virtual && isWithin(p, step.virtual) && t.lookup(step.virtual) === m) return p;
  const host = t.toHost(m, p);
  if (host === step.host || !isWithin(host, step.host)) return undefined;
  const rest = step.host === "/" ? host : host.slice(step.host.length);
  return step.virtual === "/" ? rest : step.virtual + rest;
}

/**
 * Protected names as the host's tools read them: each as given and
 * lower-cased (`.git` for the default). On a case-sensitive file system
 * other spellings are other names, which git never reads.
 */
function listExactNames(policy: Policy): string[] {
  const names = new Set<string>();
  for (const p of policy.table.protectedEntries) {
    if (p.startsWith("/") || p === "." || p === ".." || p.includes("/")) continue;
    names.add(p);
    names.add(p.toLowerCase());
  }
  return [...names];
}

/** Absolute protected paths (not `/` itself: a protected root is read-only anyway). */
function listProtectedPaths(policy: Policy): string[] {
  return policy.table.protectedEntries.filter((p) => p.startsWith("/") && p !== "/");
}

/** True if `.git` is protected: then what git executes from is guarded as well. */
export function guardsGit(policy: Policy): boolean {
  return policy.table.protectedEntries.some((p) => p.toLowerCase() === ".git");
}

/**
 * True if `host` is a user's home folder: this process's `$HOME` (or the
 * account's), `/root`, or a folder right under `/home` or `/Users`.
 */
function isHomeFolder(host: string): boolean {
  const homes = [homedir(), process.env.HOME ?? ""];
  if (homes.some((h) => h !== "" && (h === host || safeRealpath(h) === host))) return true;
  return host === "/root" || /^\/(home|Users)\/[^/]+$/.test(host);
}

function safeRealpath(p: string): string | undefined {
  try {
    return realpathSync(p);
  } catch {
    return undefined;
  }
}

function listQuietly(host: string): string[] {
  try {
    return readdirSync(host);
  } catch {
    return [];
  }
}

/**
 * True if a command could create `host`: its nearest existing folder (not
 * above `base`) is writable by this process or owned by it (a command runs
 * as the same user and could `chmod` it back). A folder no one but its
 * owner may write, on a host that is not that owner, needs no placeholder.
 */
function mayBeCreated(host: string, base: string): boolean {
  let at = host.slice(0, host.lastIndexOf("/")) || "/";
  while (at !== base && at.length > base.length && readKind(at) !== "dir")
    at = at.slice(0, at.lastIndexOf("/")) || "/";
  try {
    accessSync(at, constants.W_OK);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "EROFS") return false;
  }
  try {
    return statSync(at).uid === process.geteuid?.();
  } catch {
    // Cannot even be looked at (a command made it so): hold it anyway.
    return true;
  }
}
