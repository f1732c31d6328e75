/**
 * What a configuration binds must not be choosable by a command run under it
 * (issue 19, finding 8). A mount whose source path runs through a writable
 * area of the same configuration (`root: .` writable, and a mount
 * `./data/ref:/ref:ro`) could be re-pointed by a command: rename `data`, put
 * a link named `data` in its place, and the next `createSandbox` with the
 * same configuration (every `mountbox exec`, every host restart) binds
 * whatever the link names — a host secret through a `:ro` mount, an outside
 * folder through a writable one.
 *
 * A sandbox can make links only inside its writable areas; so each mount's
 * source path is walked component by component with `lstat`, and a link met
 * strictly inside another writable area of the configuration refuses the
 * configuration. Links elsewhere (the user's own, in folders no sandbox of
 * this configuration can write) are followed, and the walk goes on from
 * where they lead, so a link they lead to is checked too. A plain folder a
 * command made in place of the renamed one is no escape: it lies inside the
 * writable area itself.
 */
import { lstatSync, readlinkSync } from "node:fs";
import { dirname, sep } from "node:path";
import type { ConfigIssue } from "../errors/index.js";
import { isWithin } from "./virtual-path.js";

/** How many links the walk follows before giving up (as the kernel). */
const MAX_HOPS = 40;

/** A writable area: its real host folder and its virtual path. */
export interface WritableArea {
  source: string;
  target: string;
}

/**
 * The issue for a mount whose source path (absolute, as configured) meets a
 * link strictly inside one of `writable`; undefined if none. Never throws:
 * a path that cannot be walked is left to the caller's own checks.
 */
export function checkMountSourcePath(
  given: string,
  target: string,
  key: (string | number)[],
  writable: readonly WritableArea[],
): ConfigIssue | undefined {
  let rest = given.split(sep).filter((c) => c !== "");
  let cur = "/";
  for (let hops = 0; rest.length > 0; ) {
    const name = rest[0] as string;
    rest = rest.slice(1);
    // `cur` is real (no link in it): `..` is its parent, as for the kernel.
    if (name === "." || name === "..") {
      if (name === "..") cur = dirname(cur);
      continue;
    }
    const next = cur === "/" ? `/${name}` : `${cur}/${name}`;
    let isLink: boolean;
    try {
      isLink = lstatSync(next).isSymbolicLink();
    } catch {
      return undefined;
    }
    if (!isLink) {
      cur = next;
      continue;
    }
    const area = writable.find((w) => next !== w.source && isWithin(next, w.source));
    if (area !== undefined) {
      const at = area.target === "/" ? "" : area.target;
      const virtual = `${at}${next.slice(area.source === "/" ? 0 : area.source.length)}`;
      return {
        path: key,
        message: `the source for '${target}' has a link on the way to the source, at '${virtual}' inside the writable area '${area.target}': a command run in this sandbox could have put it there to choose what '${target}' shows. Give the folder's real path, or make '${area.target}' read-only`,
      };
    }
    if (++hops > MAX_HOPS) return undefined;
    let link: string;
    try {
      link = readlinkSync(next);
    } catch {
      return undefined;
    }
    // Walk on from where the link leads: from '/' if it is absolute, else
    // from the folder it is in.
    if (link.startsWith("/")) cur = "/";
    rest = [...link.split(sep).filter((c) => c !== ""), ...rest];
  }
  return undefined;
}
