/**
 * What a model is told about a command on macOS, where there is no
 * `/workspace`: the command sees host folders at their real paths and
 * starts in the folder of the sandbox's root. Paths inside that folder are
 * given relative to it; an area elsewhere can only be named by its host
 * folder, which is then shown (the command would see it anyway).
 */
import { escapeControl, formatPathList } from "../errors/index.js";
import { setCovers } from "../sandbox/areas.js";
import type { Policy } from "../sandbox/policy.js";
import { isWithin } from "../sandbox/virtual-path.js";
import { findWorkingFolder } from "./seatbelt-run.js";

/** What a refused path or a failed network call prints on macOS. */
export const HOST_WRITE_REFUSED =
  /Operation not permitted|Permission denied|No such file or directory/;

/** The note for a command whose network call failed while the network was off. */
export const HOST_NETWORK_NOTE =
  "Network access is off for this command (the OS sandbox refuses every connection, the host's 127.0.0.1 included). Ask for network access if it is needed.";

/** The note for a command that printed a refusal. */
export function describeRefusedOnHost(policy: Policy): string {
  return `A path was refused or not found by the OS sandbox (macOS). Commands see the host's folders, not the sandbox paths. ${describePlaces(policy)} Writable: ${formatPathList(policy.writableRoots)} (sandbox paths); $TMPDIR is private scratch space. Everything else is read-only or refused.`;
}

/** The shell tool's description on macOS (see `describeCommandSandbox`). */
export function describeSeatbeltSandbox(policy: Policy, network: boolean): string {
  return [
    "Commands run with sh in an OS sandbox (macOS Seatbelt). They see the host's folders at their own paths, not the sandbox paths.",
    describePlaces(policy),
    `Readable: ${formatPathList(policy.readableRoots)}. Writable: ${formatPathList(policy.writableRoots)} (sandbox paths).`,
    "$TMPDIR (also $HOME) is private scratch space, removed when the command ends. Nothing else is writable; other paths are refused.",
    `Network: ${network ? "on" : "off"}. The environment is empty except PATH, HOME, TMPDIR and LANG.`,
  ].join("\n");
}

/** Where the sandbox's areas are for a command: relative to its working folder, or at a host folder. */
function describePlaces(policy: Policy): string {
  const cwd = findWorkingFolder(policy);
  const at = policy.readableRoots.find((v) => {
    try {
      return policy.resolveVirtual(v, "read", false).real === cwd;
    } catch {
      return false;
    }
  });
  const parts: string[] = [];
  if (cwd !== undefined && at !== undefined)
    parts.push(
      `The working directory is the sandbox path '${at}': use relative paths (the sandbox path '${at === "/" ? "/src/a.ts" : `${at}/a.txt`}' is '${at === "/" ? "src/a.ts" : "a.txt"}' there).`,
    );
  // The areas, and the mounts inside them (elsewhere on the host, often).
  const places = new Set(policy.readableRoots);
  for (const m of policy.table.mounts) if (setCovers(policy.read, m.target)) places.add(m.target);
  for (const v of [...places].sort()) {
    if (v === at) continue;
    let real: string;
    try {
      real = policy.resolveVirtual(v, "read", false).real;
    } catch {
      continue;
    }
    if (cwd !== undefined && at !== undefined && isWithin(real, cwd) && isWithin(v, at)) {
      // Inside the working folder: shown only where the host layout is not the sandbox's.
      const rel = real.slice(cwd === "/" ? 1 : cwd.length + 1);
      if (rel === v.slice(at === "/" ? 1 : at.length + 1)) continue;
      parts.push(`The sandbox path '${v}' is '${escapeControl(rel)}' there.`);
    } else parts.push(`The sandbox path '${v}' is the folder '${escapeControl(real)}'.`);
  }
  return parts.join(" ");
}
