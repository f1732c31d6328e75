/** Assertions shared by the I/O tests. */
import { expect } from "vitest";
import { SandboxError } from "../../src/index.js";

/**
 * Awaits a promise that must reject with a SandboxError whose message does
 * not contain `hostPath` (no host path ever leaks); returns the error.
 */
export async function expectRejection(
  p: Promise<unknown>,
  hostPath: string,
): Promise<SandboxError> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(SandboxError);
    expect((err as Error).message).not.toContain(hostPath);
    return err as SandboxError;
  }
  throw new Error("expected a rejection");
}
