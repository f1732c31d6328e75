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
import { FileTooLargeError, quotePath, wrapFsError } from "../errors/index.js";
import { readBytes } from "../sandbox/io-read.js";
import { policyOf, type Sandbox } from "../sandbox/sandbox.js";
import { type Handler, pathsOnly } from "./arg-checks.js";

/**
 * Largest file an agent reads whole through its port when no mount sets
 * `maxFileBytes` (`max_file_bytes`): 64 MiB. A mount's own cap, larger or
 * smaller, wins.
 */
export const DEFAULT_PORT_MAX_FILE_BYTES = 64 * 1024 * 1024;

/** Waits until `bytes` more fit the agent's byte budget; held until the reply is made. */
export type Reserve = (bytes: number) => Promise<void>;

const decoder = new TextDecoder("utf-8");

/** The refusal past the default cap: names it and says how to read a part. */
function tooLargeForPort(path: string, size: number, cap: number): FileTooLargeError {
  return new FileTooLargeError(
    `Cannot read ${quotePath(path)}: ${size} bytes is over the limit of ${cap} bytes for one whole-file read by an agent (no max_file_bytes is set for it).\nRead a part instead: search it with grep (it reads big files in chunks, up to its maxFileBytes), or run head, tail or sed on it if you have a shell; or ask for a larger max_file_bytes on its mount.`,
    path,
  );
}

/** Reads `path` whole through the port's limits; `factor` is bytes reserved per file byte. */
async function readForPort(
  sb: Sandbox,
  path: string,
  reserve: Reserve,
  factor: number,
): Promise<Uint8Array> {
  try {
    return await readBytes(policyOf(sb), path, {
      defaultCap: { bytes: DEFAULT_PORT_MAX_FILE_BYTES, tooLarge: tooLargeForPort },
      beforeLoad: (size) => reserve(size * factor),
    });
  } catch (err) {
    throw wrapFsError(err, "read", path);
  }
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
    run: async (sb, a, _signal, reserve) =>
      decoder.decode(await readForPort(sb, a[0] as string, reserve, 2)),
  },
  readBytes: {
    check: pathsOnly(1),
    run: async (sb, a, _signal, reserve) =>
      exactBytes(await readForPort(sb, a[0] as string, reserve, 1)),
  },
} satisfies Record<string, Handler>;
