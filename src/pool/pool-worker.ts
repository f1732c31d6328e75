/**
 * The pool thread's entry (piscina loads it by file name; each export is a
 * task). It trusts its caller, the host: the policy arrives serialized, is
 * rebuilt — and refused unless it resolves exactly as the host's — and then
 * the same code as in-process runs with it.
 */
import { SandboxError, wrapFsError } from "../errors/index.js";
import { listFiles as listWithPolicy } from "../sandbox/io-list.js";
import { deserializePolicy } from "../sandbox/policy-wire.js";
import { type GrepResult, runGrep } from "./grep.js";
import type { GrepTask, ListFilesTask, TaskOutcome } from "./tasks.js";

/** Task: readable files under a path matching a glob (as `Sandbox.listFiles`). */
export async function listFiles(task: ListFilesTask): Promise<TaskOutcome<string[]>> {
  return settle("listFiles", task.path, () =>
    listWithPolicy(deserializePolicy(task.policy), task.path, task.pattern),
  );
}

/** Task: a grep search (see `runGrep`). */
export async function grep(task: GrepTask): Promise<TaskOutcome<GrepResult>> {
  return settle("grep", task.request.path, () =>
    runGrep(deserializePolicy(task.policy), task.request),
  );
}

/** Runs a task; any failure becomes a mountbox error without a host path. */
async function settle<T>(op: string, path: string, run: () => Promise<T>): Promise<TaskOutcome<T>> {
  try {
    return { ok: true, value: await run() };
  } catch (err) {
    const e = err instanceof SandboxError ? err : wrapFsError(err, op, path);
    return { ok: false, error: e.toJSON() };
  }
}
