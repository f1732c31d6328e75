/**
 * Agent processes under load (issue 21): 16 process agents at once, each
 * reading, writing and delegating to a thread, beside 8 threads delegating
 * to processes — all finish, nothing is left running; and a host killed
 * mid-way (SIGKILL) takes every agent process with it. The host runs in a
 * child process (test/fixtures/process/run-load.mjs).
 */
import { spawn, spawnSync } from "node:child_process";
import { realpathSync } from "node:fs";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterAll, beforeAll, expect, it } from "vitest";
import { assertBuilt } from "./conformance/thread.js";
import { describeWithBwrap } from "./helpers/bwrap.js";
import { listDescendants, type ProcInfo } from "./helpers/processes.js";
import { makeTempDir, removeDir } from "./helpers/tree.js";

const script = fileURLToPath(new URL("./fixtures/process/run-load.mjs", import.meta.url));
const dist = pathToFileURL(fileURLToPath(new URL("../dist/src/index.js", import.meta.url))).href;
let base: string;

beforeAll(() => {
  assertBuilt();
  base = makeTempDir("mountbox-process-load-");
});
afterAll(() => removeDir(base));

const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describeWithBwrap("agent processes under load", () => {
  it("16 process agents and 8 threads at once, delegating across kinds: all finish", () => {
    const child = spawnSync(process.execPath, [script, dist, `${base}/finish`, "finish"], {
      encoding: "utf8",
      timeout: 110_000,
      killSignal: "SIGKILL",
    });
    expect(child.signal, child.stderr).toBeNull();
    const out = JSON.parse(child.stdout.trim().split("\n").at(-1) ?? "{}") as {
      problems: string[];
      results: number;
      processPids: number[];
      calleePids: number[];
      written: string[];
    };
    expect(out.problems).toEqual([]);
    expect(out.results).toBe(24);
    // Each wrote its own file, and so did each callee.
    expect(out.written).toHaveLength(48);
    // Every process agent ran in its own pid namespace (a small pid there).
    expect(out.processPids.every((pid) => pid < 10)).toBe(true);
    expect(out.calleePids.filter((pid) => pid < 10)).toHaveLength(8);
  }, 120_000);

  it("a host killed mid-way takes every agent process with it", async () => {
    const child = spawn(process.execPath, [script, dist, `${base}/hang`, "hang"], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let err = "";
    child.stderr.on("data", (b: Buffer) => {
      err += b;
    });
    await new Promise<void>((resolve, reject) => {
      child.stdout.on("data", (b: Buffer) => {
        if (b.toString().includes("ready")) resolve();
      });
      child.once("exit", () => reject(new Error(`the host ended early: ${err}`)));
    });
    // Wait until every agent's Node runs (16 process entries below the host;
    // bubblewrap's and the launcher's command lines name the entry too).
    const node = realpathSync(process.execPath);
    const agents = (procs: ProcInfo[]) =>
      procs.filter((p) => p.cmd.startsWith(`${node} `) && p.cmd.includes("process-entry.js"));
    let below = listDescendants(child.pid!);
    for (let i = 0; i < 100 && agents(below).length < 16; i++) {
      await new Promise((r) => setTimeout(r, 100));
      below = listDescendants(child.pid!);
    }
    expect(agents(below)).toHaveLength(16);
    child.kill("SIGKILL");
    await new Promise((r) => child.once("exit", r));
    const until = Date.now() + 10_000;
    let alive = below.filter((p) => isAlive(p.pid));
    while (alive.length > 0 && Date.now() < until) {
      await new Promise((r) => setTimeout(r, 100));
      alive = below.filter((p) => isAlive(p.pid));
    }
    expect(alive).toEqual([]);
  }, 60_000);
});
