/**
 * The encoding of what an agent process sends its host: plain data only,
 * read by a small decoder that prices every value as it builds it. A
 * process writes raw bytes, and V8's own format lets a few of them cost the
 * host gigabytes of heap or minutes of time (empty Maps, sparse array
 * lengths, RegExps compiled on arrival, hash collisions among numeric Map
 * keys, reads that fall out of step with a checker: found by two
 * adversarial reviews) — so `v8.deserialize` never sees an agent's bytes.
 * The host's own messages to a process stay in V8's format (the host is
 * trusted there).
 *
 * Values: `undefined`, `null`, booleans, numbers, strings (lone surrogates
 * kept), BigInts, Dates, `Uint8Array`/`Buffer` (as `Uint8Array`), the other
 * typed arrays, `ArrayBuffer`s, Errors (name, message, stack), arrays (holes
 * kept) and objects (own enumerable string keys, as structured clone takes
 * them). Not sent: functions, symbols, Maps, Sets, RegExps, values that
 * contain themselves — `encode` throws a `DataCloneError`-like TypeError,
 * as `postMessage` does for what it cannot clone.
 *
 * Used on both sides: it imports nothing but Node's own modules.
 */

/**
 * Most work one message may cost the host to decode, in weighted values
 * (≈ 0.5 s of the host's time at worst, measured: objects of many keys are
 * the slowest per value).
 */
export const MAX_DECODED_VALUES = 1_000_000;
/** Most estimated heap one decoded message may take. */
export const MAX_DECODED_HEAP = 256 * 1024 * 1024;
/** Deepest nesting sent or read. */
export const MAX_DEPTH = 1000;
/** Longest BigInt, in bytes of magnitude. */
export const MAX_BIGINT_BYTES = 64 * 1024;

/** Tags, one byte before each value. */
export const T = {
  undefined: 0,
  null: 1,
  false: 2,
  true: 3,
  int: 4,
  double: 5,
  string: 6,
  utf16: 7,
  bytes: 8,
  typed: 9,
  buffer: 10,
  array: 11,
  object: 12,
  date: 13,
  bigint: 14,
  hole: 15,
  error: 16,
} as const;

/** The typed arrays, by their code (Uint8Array is `bytes`). */
export const TYPED = [
  Int8Array,
  Uint8ClampedArray,
  Int16Array,
  Uint16Array,
  Int32Array,
  Uint32Array,
  Float32Array,
  Float64Array,
  BigInt64Array,
  BigUint64Array,
] as const;

/** The errors structured clone keeps by name (a null prototype: no `constructor`, no `toString`). */
export const ERRORS: Record<string, ErrorConstructor> = {
  __proto__: null as never,
  Error,
  EvalError,
  RangeError,
  ReferenceError,
  SyntaxError,
  TypeError,
  URIError,
};

/** Thrown by {@link decode} for a message that is refused; its text says why. */
export class CodecError extends Error {}
