/** The tool conformance suite over `ctx.sandbox` inside a real, hardened agent thread. */
import { beforeAll } from "vitest";
import type { ToolSandbox } from "../src/index.js";
import { assertBuilt, createSandboxForThreads, startRelay } from "./conformance/thread.js";
import { createToolHost, runToolConformance } from "./tools/suite.js";

beforeAll(assertBuilt);

runToolConformance("ctx.sandbox through a worker thread", async (variant) => {
  const host = await createToolHost(createSandboxForThreads);
  const relay = startRelay(host.sandboxFor(variant));
  return {
    // Every call the tools make runs as `ctx.sandbox.<method>` inside the thread.
    sandbox: relay.sandbox as unknown as ToolSandbox,
    root: host.root,
    async cleanup() {
      await relay.stop();
      await host.cleanup();
    },
  };
});
