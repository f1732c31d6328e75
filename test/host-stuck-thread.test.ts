/**
 * A thread blocked in native code (opening a FIFO with no writer) ignores
 * terminate(): after its agent timed out it still runs. The host counts it
 * against maxThreads until it really exits, so such threads cannot pile up
 * (found by an adversarial review). Runs the host in a child process; the
 * test opens the FIFO for writing to let the thread go.
 */
import { execFileSync, spawn } from "node:child_process";
import { closeSync, constants, mkdtempSync, openSync, rmSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { beforeAll, expect, it } from "vitest";
import { assertBuilt } from "./conformance/thread.js";

beforeAll(assertBuilt);

const dist = new URL("../dist/src/index.js", import.meta.url).href;
const fx = (name: string) => fileURLToPath(new URL(`./fixtures/host/${name}`, import.meta.url));

const hostScript = (fifo: string) => `
import { createHost } from ${JSON.stringify(dist)};
const host = await createHost({
  workers: {
    stuck: { module: ${JSON.stringify(fx("stuck.js"))}, dependencies: [${JSON.stringify(fifo)}] },
    quick: { module: ${JSON.stringify(fx("noop.js"))} },
  },
  maxAgents: 1,
  maxThreads: 1,
});
const outcome = (p) => p.then(() => "ran", (e) => e.reason ?? e.code);
// (3 s: on a loaded machine a thread may take a second to reach the open.)
const first = await outcome(host.run("stuck", ${JSON.stringify(fifo)}, { timeoutMs: 3000 }));
// A thread still running a second after terminate() counts as stuck.
await new Promise((r) => setTimeout(r, 1500));
const second = await outcome(host.run("quick"));
console.log(JSON.stringify({ first, second }));
// The test now writes to the FIFO: the blocked open returns, the thread exits.
let third = "refused";
for (let i = 0; i < 100 && third !== "ran"; i++) {
  await new Promise((r) => setTimeout(r, 50));
  third = await outcome(host.run("quick"));
}
console.log(JSON.stringify({ third }));
await host.close();
`;

/**
 * Writes "wake" to the FIFO once a reader has it open, never blocking this
 * process: a blocking open with no reader (a thread that never got to its
 * open) would freeze the test's own loop, and its timers with it.
 */
async function wakeReader(fifo: string): Promise<void> {
  for (let i = 0; i < 1000; i++) {
    try {
      const fd = openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK);
      writeSync(fd, "wake\n");
      closeSync(fd);
      return;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ENXIO") throw err;
    }
    await new Promise((r) => setTimeout(r, 20));
  }
}

it("a thread that ignores terminate() keeps its maxThreads slot until it exits", async () => {
  const dir = mkdtempSync(join(tmpdir(), "mountbox-stuck-"));
  const fifo = join(dir, "fifo");
  execFileSync("mkfifo", [fifo]);
  const child = spawn(process.execPath, ["--input-type=module", "-e", hostScript(fifo)], {
    stdio: ["pipe", "pipe", "pipe"],
  });
  const lines: string[] = [];
  let buffer = "";
  const done = new Promise<number | null>((resolve) => child.on("exit", resolve));
  child.stdout.setEncoding("utf8");
  child.stdout.on("data", (chunk: string) => {
    buffer += chunk;
    const parts = buffer.split("\n");
    buffer = parts.pop() ?? "";
    for (const line of parts) {
      lines.push(line);
      // The thread's open for reading is waiting: opening for writing lets
      // both return, and the thread reads "wake" and exits.
      if (lines.length === 1) void wakeReader(fifo);
    }
  });
  const timer = setTimeout(() => child.kill("SIGKILL"), 40_000);
  const status = await done;
  clearTimeout(timer);
  expect(lines.map((l) => JSON.parse(l))).toEqual([
    { first: "timeout", second: "delegation_refused" },
    { third: "ran" },
  ]);
  expect(status).toBe(0);
  rmSync(dir, { recursive: true, force: true });
}, 50_000);
