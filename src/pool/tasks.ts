/**
 * What crosses between the host and a pool thread: the task arguments (a
 * serialized policy plus plain values) and the outcome. Errors travel as
 * {@link SerializedSandboxError} so they arrive with their class intact.
 */
import type { SerializedSandboxError } from "../errors/index.js";
import type { PolicyWire } from "../sandbox/policy-wire.js";
import type { GrepRequest } from "./grep.js";

/** Names of the pool thread's task functions (its module's exports). */
export type TaskName = "listFiles" | "grep";

/** Arguments of the `listFiles` task. */
export interface ListFilesTask {
  policy: PolicyWire;
  /** Canonical virtual path. */
  path: string;
  pattern: string;
}

/** Arguments of the `grep` task. */
export interface GrepTask {
  policy: PolicyWire;
  request: GrepRequest;
}

/** A task's outcome: its value, or the mountbox error it ended with. */
export type TaskOutcome<T> = { ok: true; value: T } | { ok: false; error: SerializedSandboxError };
