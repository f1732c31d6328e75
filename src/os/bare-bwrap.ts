/**
 * The benchmark's floor for `runCommand` (issue 25): bubblewrap alone, with
 * the namespaces, system folders, binds, masks, limits prefix and seccomp
 * program `runCommand` would use for the same sandbox, but none of
 * mountbox's own work per command (no plan, secrets walk, placeholders,
 * launcher, cgroup, pty instance, mount table check or nested-repository
 * scan: those are done once here, or not at all). Not part of the public
 * API; never used to run an agent's command.
 */

import { policyOf, type Sandbox } from "../sandbox/sandbox.js";
import { pinBinds } from "./bind-fds.js";
import { planBinds } from "./bind-plan.js";
import { buildBwrapArgs } from "./bwrap.js";
import { findBwrap } from "./bwrap-binary.js";
import { checkCommandOptions } from "./command-options.js";
import { rlimitPrefix } from "./limits.js";
import { NO_PTYS } from "./pty-bound.js";
import type { RunCommandOptions } from "./run-command.js";
import { buildSeccompFilter, detectSeccompArch } from "./seccomp.js";
import { addSecretMasks, findSecretPlaces } from "./secret-masks.js";

/** A bubblewrap invocation ready to start, as {@link planBareBwrap} returns it. */
export interface BareBwrap {
  /** bubblewrap's path. */
  file: string;
  /** Its arguments: seccomp program on descriptor 3, an empty environment on 4, binds from 5. */
  args: string[];
  /** The seccomp program, to write to descriptor 3 of each start. */
  seccomp: Buffer;
  /** Descriptors 5, 6, … of each start (this process's pinned binds, in order). */
  bindFds: number[];
  /** Closes the descriptors and removes the placeholders made for the plan. */
  close(): void;
}

/**
 * @internal For the benchmark only: plans and pins once what
 * `runCommand(sandbox, command, options)` would bind, and returns the
 * bubblewrap argument vector for it (without the pty instance, which needs
 * a launcher: `/dev/pts` is an empty read-only tmpfs instead).
 * @throws Error if bubblewrap or a seccomp program is unavailable
 */
export async function planBareBwrap(
  sandbox: Sandbox,
  command: string,
  options: RunCommandOptions = {},
): Promise<BareBwrap> {
  const policy = policyOf(sandbox);
  const opts = checkCommandOptions(options);
  const found = await findBwrap(policy, opts.bwrapPath);
  if ("why" in found) throw new Error(`bubblewrap is unavailable (${found.why})`);
  const arch = detectSeccompArch();
  if (arch === undefined) throw new Error("no seccomp program for this CPU");
  const plan = planBinds(policy);
  addSecretMasks(plan, await findSecretPlaces(policy, plan));
  const pinned = pinBinds(policy, plan);
  let next = 5;
  const binds = pinned.fds.map((fd) => (fd === undefined ? undefined : next++));
  const args = buildBwrapArgs(plan, command, {
    devArgs: NO_PTYS.devArgs,
    network: opts.network,
    tmpBytes: opts.limits.tmpMb * 1024 * 1024,
    prefix: rlimitPrefix(opts.limits),
    fds: { seccomp: 3, env: 4, binds },
  });
  return {
    file: found.path,
    args,
    seccomp: buildSeccompFilter(arch, { allowUnixSockets: opts.allowUnixSockets }),
    bindFds: pinned.fds.filter((fd): fd is number => fd !== undefined),
    close: () => {
      pinned.close();
      pinned.release();
    },
  };
}
