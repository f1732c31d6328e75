/**
 * The port's whole-file reads (`readFile`, `readBytes`): capped by default
 * and counted against the agent's byte budget before a byte is loaded.
 *
 * The host's own `Sandbox` calls have no cap unless a mount sets
 * `maxFileBytes`; an agent's read through its port gets
 * {@link DEFAULT_PORT_MAX_FILE_BYTES} where no mount sets one, so that one
 * agent's reads of a huge file are refused, not loaded four at a time. Under
 * the cap a read first waits until its size fits the agent's bytes in flight
 * (see `maxBytesInFlight`): the budget counts what is about to be loaded,
 * not only the replies already made.
 */
import type { ReadOptions } from "../sandbox/types.js";
import { type Handler, pathsOnly } from "./arg-checks.js";

/**
 * Largest file an agent reads whole through its port when no mount sets
 * `maxFileBytes` (`max_file_bytes`): 64 MiB. A mount's own cap, larger or
 * smaller, wins.
 */
export const DEFAULT_PORT_MAX_FILE_BYTES = 64 * 1024 * 1024;

/** The port's limits of one read; `factor` is bytes reserved per file byte. */
function portLimits(reserve: (bytes: number) => Promise<void>, factor: number): ReadOptions {
  return {
    defaultMaxBytes: DEFAULT_PORT_MAX_FILE_BYTES,
    beforeLoad: (size) => reserve(size * factor),
  };
}

/** Node may hand back a view into a shared pool: cloning the view would send the whole pool. */
function exactBytes(b: Uint8Array): Uint8Array {
  const whole =
    b.byteOffset === 0 && b.byteLength === b.buffer.byteLength && b.buffer instanceof ArrayBuffer;
  return whole && Object.getPrototypeOf(b) === Uint8Array.prototype ? b : new Uint8Array(b);
}

/** `readFile` and `readBytes` through the port. */
export const READ_OPS = {
  // A string reply is measured at 2 bytes per character: reserve as much.
  readFile: {
    check: pathsOnly(1),
    run: (sb, a, _signal, reserve) => sb.readFile(a[0] as string, portLimits(reserve, 2)),
  },
  readBytes: {
    check: pathsOnly(1),
    run: async (sb, a, _signal, reserve) =>
      exactBytes(await sb.readBytes(a[0] as string, portLimits(reserve, 1))),
  },
} satisfies Record<string, Handler>;
