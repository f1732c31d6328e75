/**
 * bubblewrap for tests: which binary (honouring `MOUNTBOX_BWRAP`), and a
 * `describe` that needs it. Without bubblewrap the suite is skipped with one
 * visible line, except under `CI=true` or `MOUNTBOX_REQUIRE_BWRAP=1`, where a
 * missing bubblewrap fails.
 */
import { spawnSync } from "node:child_process";
import { describe, test } from "vitest";
import { locateBwrap } from "../../src/os/bwrap-binary.js";

/** The bubblewrap binary the library would use (MOUNTBOX_BWRAP, else the system one). */
export const BWRAP = locateBwrap();

/** True if that binary runs. */
export const HAS_BWRAP =
  process.platform === "linux" && spawnSync(BWRAP, ["--version"], { stdio: "ignore" }).status === 0;

/** True where a missing bubblewrap must fail the tests that need it (CI). */
export const REQUIRE_BWRAP =
  process.env.CI === "true" || process.env.MOUNTBOX_REQUIRE_BWRAP === "1";
const REQUIRED = REQUIRE_BWRAP;

/** `describe` for tests that run real bubblewrap. */
export function describeWithBwrap(name: string, body: () => void): void {
  if (HAS_BWRAP) {
    describe(name, body);
  } else if (REQUIRED) {
    describe(name, () => {
      test("bubblewrap is installed", () => {
        throw new Error(
          `bubblewrap not found at ${BWRAP} (CI=true or MOUNTBOX_REQUIRE_BWRAP=1 make it required): apt-get install bubblewrap, or set MOUNTBOX_BWRAP`,
        );
      });
    });
  } else {
    console.warn(
      `[skipped] ${name}: bubblewrap not found at ${BWRAP}; install it (apt-get install bubblewrap) or set MOUNTBOX_BWRAP to run these tests`,
    );
    describe.skipIf(true)(name, body);
  }
}

/** True if this process runs as root (CI does). */
export const IS_ROOT = process.geteuid?.() === 0;

/** Forks up to 40 sleeping children; prints how many it got (stops at the first refusal). */
export const FORK_40 = `python3 -c 'import os, sys, time
n = 0
try:
    for i in range(40):
        if os.fork() == 0:
            time.sleep(3)
            os._exit(0)
        n += 1
finally:
    print("forked", n, flush=True)'`;
