/**
 * The encoding of what an agent process sends its host — plain data only,
 * priced as the host decodes it. The format and its limits are in
 * `plain-format.ts`, the process's encoder in `plain-encode.ts`, the host's
 * decoder in `plain-decode.ts`; this module is what both sides import.
 * Used on both sides: it imports nothing but its own files.
 */
export { decode } from "./plain-decode.js";
export { encode } from "./plain-encode.js";
export { CodecError, MAX_DECODED_HEAP, MAX_DECODED_VALUES, MAX_DEPTH } from "./plain-format.js";
