/**
 * Helpers for tests that drive real agent threads. Threads load the built JS
 * in dist/ (`new Worker()` bypasses vitest's transform), so `npm test` builds
 * first; these helpers fail loudly when the build is missing.
 */
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { MessageChannel } from "node:worker_threads";
import { expect } from "vitest";
import { createSandbox as createBuiltSandbox } from "../../dist/src/index.js";
import { runAgentThread } from "../../dist/src/threads/agent-thread.js";
import type { AgentThreadResult } from "../../dist/src/threads/thread-options.js";
import type { Sandbox, SandboxConfig } from "../../src/index.js";
import { SandboxError } from "../../src/index.js";
import { SANDBOX_OPS } from "../../src/port/protocol.js";
import type { SandboxLike } from "./suite.js";

/** Absolute path of a fixture worker module. */
export function fixture(name: string): string {
  return fileURLToPath(new URL(`../fixtures/${name}`, import.meta.url));
}

/**
 * `createSandbox` from dist/: the built runtime only accepts sandboxes made
 * by the built sandbox module (its policies live in that module's WeakMap).
 */
export const createSandboxForThreads = createBuiltSandbox as unknown as (
  config: SandboxConfig,
) => Sandbox;

/** Throws unless dist/ holds the built thread entry. */
export function assertBuilt(): void {
  const entry = fileURLToPath(new URL("../../dist/workers/entry.js", import.meta.url));
  if (!existsSync(entry))
    throw new Error("dist/ is missing: run `npx tsc -p tsconfig.build.json` (npm test does).");
}

/**
 * Starts the relay fixture in a real hardened thread and returns a
 * `SandboxLike` whose every call runs as `ctx.sandbox.<method>` inside it.
 * Errors come back rebuilt by class; the relay also reports whether the class
 * held inside the thread, which is asserted here.
 */
export function startRelay(sandbox: Sandbox): {
  sandbox: SandboxLike;
  stop(): Promise<AgentThreadResult>;
} {
  const { port1, port2 } = new MessageChannel();
  const done = runAgentThread({
    module: fixture("relay-worker.js"),
    input: { port: port2 },
    transferList: [port2],
    sandbox: sandbox as never,
    timeoutMs: 60_000,
  });
  const pending = new Map<number, { resolve(v: unknown): void; reject(e: unknown): void }>();
  let next = 0;
  port1.on("message", (m: { id: number; ok: boolean; value?: unknown; error?: unknown }) => {
    const p = pending.get(m.id);
    pending.delete(m.id);
    if (!p) return;
    if (m.ok) p.resolve(m.value);
    else {
      const e = m.error as { classKept: boolean };
      expect(e.classKept, "the error's class held inside the thread").toBe(true);
      p.reject(SandboxError.fromJSON(m.error));
    }
  });
  const call =
    (method: string) =>
    (...args: unknown[]): Promise<never> =>
      new Promise((resolve, reject) => {
        const id = next++;
        pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
        port1.postMessage({ id, method, args: trimUndefined(args) });
      });
  const proxy = Object.fromEntries(SANDBOX_OPS.map((m) => [m, call(m)])) as unknown as SandboxLike;
  return {
    sandbox: proxy,
    async stop() {
      port1.postMessage({ id: -1, method: "__done", args: [] });
      const r = await done;
      port1.close();
      return r;
    },
  };
}

function trimUndefined(args: unknown[]): unknown[] {
  let n = args.length;
  while (n > 0 && args[n - 1] === undefined) n--;
  return args.slice(0, n);
}
