/**
 * listFiles: readable regular files under a folder whose relative path
 * matches a glob. Walks never follow a directory link (no loops, no
 * escapes), list mounted files under their targets, and skip what a mount
 * shadows.
 */
import { type Dirent, readdirSync, realpathSync, statSync } from "node:fs";
import { join } from "node:path";
import { ioError } from "../errors.js";
import { compileGlob } from "./glob.js";
import type { Policy } from "./policy.js";
import { isWithin, joinVirtual } from "./virtual-path.js";

/** Lists readable regular files under `path` whose relative path matches `pattern`. */
export async function listFiles(policy: Policy, path: string, pattern: string): Promise<string[]> {
  const isMatch = compileGlob(pattern);
  const start = policy.normalize(path);
  if (start === null) throw policy.climbError(path, "read");
  if (!policy.reachesBelow(start, "read")) throw policy.denialError("outside", start, "read");
  // A readable start that leads elsewhere (a link to outside) says so.
  if (policy.table.lookup(start) && policy.deny(start, "read", false) === undefined) {
    policy.resolveVirtual(start, "read", false);
  }
  const out: string[] = [];
  let found = false;
  for (const root of walkRoots(policy, start)) {
    const real = realDirOf(policy, root);
    if (real === undefined) continue;
    found = true;
    walk(policy, root, real, start, isMatch, out);
  }
  if (!found) {
    if (isFile(policy, start))
      throw ioError("list", start, "it is a file, not a directory (use readFile)");
    throw policy.notFoundError(start);
  }
  return [...new Set(out)].sort();
}

/** The start plus every mount target below it that reads can reach. */
function walkRoots(policy: Policy, start: string): string[] {
  const roots = [start];
  for (const m of policy.table.mounts) {
    if (m.target !== start && isWithin(m.target, start) && policy.reachesBelow(m.target, "read"))
      roots.push(m.target);
  }
  return roots;
}

/**
 * The verified real directory of a virtual directory to walk, or undefined
 * (absent, refused, or reached only through a link).
 */
function realDirOf(policy: Policy, v: string): string | undefined {
  const m = policy.table.lookup(v);
  if (!m) return undefined;
  try {
    if (policy.deny(v, "read", false) === undefined) {
      const { real } = policy.resolveVirtual(v, "read", false);
      return statSync(real).isDirectory() ? real : undefined;
    }
    // Not readable itself, but areas below are: walk towards them only
    // through real directories, never through a link.
    const real = realpathSync.native(policy.table.toHost(m, v));
    if (policy.table.mapBack(real) !== v) return undefined;
    return statSync(real).isDirectory() ? real : undefined;
  } catch {
    return undefined;
  }
}

function isFile(policy: Policy, v: string): boolean {
  try {
    return statSync(policy.resolveVirtual(v, "read", false).real).isFile();
  } catch {
    return false;
  }
}

function walk(
  policy: Policy,
  vdir: string,
  realDir: string,
  start: string,
  isMatch: (s: string) => boolean,
  out: string[],
): void {
  const owner = policy.table.lookup(vdir);
  let entries: Dirent[];
  try {
    entries = readdirSync(realDir, { withFileTypes: true });
  } catch {
    return; // unreadable or vanished directory: nothing to list there
  }
  for (const e of entries) {
    const v = joinVirtual(vdir, e.name);
    if (policy.table.lookup(v) !== owner) continue; // shadowed by a mount (walked as its own root)
    if (e.isDirectory()) {
      if (policy.reachesBelow(v, "read"))
        walk(policy, v, join(realDir, e.name), start, isMatch, out);
      continue;
    }
    if (!e.isFile() && !e.isSymbolicLink()) continue;
    const rel = start === "/" ? v.slice(1) : v.slice(start.length + 1);
    if (!isMatch(rel) || policy.deny(v, "read") !== undefined) continue;
    try {
      if (e.isSymbolicLink()) {
        // A link to a permitted regular file is listed; a directory link never.
        if (!statSync(policy.resolveVirtual(v, "read").real).isFile()) continue;
      } else {
        policy.checkReal(join(realDir, e.name), v, "read");
      }
    } catch {
      continue;
    }
    out.push(v);
  }
}
