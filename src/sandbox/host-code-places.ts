/**
 * Where the host's code locations (see `host-code.ts`) fall in a mount
 * table: the virtual paths of those a writable mount holds (protected, so
 * no write, edit, remove or move reaches them, in-process, through the
 * port or from a shell), and the writable mounts that lie inside one
 * (refused: nothing could be protected there).
 */
import { type ConfigIssue, escapeControl } from "../errors/index.js";
import type { CodeLocation } from "./host-code.js";
import type { Mount } from "./mount-table.js";
import { isWithin } from "./virtual-path.js";

export type { CodeLocation };

/** The part of a table {@link placeHostCode} needs. */
interface Table {
  readonly mounts: readonly Mount[];
  lookup(v: string): Mount | undefined;
}

/**
 * One issue per writable mount whose real source is, or lies inside, a
 * folder of host code. The message names the mount's target and what the
 * folder is, and both host folders (setup errors go to the host's own code).
 * @param keys each mount's configuration key path, in the same order
 */
export function refuseInsideHostCode(
  mounts: readonly Pick<Mount, "source" | "target" | "readonly">[],
  keys: readonly (string | number)[][],
  code: readonly CodeLocation[],
): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  mounts.forEach((m, i) => {
    if (m.readonly) return;
    // A workspace's package folder may hold a writable mount (a package's
    // own files are held there), but may not be one.
    const inside = code.find(
      (c) => c.folder && (c.members ? m.source === c.host : isWithin(m.source, c.host)),
    );
    if (inside === undefined) return;
    const which = m.target === "/" ? "the root '/'" : `the mount '${m.target}'`;
    issues.push({
      path: keys[i] ?? [],
      message: `${which} is writable but its folder '${escapeControl(m.source)}' lies inside ${inside.what} ('${escapeControl(inside.host)}'), code the host process runs: an agent could change what the host runs. Make it read-only ('readonly: true', or ':ro' in the short form), or use a folder outside the host's packages`,
    });
  });
  return issues;
}

/**
 * The virtual paths at which writable mounts show host code, each with
 * what it is; only the outermost of nested ones, and only where the mount
 * is the one a path resolves to (a shadowed place is reached, and
 * protected, through the mount that shows it).
 */
export function placeHostCode(table: Table, code: readonly CodeLocation[]): Map<string, string> {
  const found = new Map<string, string>();
  for (const m of table.mounts) {
    if (m.readonly) continue;
    for (const c of code) {
      if (!isWithin(c.host, m.source)) continue;
      const rest = m.source === "/" ? c.host : c.host.slice(m.source.length);
      // The mount's own folder: refused at setup, never protected whole.
      if (rest === "" || rest === "/") continue;
      const v = m.target === "/" ? rest : m.target + rest;
      if (table.lookup(v) === m && !found.has(v)) found.set(v, c.what);
    }
  }
  const kept = new Map<string, string>();
  for (const v of [...found.keys()].sort((a, b) => a.length - b.length)) {
    if ([...kept.keys()].some((k) => isWithin(v, k))) continue;
    kept.set(v, found.get(v)!);
  }
  return kept;
}
