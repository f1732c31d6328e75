/**
 * A thread blocked in native code (opening a FIFO with no writer) ignores
 * terminate(): after its agent timed out it still runs. The host counts it
 * against maxThreads until it really exits, so such threads cannot pile up
 * (found by an adversarial review). Runs the host in a child process; the
 * test opens the FIFO for writing to let the thread go.
 */
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
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
const first = await outcome(host.run("stuck", ${JSON.stringify(fifo)}, { timeoutMs: 300 }));
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
      // Opening for writing blocks until the thread's open for reading, which
      // is waiting already: both return, the thread reads "wake" and exits.
      if (lines.length === 1) writeFileSync(fifo, "wake\n");
    }
  });
  const timer = setTimeout(() => child.kill("SIGKILL"), 30_000);
  const status = await done;
  clearTimeout(timer);
  expect(lines.map((l) => JSON.parse(l))).toEqual([
    { first: "timeout", second: "delegation_refused" },
    { third: "ran" },
  ]);
  expect(status).toBe(0);
  rmSync(dir, { recursive: true, force: true });
}, 40_000);
