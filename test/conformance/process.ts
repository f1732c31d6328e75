/**
 * Drives `ctx.sandbox` inside a real agent *process* (`isolation:
 * "process"`, under bubblewrap) for the conformance suite: the relay
 * fixture runs with the network and takes its calls over loopback.
 */
import { realpathSync } from "node:fs";
import { createServer, type Socket } from "node:net";
import { deserialize, serialize } from "node:v8";
import { expect } from "vitest";
import { findBwrap } from "../../dist/src/os/bwrap-binary.js";
import { checkLimits } from "../../dist/src/os/limits.js";
import { runAgentProcess } from "../../dist/src/processes/agent-process.js";
import type { ProcessConfinement } from "../../dist/src/processes/process-code.js";
import { policyOf } from "../../dist/src/sandbox/sandbox.js";
import type { Sandbox } from "../../src/index.js";
import { SandboxError } from "../../src/index.js";
import { SANDBOX_OPS } from "../../src/port/protocol.js";
import type { SandboxLike } from "./suite.js";
import { fixture } from "./thread.js";

/** The confinement agent processes of a host here run under. */
export async function findConfinement(sandbox: Sandbox): Promise<ProcessConfinement> {
  const found = await findBwrap(policyOf(sandbox as never), undefined);
  if ("why" in found) throw new Error(`bubblewrap cannot be used here: ${found.why}`);
  return {
    bwrap: found.path,
    nodePath: realpathSync(process.execPath),
    limits: checkLimits(undefined),
  };
}

/**
 * Starts the relay fixture in a real confined process and returns a
 * `SandboxLike` whose every call runs as `ctx.sandbox.<method>` inside it.
 */
export async function startProcessRelay(sandbox: Sandbox): Promise<{
  sandbox: SandboxLike;
  stop(): Promise<unknown>;
}> {
  const server = createServer();
  const connected = new Promise<Socket>((resolve) => server.once("connection", resolve));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  const done = runAgentProcess({
    module: fixture("relay-process-worker.js"),
    input: { port },
    sandbox: sandbox as never,
    network: true,
    timeoutMs: 60_000,
    confinement: await findConfinement(sandbox),
  });
  done.catch(() => {});
  const socket = await Promise.race([
    connected,
    done.then(() => {
      throw new Error("the relay ended before it connected");
    }),
  ]);
  const pending = new Map<number, { resolve(v: unknown): void; reject(e: unknown): void }>();
  let next = 0;
  let buffered = Buffer.alloc(0);
  socket.on("data", (chunk: Buffer) => {
    buffered = Buffer.concat([buffered, chunk]);
    while (buffered.length >= 4 && buffered.length >= 4 + buffered.readUInt32BE(0)) {
      const n = buffered.readUInt32BE(0);
      const m = deserialize(buffered.subarray(4, 4 + n)) as {
        id: number;
        ok: boolean;
        value?: unknown;
        error?: { classKept: boolean };
      };
      buffered = buffered.subarray(4 + n);
      const p = pending.get(m.id);
      pending.delete(m.id);
      if (!p) continue;
      if (m.ok) p.resolve(m.value);
      else {
        expect(m.error?.classKept, "the error's class held inside the process").toBe(true);
        p.reject(SandboxError.fromJSON(m.error));
      }
    }
  });
  const send = (value: unknown): void => {
    const body = serialize(value);
    const head = Buffer.alloc(4);
    head.writeUInt32BE(body.length);
    socket.write(Buffer.concat([head, body]));
  };
  const call =
    (method: string) =>
    (...args: unknown[]): Promise<never> =>
      new Promise((resolve, reject) => {
        const id = next++;
        pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
        let n = args.length;
        while (n > 0 && args[n - 1] === undefined) n--;
        send({ id, method, args: args.slice(0, n) });
      });
  return {
    sandbox: Object.fromEntries(SANDBOX_OPS.map((m) => [m, call(m)])) as unknown as SandboxLike,
    async stop() {
      send({ id: -1, method: "__done", args: [] });
      try {
        return await done;
      } finally {
        server.close();
      }
    },
  };
}
