/** The conformance suite against `ctx.sandbox` inside a real, hardened agent thread. */
import { beforeAll } from "vitest";
import { createConformanceHost, runSandboxConformance } from "./conformance/suite.js";
import { assertBuilt, createSandboxForThreads, startRelay } from "./conformance/thread.js";

beforeAll(assertBuilt);

runSandboxConformance("ctx.sandbox through a worker thread", async (variant) => {
  const host = await createConformanceHost(createSandboxForThreads);
  const relay = startRelay(host.sandboxFor(variant));
  return {
    sandbox: relay.sandbox,
    root: host.root,
    async cleanup() {
      await relay.stop();
      await host.cleanup();
    },
  };
});
