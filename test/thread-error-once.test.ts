/**
 * A failing worker is reported once, as what it threw: an unhandled
 * rejection with that very error (Node 20's loader makes one for a failed
 * import — an ES module helper in a CommonJS app) does not crash the thread
 * too, which raced the error report and turned it, under load, into a
 * `crashed` failure naming a host path. Watched on the raw thread, which
 * the host would terminate at the first report.
 */
import { pathToFileURL } from "node:url";
import { MessageChannel, Worker } from "node:worker_threads";
import { beforeAll, expect, it } from "vitest";
import {
  computeExecArgv,
  computeWorkerGrants,
  threadEntryUrl,
} from "../dist/src/threads/permissions.js";
import { assertBuilt, fixture } from "./conformance/thread.js";

beforeAll(assertBuilt);

it("an unhandled rejection with the error the worker failed with is not a second failure", async () => {
  const module = fixture("reject-twice-worker.js");
  const { port1, port2 } = new MessageChannel();
  const worker = new Worker(threadEntryUrl(), {
    workerData: { moduleUrl: pathToFileURL(module).href, input: null, port: port2 },
    transferList: [port2],
    execArgv: computeExecArgv({ readPaths: computeWorkerGrants({ module }) }),
    env: {},
    stdout: true,
    stderr: true,
  });
  const seen: unknown[] = [];
  // Ends at the probe the worker schedules after the failing tick, or at a crash.
  await new Promise<void>((done) => {
    worker.on("message", (m: { kind?: string }) => {
      seen.push(m);
      if (m.kind === "probe") done();
    });
    worker.on("error", (e) => {
      seen.push({ crashed: e.message });
      done();
    });
  });
  await worker.terminate();
  port1.close();
  expect(seen).toEqual([
    { kind: "error", error: { name: "Error", message: "reported once" } },
    { kind: "probe", alive: true },
  ]);
});
