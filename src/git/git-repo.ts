/**
 * Which repository a git tool works on, and whether this agent may: the
 * repository is the git work tree holding the path (the nearest host folder
 * at or above it with a `.git` folder); the agent must read all of it (its
 * history and status would otherwise show files it may not read), and the
 * repository must lie wholly inside the sandbox. Paths given to a tool map
 * to repository-relative paths here; git's output maps back.
 *
 * Everything is decided on the host from the policy and `lstat`s: nothing
 * is executed, and no host path leaves this module.
 */
import {
  gitDirUnsupported,
  gitNeedsWholeRepository,
  gitPathRefused,
  gitTopOutside,
  notInGitRepository,
  notInSandbox,
  quotePath,
  type SandboxError,
} from "../errors/index.js";
import { readKind } from "../os/host-lookup.js";
import type { Policy } from "../sandbox/policy.js";
import { isWithin, joinVirtual, parentPath } from "../sandbox/virtual-path.js";

/** Why a path under a mount inside a repository is refused. */
const MOUNT_REASON = "a mount shows another folder there, which is not part of the repository";

/** A repository a git tool may work on. */
export interface Repo {
  /** Virtual path of its top folder (the one holding `.git`). */
  top: string;
  /**
   * Repository-relative paths of mounts inside it: another folder shows
   * there, not the repository's own, so git's view of them is left out.
   */
  mounts: string[];
}

/**
 * The repository holding `path` (default: the first readable area), checked
 * for this policy: readable as a whole, wholly inside the sandbox, with a
 * `.git` folder.
 * @throws SandboxError explaining the refusal (never a host path)
 */
export function findRepo(policy: Policy, path: string | undefined): Repo {
  const v = toVirtual(policy, path ?? policy.readableRoots[0]);
  // Read access to the path itself first: the usual message where it fails.
  const denial = policy.deny(v, "read", false);
  if (denial !== undefined) throw policy.denialError(denial, v, "read");
  const found = findHostTop(locateHolder(policy, v));
  if (found === undefined) throw refuseNoRepository(policy, v);
  const top = policy.table.mapBack(found.host);
  if (top === undefined) throw gitTopOutside(v, policy.readableRoots);
  if (found.kind !== "dir") throw gitDirUnsupported(top, found.kind);
  if (!isWithin(v, top)) {
    // Named only where the agent may look (as a link's target is).
    if (policy.deny(top, "read", false) !== undefined) throw policy.linkError(v, "read", top);
    throw gitPathRefused(v, top, "it leads (through a link) into the repository");
  }
  checkWholeRead(policy, v, top);
  const m = policy.table.lookup(top);
  const mounts = policy.table.mounts
    .filter((x) => x !== m && x.target !== top && isWithin(x.target, top))
    .map((x) => toRelative(top, x.target));
  return { top, mounts };
}

/**
 * Maps paths given to a tool into `repo`: each normalised, inside the
 * repository's work tree (not in `.git`, not under a mount inside it).
 * @returns repository-relative paths (`""` for the top itself)
 * @throws SandboxError naming the first path refused
 */
export function toRepoPaths(policy: Policy, repo: Repo, paths: readonly string[]): string[] {
  return paths.map((p) => {
    const v = toVirtual(policy, p);
    if (!isWithin(v, repo.top)) throw gitPathRefused(v, repo.top, "it is outside the repository");
    const rel = toRelative(repo.top, v);
    const first = rel.split("/")[0]!;
    if (first.toLowerCase() === ".git")
      throw gitPathRefused(v, repo.top, "it is inside .git, git's own folder");
    if (repo.mounts.some((m) => rel === m || rel.startsWith(`${m}/`)))
      throw gitPathRefused(v, repo.top, MOUNT_REASON);
    return rel;
  });
}

/**
 * The error for a path in no repository: a mount inside a repository's
 * folder (whose own source is in none) is named as such.
 */
function refuseNoRepository(policy: Policy, v: string): SandboxError {
  const m = policy.table.lookup(v);
  if (m !== undefined && m.target !== "/") {
    const up = parentPath(m.target);
    const upMount = policy.table.lookup(up);
    const outer = upMount && findHostTop(policy.table.toHost(upMount, up));
    const top = outer && policy.table.mapBack(outer.host);
    if (top !== undefined && isWithin(v, top)) return gitPathRefused(v, top, MOUNT_REASON);
  }
  return notInGitRepository(v);
}

/** The virtual path of a repository-relative one. */
export function toVirtualPath(repo: Repo, rel: string): string {
  return joinVirtual(repo.top, rel);
}

/** `v` relative to `top` (`""` for the top itself). */
export function toRelative(top: string, v: string): string {
  if (v === top) return "";
  return top === "/" ? v.slice(1) : v.slice(top.length + 1);
}

function toVirtual(policy: Policy, path: string | undefined): string {
  if (path === undefined) throw notInSandbox("/", policy.readableRoots);
  const v = policy.normalize(path);
  if (v === null) throw policy.climbError(path, "read");
  return v;
}

/**
 * The real host folder where git's discovery starts for `v`: `v` itself
 * if it is a folder (not a link) or a mount's top, else its parent folder
 * (a file, a missing file, or a link: an entry of the work tree, which git
 * records and never follows). A parent the agent may not read falls back
 * to `v` (the whole-repository check refuses it then, naming the
 * repository).
 */
function locateHolder(policy: Policy, v: string): string {
  const m = policy.table.lookup(v);
  const own = m === undefined || v === m.target || readKind(policy.table.toHost(m, v)) === "dir";
  const holder = own ? v : parentPath(v);
  try {
    return policy.resolveVirtual(holder, "read", false).real;
  } catch (err) {
    if (holder === v) throw err;
    return policy.resolveVirtual(v, "read", false).real;
  }
}

/**
 * The nearest host folder at or above `real` holding `.git`, as git finds
 * it, with what its `.git` is. `undefined` if none up to `/`.
 */
function findHostTop(real: string): { host: string; kind: "dir" | "file" | "link" } | undefined {
  let at = real;
  for (;;) {
    const kind = readKind(at === "/" ? "/.git" : `${at}/.git`);
    if (kind !== undefined) return { host: at, kind };
    const up = at.slice(0, at.lastIndexOf("/")) || "/";
    if (up === at) return undefined;
    at = up;
  }
}

/**
 * Refuses unless the agent reads everything under `top`: one subtree area
 * covers it, no approval confinement narrows it, and no suffix allowlist
 * applies inside it (git would show the other files).
 */
function checkWholeRead(policy: Policy, v: string, top: string): void {
  const readable = policy.readableRoots;
  const covered = policy.read.some((a) => !a.exact && isWithin(top, a.path));
  if (!covered || policy.deny(top, "read", false) !== undefined) {
    const inside = readable.filter((r) => isWithin(r, top));
    const why =
      inside.length === 0
        ? "this agent cannot read it"
        : `this agent can read only ${inside.map(quotePath).join(", ")} of it`;
    throw gitNeedsWholeRepository(v, top, readable, why);
  }
  const own = policy.table.lookup(top);
  const limited = policy.table.mounts.find(
    (m) => m.suffixes !== undefined && (m === own || isWithin(m.target, top)),
  );
  if (limited?.suffixes)
    throw gitNeedsWholeRepository(
      v,
      top,
      readable,
      `reads there are limited to files ending in ${limited.suffixes.join(", ")}`,
    );
}
