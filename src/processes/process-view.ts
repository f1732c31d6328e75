/**
 * What an agent process sees of the host's files, as bubblewrap arguments:
 * the system folders (as shell commands see them), the Node binary, and
 * read-only, at their own host paths, exactly the files and folders its
 * thread would be granted — its module, its declared dependencies,
 * mountbox's worker runtime — and nothing of the sandbox's areas.
 *
 * Paths keep their host spelling, so that module URLs and Node's package
 * lookups work unchanged: each granted path is walked component by
 * component as the kernel does, every link met on the way is recreated as
 * a link (`--symlink`) and every real file or folder it leads to is bound.
 * The `package.json` that decides how the module's folder loads (its
 * `type`, and `imports`/`exports`/`name` for self-references) is given as a
 * copy of those fields only, so no other field of a manifest that lies in a
 * sandbox area reaches the process.
 */
import { existsSync, lstatSync, readFileSync, readlinkSync, realpathSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { SYSTEM_DIRS } from "../os/bwrap.js";
import { isWithin } from "../threads/module-grants.js";

/** Most links followed on one path (the kernel's limit). */
const MAX_LINKS = 40;
/** Fields of a `package.json` that decide how modules below it load. */
const MANIFEST_FIELDS = ["name", "type", "imports", "exports", "main"];

/** The files of an agent process, planned. */
export interface ProcessView {
  /** Real folders and files, bound read-only at their own paths (shallow first). */
  binds: { path: string; file: boolean }[];
  /** Links to recreate: where, and what they say. */
  links: { path: string; target: string }[];
  /** Manifests to place (as read-only copies of their module-loading fields). */
  manifests: { path: string; text: string }[];
}

/**
 * Plans the view of a process that runs `nodePath` and may read `grants`
 * (host paths: files exact, folders whole), loading the modules below
 * `moduleFolders` as their nearest `package.json` says.
 * @throws Error naming a granted path that does not exist (a host-side setup mistake)
 */
export function planProcessView(
  nodePath: string,
  grants: readonly string[],
  moduleFolders: readonly string[],
): ProcessView {
  const links = new Map<string, string>();
  const reals = new Set<string>();
  for (const g of [nodePath, ...grants]) reals.add(walkToReal(g, links));
  const bound = [...reals]
    .map((path) => ({ path, file: !statSync(path).isDirectory() }))
    .filter((b) => !isSystem(b.path))
    .sort((a, b) => depth(a.path) - depth(b.path) || (a.path < b.path ? -1 : 1));
  const binds: ProcessView["binds"] = [];
  for (const b of bound) if (!binds.some((o) => !o.file && isWithin(b.path, o.path))) binds.push(b);
  const seen = (p: string): boolean =>
    isSystem(p) || binds.some((b) => (b.file ? b.path === p : isWithin(p, b.path)));
  const manifests: ProcessView["manifests"] = [];
  for (const folder of new Set(moduleFolders)) {
    const path = findNearestManifest(folder);
    if (path === undefined || seen(path) || manifests.some((m) => m.path === path)) continue;
    manifests.push({ path, text: copyLoadingFields(path) });
  }
  return {
    binds,
    links: [...links]
      .filter(([path]) => !seen(path))
      .map(([path, target]) => ({ path, target }))
      .sort((a, b) => depth(a.path) - depth(b.path)),
    manifests,
  };
}

/**
 * The bubblewrap arguments of `view`; manifest `i` is read from descriptor
 * `manifestFds[i]`.
 */
export function buildViewArgs(view: ProcessView, manifestFds: readonly number[]): string[] {
  const args: string[] = [];
  for (const b of view.binds) args.push("--ro-bind", b.path, b.path);
  view.manifests.forEach((m, i) => {
    args.push("--ro-bind-data", String(manifestFds[i]), m.path);
  });
  for (const l of view.links) args.push("--symlink", l.target, l.path);
  return args;
}

/**
 * The real path of `path`, walked one component at a time as the kernel
 * resolves it; every link on the way is recorded in `links` (its parent is
 * always a real folder, so recreating it there reproduces the path).
 */
function walkToReal(path: string, links: Map<string, string>): string {
  const queue = path.split("/").filter((p) => p !== "");
  let cur = "/";
  let hops = 0;
  while (queue.length > 0) {
    const part = queue.shift()!;
    if (part === ".") continue;
    if (part === "..") {
      cur = dirname(cur);
      continue;
    }
    const next = join(cur, part);
    if (!lstatSync(next).isSymbolicLink()) {
      cur = next;
      continue;
    }
    if (++hops > MAX_LINKS) throw new Error(`Too many links on the way to ${path}`);
    const target = readlinkSync(next);
    links.set(next, target);
    if (target.startsWith("/")) cur = "/";
    queue.unshift(...target.split("/").filter((p) => p !== ""));
  }
  return cur;
}

/** The `package.json` Node reads for the files of `folder`: the nearest one at or above it. */
function findNearestManifest(folder: string): string | undefined {
  let dir = realpathSync(folder);
  for (;;) {
    const file = join(dir, "package.json");
    if (existsSync(file)) return file;
    const up = dirname(dir);
    if (up === dir) return undefined;
    dir = up;
  }
}

/** The module-loading fields of a manifest, as JSON (an empty object if it cannot be read). */
function copyLoadingFields(file: string): string {
  let pkg: Record<string, unknown>;
  try {
    const parsed: unknown = JSON.parse(readFileSync(file, "utf8"));
    pkg = typeof parsed === "object" && parsed !== null ? (parsed as Record<string, unknown>) : {};
  } catch {
    pkg = {};
  }
  const out: Record<string, unknown> = {};
  for (const k of MANIFEST_FIELDS) if (Object.hasOwn(pkg, k)) out[k] = pkg[k];
  return JSON.stringify(out);
}

/** True for a path in the system folders every confined process sees anyway (`systemArgs`). */
function isSystem(p: string): boolean {
  return SYSTEM_DIRS.some((d) => isWithin(p, d));
}

function depth(p: string): number {
  return p.split("/").length;
}
