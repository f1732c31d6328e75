import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";
import { BaseSequencer, type TestSpecification } from "vitest/node";

/**
 * The files that take minutes (real installs by npm, pnpm and yarn; packed
 * apps) start first: started last, as a fresh clone's default order had
 * them, the longest one alone made the suite's last two minutes.
 */
const LONGEST_FIRST = [
  "real-installs",
  "packed-install",
  "packed-types",
  "host-code-protection",
  "cli-program",
  "cli-live",
  "process-agents",
  "model-providers",
  "cli-init",
  "packed-commonjs",
  "mcp-parity",
  "mcp-approvals",
  "mcp-client-lifecycle",
  "mcp-client-features",
  "mcp-http",
  "git-tools",
];

class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (f: TestSpecification) => {
      const i = LONGEST_FIRST.findIndex((name) => f.moduleId.endsWith(`/${name}.test.ts`));
      return i === -1 ? LONGEST_FIRST.length : i;
    };
    // Stable: the rest keeps vitest's own order.
    return sorted
      .map((f, i) => ({ f, i }))
      .sort((a, b) => rank(a.f) - rank(b.f) || a.i - b.i)
      .map(({ f }) => f);
  }
}

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 30_000,
    // Hooks pack and install the package (npm, from its cache) and remove
    // the apps again: tens of seconds on a loaded two-core machine.
    hookTimeout: 180_000,
    pool: "forks",
    // Most test files wait on child processes, installs and bubblewrap, not
    // the CPU: four at once even on two cores (vitest would run one there),
    // which also runs the suite under load, as users' hosts are.
    maxWorkers: Math.max(4, availableParallelism() - 1),
    sequence: { sequencer: LongestFirst },
  },
});
