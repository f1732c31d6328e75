/**
 * Child process of the host bench's memory row: starts `count` idle threads
 * of one kind (`bare` workers, or `agent` threads of a host running the noop
 * fixture), and prints the RSS they added, per thread, in MiB.
 *
 * Each kind is measured in a process of its own: RSS deltas in one process
 * depend on order (threads started after others have ended reuse the pages
 * those freed, and measured near 0 MiB), so neither side is measured after
 * the other.
 */
import { mkdirSync, mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import { createHost } from "../src/index.js";

const [kind, countArg] = process.argv.slice(2);
const count = Number(countArg);
const noop = fileURLToPath(new URL("../../test/fixtures/host/noop.js", import.meta.url));
const base = realpathSync(mkdtempSync(join(tmpdir(), "mountbox-bench-memory-")));
mkdirSync(join(base, "root/src"), { recursive: true });
const host = await createHost({
  sandbox: { root: "root" },
  basePath: base,
  workers: { noop: { module: noop, sandbox: { restrict: "/src", readonly: true } } },
});

async function startBare(): Promise<() => Promise<void>> {
  const w = new Worker("setInterval(() => {}, 1 << 30)", { eval: true });
  await new Promise((r) => w.once("online", r));
  return async () => {
    await w.terminate();
  };
}

async function startAgent(): Promise<() => Promise<void>> {
  const c = new AbortController();
  const p = host.run("noop", { ms: 60_000 }, { signal: c.signal }).catch(() => {});
  await new Promise((r) => setTimeout(r, 150));
  return async () => {
    c.abort();
    await p;
  };
}

const start = kind === "agent" ? startAgent : startBare;
// One first: code the process loads once (the host's side of a run) is not per thread.
await (await start())();
await new Promise((r) => setTimeout(r, 100));
globalThis.gc?.();
const before = process.memoryUsage().rss;
const stops: (() => Promise<void>)[] = [];
for (let i = 0; i < count; i++) stops.push(await start());
await new Promise((r) => setTimeout(r, 300));
const after = process.memoryUsage().rss;
await Promise.all(stops.map((s) => s()));
await host.close();
rmSync(base, { recursive: true, force: true });
process.stdout.write(`${(after - before) / count / 2 ** 20}\n`);
