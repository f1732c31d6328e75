/**
 * One error family for everything mountbox refuses or fails at, and its one
 * import point: the classes and codes (`error-classes.ts`), the messages
 * (`error-messages.ts`) and the text helpers they use (`escape-text.ts`).
 *
 * Every error has a stable snake_case `code`, the *virtual* `path` it concerns
 * (never a host path), `name` equal to its class name, and a message written
 * for an LLM: what was refused, what IS allowed, and what to do next.
 * `toJSON()` / `SandboxError.fromJSON()` carry errors across a thread boundary
 * with their class intact.
 */
export * from "./error-classes.js";
export * from "./error-messages.js";
export * from "./escape-text.js";
export * from "./git-messages.js";
