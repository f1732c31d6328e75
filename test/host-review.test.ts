/**
 * Regressions for an adversarial review of the runtime: a hostile worker
 * must not crash the host, outgrow maxAgents, multiply host memory with
 * attachments, leak threads, stall the event loop, or slip oversized
 * messages past the parent port.
 */
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createHost as createBuiltHost } from "../dist/src/index.js";
import type { Host, HostOptions } from "../src/index.js";
import { assertBuilt } from "./conformance/thread.js";
import { makeTempDir, removeDir, writeTree } from "./helpers/tree.js";

const createHost = createBuiltHost as unknown as (o: HostOptions) => Promise<Host>;
const hostile = fileURLToPath(new URL("./fixtures/host/hostile.js", import.meta.url));
let base: string;

beforeAll(() => {
  assertBuilt();
  base = makeTempDir();
  writeTree(join(base, "root"), { "a.txt": "a" });
});
afterAll(() => removeDir(base));

const make = (extra: Partial<HostOptions> = {}) =>
  createHost({
    sandbox: { root: "root" },
    basePath: base,
    workers: { a: { module: hostile, delegates: ["b"] }, b: { module: hostile } },
    ...extra,
  });

it("a callee whose result holds a port fails cleanly; the host goes on", async () => {
  const host = await make();
  const r = (await host.run("a", {
    mode: "fanout",
    n: 1,
    to: "b",
    input: { mode: "result-port" },
  })) as string[];
  expect(r).toEqual(["agent_failed"]);
  expect(await host.run("b", { mode: "ok" })).toBe("ok");
  await host.close();
});

it("maxAgents counts a caller once, however many callees it waits on", async () => {
  const host = await make({ maxAgents: 2 });
  const r = (await host.run("a", {
    mode: "fanout",
    n: 12,
    to: "b",
    input: { mode: "sleep", ms: 400 },
  })) as string[];
  expect(r.filter((x) => x === "ok")).toHaveLength(2);
  expect(r.filter((x) => x === "delegation_refused")).toHaveLength(10);
  await host.close();
});

it("attachments to running callees share one budget per caller", async () => {
  const host = await make({ maxAgents: 32 });
  expect(await host.run("b", { mode: "write-big" })).toBe("written");
  const r = (await host.run("a", {
    mode: "fanout",
    n: 8,
    to: "b",
    input: { mode: "sleep", ms: 300 },
    opts: { attachments: ["/big.bin"] },
  })) as string[];
  // 10 MiB each against a 64 MiB budget: six fit while they run, two do not.
  expect(r.filter((x) => x === "ok")).toHaveLength(6);
  expect(r.filter((x) => x === "delegation_refused")).toHaveLength(2);
  await host.close();
});

it("a port smuggled into a delegation is refused, and nothing is left running after close", async () => {
  const before = process.getActiveResourcesInfo().filter((x) => x !== "Timeout").length;
  const host = await make({ warmThreads: 1 });
  expect(await host.run("a", { mode: "port-input", to: "b" })).toBe("invalid_request");
  await host.close();
  await new Promise((r) => setTimeout(r, 100));
  expect(
    process.getActiveResourcesInfo().filter((x) => x !== "Timeout").length,
  ).toBeLessThanOrEqual(before);
});

it("an uncaught error of millions of control characters fails its agent with a short message", async () => {
  const host = await make();
  const err = (await host.run("b", { mode: "huge-throw", chars: 3_000_000 }).catch((e) => e)) as {
    reason: string;
    message: string;
  };
  expect(err.reason).toBe("crashed");
  expect(err.message.length).toBeLessThan(30_000);
  expect(err.message).toMatch(/^Worker 'b''s thread crashed: Error: (\\u0001){100}/);
  expect(await host.run("b", { mode: "ok" })).toBe("ok");
  await host.close();
});

it("delegation options with huge keys or paths get short refusals, and the host goes on", async () => {
  const host = await make();
  const r = (await host.run("a", { mode: "delegate-raw", to: "b", chars: 400_000 })) as {
    ok: boolean;
    code: string;
    chars: number;
  }[];
  expect(r.map((x) => [x.ok, x.code, x.chars < 2000])).toEqual([
    [false, "invalid_request", true],
    [false, "invalid_config", true],
    [false, "invalid_path", true],
    [false, "invalid_config", true],
  ]);
  expect(await host.run("b", { mode: "ok" })).toBe("ok");
  await host.close();
});

it("a huge call-site allow-list is refused before it is resolved", async () => {
  const host = await make();
  expect(await host.run("a", { mode: "big-allow", to: "b" })).toBe("invalid_config");
  await host.close();
});

it("oversized or abusive messages on the parent port stop the thread", async () => {
  const host = await make();
  for (const mode of ["junk", "big-log", "boxed"]) {
    const e = (await host.run("b", { mode }).catch((x) => x)) as { reason?: string };
    expect(e.reason, mode).toBe("oversize");
  }
  await host.close();
});

it("a deadline beyond setTimeout's range does not fire at once", async () => {
  const host = await make();
  expect(await host.run("b", { mode: "sleep", ms: 50 }, { timeoutMs: 3e9 })).toBe("slept");
  await host.close();
});
