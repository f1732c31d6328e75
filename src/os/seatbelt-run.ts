/**
 * `runCommand` on macOS: `/bin/sh -c command` under `sandbox-exec` with the
 * profile of `seatbelt-profile.ts`. There is no mount namespace: the
 * command sees the host folders at their real paths (virtual paths are not
 * remapped), starts in the host folder of the sandbox's root (or first
 * readable area), and gets a private scratch folder as HOME and TMPDIR,
 * removed afterwards. The bind plan is still computed, for what it finds
 * on the host: the places the host's git runs from, links in the way of a
 * protected place, hard links to the host's code.
 *
 * Written for macOS but run only on Linux here: its pieces are tested by
 * their text (test/os-seatbelt.test.ts), not executed.
 */
import { existsSync, lstatSync, mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { IoError } from "../errors/index.js";
import type { Policy } from "../sandbox/policy.js";
import { refuseUnsafePlan } from "./bind-fds.js";
import { planBinds } from "./bind-plan.js";
import { DEFAULT_ENV } from "./bwrap.js";
import type { Unavailability } from "./bwrap-binary.js";
import type { CheckedCommandOptions } from "./command-options.js";
import { refuseLinkedHostCode } from "./host-code-links.js";
import type { RawResult } from "./process.js";
import { runProcess } from "./process.js";
import { buildSeatbeltProfile } from "./seatbelt-profile.js";

/** Apple's `sandbox-exec`, on the sealed system volume (never looked up on `PATH`). */
export const SANDBOX_EXEC = "/usr/bin/sandbox-exec";

/** Why Seatbelt cannot be used here, or `undefined` if it can. */
export function checkSeatbelt(): Unavailability | undefined {
  return existsSync(SANDBOX_EXEC) ? undefined : "no-sandbox-exec";
}

/**
 * Runs the command under Seatbelt (macOS).
 * @throws OsSandboxUnavailableError for a host path a profile cannot hold,
 *   or hard links to the host's code (unless `allowHardLinkedHostCode`)
 * @throws IoError if a mount source was replaced since the sandbox was
 *   created, or a protected place cannot be held (see `refuseUnsafePlan`)
 */
export async function runSeatbelt(
  policy: Policy,
  command: string,
  opts: CheckedCommandOptions,
): Promise<RawResult> {
  const plan = planBinds(policy);
  if (!opts.allowHardLinkedHostCode) refuseLinkedHostCode(plan);
  refuseUnsafePlan(plan);
  checkSources(policy);
  const guards = plan.steps.filter((s) => s.placeholder === true).map((s) => s.host);
  const temp = mkdtempSync(join(realpathSync.native(tmpdir()), "mountbox-"));
  try {
    const profile = buildSeatbeltProfile(policy, {
      tempDir: temp,
      network: opts.network,
      allowUnixSockets: opts.allowUnixSockets,
      secrets: policy.secrets.entries,
      guards,
    });
    // The defaults, for macOS: the private folder instead of /tmp (shared
    // there), Homebrew's tools, a locale macOS has. What the caller set stays.
    const env = { ...opts.env };
    for (const k of ["HOME", "TMPDIR"]) if (env[k] === DEFAULT_ENV[k]) env[k] = temp;
    if (env.PATH === DEFAULT_ENV.PATH)
      env.PATH = `/opt/homebrew/bin:/opt/homebrew/sbin:${env.PATH}`;
    if (env.LANG === DEFAULT_ENV.LANG) env.LANG = "en_US.UTF-8";
    return await runProcess({
      file: SANDBOX_EXEC,
      args: ["-p", profile, "/bin/sh", "-c", command],
      cwd: findWorkingFolder(policy) ?? temp,
      env,
      passThrough: opts.passThrough,
      // No pid namespace: the process group is the command's whole.
      killGroupOnExit: true,
      timeoutMs: opts.timeoutMs,
      maxOutputBytes: opts.maxOutputBytes,
      signal: opts.signal,
    });
  } finally {
    rmSync(temp, { recursive: true, force: true });
  }
}

/**
 * The host folder of the sandbox's first readable area that resolves
 * (the root, `/`, when it is readable), or `undefined`.
 */
export function findWorkingFolder(policy: Policy): string | undefined {
  for (const v of policy.readableRoots) {
    try {
      return policy.resolveVirtual(v, "read", false).real;
    } catch {
      // try the next area
    }
  }
  return undefined;
}

/**
 * Every mount source must still be the folder it was when the sandbox was
 * created: the profile names paths, and a folder put in another's place
 * would get its rules.
 */
function checkSources(policy: Policy): void {
  for (const m of policy.table.mounts) {
    const st = lstatSync(m.source, { throwIfNoEntry: false });
    let same = st?.isDirectory() === true && st.dev === m.dev && st.ino === m.ino;
    if (same) {
      try {
        same = realpathSync.native(m.source) === m.source;
      } catch {
        same = false;
      }
    }
    if (!same)
      throw new IoError(
        `Cannot run the command: the folder mounted at '${m.target}' was moved or replaced since the sandbox was created; its path now leads to a different folder (or none). Create the sandbox again to use what is there now.`,
        m.target,
      );
  }
}
