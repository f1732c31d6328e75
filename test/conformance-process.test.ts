/** The conformance suite against `ctx.sandbox` inside a real agent process under bubblewrap. */
import { beforeAll } from "vitest";
import { startProcessRelay } from "./conformance/process.js";
import { createConformanceHost, runSandboxConformance } from "./conformance/suite.js";
import { assertBuilt, createSandboxForThreads } from "./conformance/thread.js";
import { describeWithBwrap } from "./helpers/bwrap.js";

beforeAll(assertBuilt);

describeWithBwrap("agent process", () => {
  runSandboxConformance("ctx.sandbox through an agent process", async (variant) => {
    const host = await createConformanceHost(createSandboxForThreads);
    const relay = await startProcessRelay(host.sandboxFor(variant));
    return {
      sandbox: relay.sandbox,
      root: host.root,
      async cleanup() {
        await relay.stop();
        await host.cleanup();
      },
    };
  });
});
