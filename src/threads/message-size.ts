/**
 * Sizing what a thread sent, before trusting it. A thread's
 * `resourceLimits` do not cover ArrayBuffers, so oversized messages are
 * caught by measuring what arrived.
 */
import { MessagePort } from "node:worker_threads";

/**
 * A lower bound of the structured-clone size of `value`, stopping early once
 * over `limit` (or after `maxNodes` values: a huge graph counts as oversized).
 * Closes any `MessagePort` found (and calls `onPort`): a port smuggled into
 * the host must not keep a channel open, nor be passed on.
 */
export function measureMessage(
  value: unknown,
  limit: number,
  maxNodes = 100_000,
  onPort?: () => void,
): number {
  try {
    return measure(value, limit, maxNodes, onPort);
  } catch {
    // Whatever it was (more keys than V8 will list, …), it is too big.
    return limit + 1;
  }
}

function measure(
  value: unknown,
  limit: number,
  maxNodes: number,
  onPort: (() => void) | undefined,
): number {
  let bytes = 0;
  let nodes = 0;
  const seen = new Set<object>();
  const stack: unknown[] = [value];
  while (stack.length > 0 && bytes <= limit) {
    const v = stack.pop();
    if (++nodes > maxNodes) return limit + 1;
    if (typeof v === "string") {
      bytes += v.length * 2;
      continue;
    }
    if (typeof v !== "object" || v === null) {
      bytes += 8;
      continue;
    }
    if (seen.has(v)) continue;
    seen.add(v);
    // Every object costs something, even an empty one (a million empty
    // Maps are a big message: found by an adversarial review).
    bytes += 16;
    if (ArrayBuffer.isView(v)) bytes += v.buffer.byteLength;
    else if (v instanceof ArrayBuffer || v instanceof SharedArrayBuffer) bytes += v.byteLength;
    else if (v instanceof MessagePort) {
      v.close();
      onPort?.();
    } else if (v instanceof Map) {
      for (const [k, x] of v) stack.push(k, x);
    } else if (v instanceof Set) {
      for (const x of v) stack.push(x);
    } else if (v instanceof String) {
      // A boxed string lists one key per character: count its text instead
      // (found by an adversarial review: 17 million keys crashed the host).
      bytes += v.length * 2;
    } else if (Array.isArray(v)) {
      // Index by index, stopping at the budget (keys of a huge array would
      // all be made first).
      for (let i = 0; i < v.length && nodes + stack.length <= maxNodes; i++) {
        bytes += 16;
        stack.push(v[i]);
      }
      if (v.length > maxNodes) return limit + 1;
    } else {
      for (const k of Object.keys(v)) {
        bytes += 16 + k.length * 2;
        stack.push((v as Record<string, unknown>)[k]);
      }
    }
  }
  return bytes;
}
