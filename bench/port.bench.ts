/**
 * Runtime I benchmarks: a 1 KiB readFile through `ctx.sandbox` in a real
 * agent thread, one at a time and 64 in flight, beside (a) the floor of
 * DESIGN §9 — a minimal raw-port handler making the same in-process
 * `sandbox.readFile` call with no validation, framing or error mapping,
 * driven from the same thread — and (b) the MCP filesystem server's
 * `validatePath` + `readFileContent`, in-process. Each iteration performs
 * BATCH reads; hz is reported per read.
 */
import { fileURLToPath } from "node:url";
import { MessageChannel, type MessagePort } from "node:worker_threads";
import { createSandbox, type Sandbox } from "../src/index.js";
import { runAgentThread } from "../src/threads/agent-thread.js";
import { type BenchRow, compare } from "./lib.js";
import { loadMcpLib, makeBenchTree } from "./tree.js";

/** Reads per iteration: amortizes the control message to the thread. */
const BATCH = 256;

/** Serves the floor: the bare minimum a port needs to do the call. */
function serveFloor(port: MessagePort, sandbox: Sandbox): void {
  port.on("message", async (m: { id: number; p: string }) => {
    port.postMessage({ id: m.id, v: await sandbox.readFile(m.p) });
  });
}

function perRead(row: BenchRow): BenchRow {
  return { ...row, hz: row.hz * BATCH, baselineHz: row.baselineHz * BATCH };
}

export default async function benchPort(): Promise<BenchRow[]> {
  const { base, root, cleanup } = makeBenchTree();
  const control = new MessageChannel();
  const floor = new MessageChannel();
  try {
    const sandbox = createSandbox({ root: "root" }, { basePath: base });
    serveFloor(floor.port1, sandbox);
    const agent = runAgentThread({
      // Relative to dist/bench/ once built.
      module: fileURLToPath(new URL("../../test/fixtures/bench-worker.js", import.meta.url)),
      input: { control: control.port2, floor: floor.port2 },
      transferList: [control.port2, floor.port2],
      sandbox,
    });
    // `async` matters: tinybench calls a plain function once to find out
    // whether it is async, which would leave a stray batch in flight.
    const batch = (mode: string, concurrency: number) => async () => {
      await new Promise<void>((resolve) => {
        control.port1.once("message", () => resolve());
        control.port1.postMessage({ mode, path: "/small.txt", k: BATCH, concurrency });
      });
    };
    const mcp = await loadMcpLib(root);
    const hostPath = `${root}/small.txt`;
    const mcpBatch = async () => {
      for (let i = 0; i < BATCH; i++) await mcp.readFileContent(await mcp.validatePath(hostPath));
    };
    const rows = [
      await compare(
        "ctx.sandbox.readFile 1 KiB, 1 in flight",
        batch("mountbox", 1),
        "raw-port floor, 1 in flight",
        batch("floor", 1),
      ),
      await compare(
        "ctx.sandbox.readFile 1 KiB, 64 in flight",
        batch("mountbox", 64),
        "raw-port floor, 64 in flight",
        batch("floor", 64),
        {
          goal: "≥ 0.8×",
        },
      ),
      await compare(
        "ctx.sandbox.readFile 1 KiB, 1 in flight",
        batch("mountbox", 1),
        "MCP validatePath + readFileContent (in-process)",
        mcpBatch,
      ),
      await compare(
        "ctx.sandbox.readFile 1 KiB, 64 in flight",
        batch("mountbox", 64),
        "MCP validatePath + readFileContent (in-process)",
        mcpBatch,
      ),
    ].map(perRead);
    control.port1.postMessage({ mode: "stop" });
    await agent;
    return rows;
  } finally {
    control.port1.close();
    floor.port1.close();
    cleanup();
  }
}
