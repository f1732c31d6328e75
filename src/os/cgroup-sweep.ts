/**
 * Cgroups left by a host that died (issue 19, finding 9). A host killed
 * while its commands run cannot remove their cgroups; its commands die with
 * it (`--die-with-parent`; a frozen one once the guard of `setup-gate.ts`
 * thaws it), but the empty folders stay. The next host of this machine
 * removes, once per parent folder, every empty `mountbox-PID-…` cgroup whose
 * host process is gone, and thaws one still frozen (a host killed together
 * with its guard): thawed, its processes die of the SIGKILL
 * `--die-with-parent` left pending. Nothing is killed here: a host in
 * another pid namespace looks dead from this one, and its commands are not
 * ours to kill. A PID that is alive (even if reused) is left alone.
 */
import { readdirSync, rmdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { isAlive } from "../sandbox/temp-names.js";

const swept = new Set<string>();
const NAME = /^mountbox-(\d+)-[0-9a-f]{12}$/;

/** Removes dead hosts' command cgroups under `parent` (once per process). Never throws. */
export function sweepDeadHostCgroups(parent: string): void {
  if (swept.has(parent)) return;
  swept.add(parent);
  let names: string[];
  try {
    names = readdirSync(parent);
  } catch {
    return;
  }
  for (const name of names) {
    const m = NAME.exec(name);
    if (m === null || isAlive(Number(m[1]))) continue;
    const dir = join(parent, name);
    tryWrite(join(dir, "freezer.state"), "THAWED");
    tryWrite(join(dir, "cgroup.freeze"), "0");
    try {
      rmdirSync(dir);
    } catch {
      // not empty yet: a later host tries again
    }
  }
}

function tryWrite(file: string, value: string): void {
  try {
    writeFileSync(file, value);
  } catch {
    // not this hierarchy's file
  }
}
