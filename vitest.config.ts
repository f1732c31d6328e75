import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 30_000,
    // Hooks pack and install the package (npm, from its cache) and remove
    // the apps again: tens of seconds on a loaded two-core machine.
    hookTimeout: 180_000,
    pool: "forks",
    // Most test files wait on child processes, installs and bubblewrap, not
    // the CPU: three at once even on two cores (vitest would run one there),
    // which also runs the suite under load, as users' hosts are.
    maxWorkers: Math.max(3, availableParallelism() - 1),
  },
});
