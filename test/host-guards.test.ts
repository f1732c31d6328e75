/**
 * Issue 10, finding 1 (host side): once a host guards the process, SIGUSR1
 * from outside neither opens the inspector nor kills the process. Runs in a
 * child process: the test runner itself is never signalled.
 */
import { spawn } from "node:child_process";
import { fileURLToPath, pathToFileURL } from "node:url";
import { beforeAll, expect, it } from "vitest";
import { assertBuilt } from "./conformance/thread.js";

beforeAll(assertBuilt);

const guards = pathToFileURL(
  fileURLToPath(new URL("../dist/src/host/host-guards.js", import.meta.url)),
).href;

/** Starts `script` with the inspector port free to choose; sends it `signals` SIGUSR1s, then "report". */
async function signalChild(
  script: string,
  signals: number,
): Promise<{ out: string; status: number | null; signal: string | null }> {
  const child = spawn(process.execPath, ["--inspect-port=0", "--input-type=module", "-e", script], {
    stdio: ["pipe", "pipe", "pipe"],
  });
  let out = "";
  child.stdout.setEncoding("utf8").on("data", (d: string) => {
    out += d;
  });
  const exited = new Promise<{ status: number | null; signal: string | null }>((resolve) =>
    child.on("exit", (status, signal) => resolve({ status, signal })),
  );
  const timer = setTimeout(() => child.kill("SIGKILL"), 20_000);
  try {
    while (!out.includes("ready")) {
      if (child.exitCode !== null || child.signalCode !== null) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    for (let i = 0; i < signals; i++) {
      child.kill("SIGUSR1");
      await new Promise((r) => setTimeout(r, 200));
    }
    child.stdin.end("report\n");
    const end = await exited;
    return { out, ...end };
  } finally {
    clearTimeout(timer);
  }
}

const body = (guard: boolean) => `
  import inspector from "node:inspector";
  import { guardProcessSignals } from ${JSON.stringify(guards)};
  ${guard ? "guardProcessSignals(); guardProcessSignals();" : ""}
  process.stdin.on("data", () => {
    console.log("url " + (inspector.url() ?? "none") + " listeners " + process.listenerCount("SIGUSR1"));
    process.exit(0);
  });
  console.log("ready");`;

it("SIGUSR1 opens no inspector and kills nothing once the process is guarded", async () => {
  const r = await signalChild(body(true), 2);
  expect(r.signal).toBeNull();
  expect(r.out).toContain("url none listeners 1");
});

it("control: the same signal opens the inspector of an unguarded process", async () => {
  const r = await signalChild(body(false), 1);
  expect(r.out).toMatch(/url ws:\/\/127\.0\.0\.1:\d+\/\S+ listeners 0/);
});
