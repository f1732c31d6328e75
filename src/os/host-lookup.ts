/**
 * What lies at a host path, looked at without following links: the bind plan
 * must never let a link (planted by a command, perhaps) lead a mount, or the
 * folders made for it, elsewhere.
 */
import { lstatSync } from "node:fs";

/** What is at `host` (a link is not followed), or `undefined` if nothing (or unreadable). */
export function readKind(host: string): "dir" | "file" | "link" | undefined {
  try {
    const st = lstatSync(host, { throwIfNoEntry: false });
    if (st === undefined) return undefined;
    if (st.isSymbolicLink()) return "link";
    return st.isDirectory() ? "dir" : "file";
  } catch {
    return undefined;
  }
}

/** True if a folder between `base` and `base/rest…` (the last one excluded) is a link. */
export function hasLinkOnTheWay(base: string, rest: readonly string[]): boolean {
  let p = base === "/" ? "" : base;
  for (const name of rest.slice(0, -1)) {
    p = `${p}/${name}`;
    const kind = readKind(p);
    if (kind === undefined) return false;
    if (kind !== "dir") return true;
  }
  return false;
}
