/**
 * Setup-time check of every worker's `sandbox` key (issue 20): a worker's
 * sandbox is derived from its caller's (the host's sandbox for a top-level
 * run), so a key that asks for more than some caller can give fails only
 * when that call happens — as a `SandboxPermissionEscalationError` deep in a
 * run that names no worker. `createHost` and `loadProgram` walk every path a
 * worker can actually be called along and report each such key up front.
 *
 * What "can be called along" means: every worker can be run by `host.run`
 * (so each is derived from the host's sandbox), and a worker may call each
 * of its `delegates`; a path counts only while every worker on it gets its
 * sandbox, and only up to `maxDepth` workers. The call site's own narrowing
 * (`ctx.delegate(…, { sandbox })`) is the caller's code, not configuration,
 * and is not checked here.
 */
import { ConfigError, escapeControl, SandboxError } from "../errors/index.js";
import type { WorkerSandboxSpec, WorkerSpec } from "../host/host-types.js";
import { policyOf, type Sandbox } from "../sandbox/sandbox.js";
import { applyWorkerSandbox } from "./worker-sandbox.js";

/** One worker `sandbox` key that can never be satisfied along some path. */
export interface WorkerSandboxIssue {
  /** The worker whose key it is. */
  worker: string;
  /** The key inside the worker's `sandbox` (camelCase), e.g. `["allowWrite", 0]`; `[]` for the whole key. */
  key: (string | number)[];
  /** What is wrong, naming the worker and the delegation path. */
  message: string;
}

/**
 * Walks every delegation path (breadth first, so each issue names the
 * shortest path it shows up on) and returns each failing key once.
 */
export function checkWorkerSandboxes(
  root: Sandbox,
  workers: ReadonlyMap<string, WorkerSpec>,
  maxDepth: number,
): WorkerSandboxIssue[] {
  return walkWorkers(root, workers, maxDepth).issues;
}

/**
 * Every way a worker can be reached — from a top-level run, then along each
 * worker's `delegates` up to `maxDepth` workers — with the sandbox it gets
 * there; breadth first, each (worker, sandbox) once. A worker whose key
 * fails on a path is not reached along it.
 */
export function listWorkerReaches(
  root: Sandbox,
  workers: ReadonlyMap<string, WorkerSpec>,
  maxDepth: number,
): WorkerReach[] {
  return walkWorkers(root, workers, maxDepth).reaches;
}

/** One way a worker can be reached: the path from a top-level run and the sandbox it gets there. */
export interface WorkerReach {
  /** The workers from the top-level run to this one (this one last). */
  chain: string[];
  /** Its sandbox there. */
  sandbox: Sandbox;
}

function walkWorkers(
  root: Sandbox,
  workers: ReadonlyMap<string, WorkerSpec>,
  maxDepth: number,
): { issues: WorkerSandboxIssue[]; reaches: WorkerReach[] } {
  const issues: WorkerSandboxIssue[] = [];
  const reaches: WorkerReach[] = [];
  const reported = new Set<string>();
  const report = (found: WorkerSandboxIssue[]) => {
    for (const i of found) {
      const id = JSON.stringify([i.worker, i.key]);
      if (reported.has(id)) continue;
      reported.add(id);
      issues.push(i);
    }
  };
  // A worker reached again from a sandbox it was already reached from gets
  // the same sandbox: listed on this path too, but not walked again.
  const seen = new Map<string, Sandbox | undefined>();
  let level: WorkerReach[] = [];
  const reach = (name: string, parent: Sandbox, chain: string[]) => {
    const spec = workers.get(name);
    if (!spec) return;
    const id = `${name}\0${policyKey(parent)}`;
    if (seen.has(id)) {
      const sandbox = seen.get(id);
      if (sandbox !== undefined) reaches.push({ chain, sandbox });
      return;
    }
    const result = deriveFor(name, spec.sandbox, parent, chain);
    seen.set(id, "issues" in result ? undefined : result.sandbox);
    if ("issues" in result) report(result.issues);
    else level.push({ chain, sandbox: result.sandbox });
  };
  for (const name of workers.keys()) reach(name, root, [name]);
  reaches.push(...level);
  for (let depth = 2; depth <= maxDepth && level.length > 0; depth++) {
    const callers = level;
    level = [];
    for (const caller of callers) {
      const spec = workers.get(caller.chain.at(-1)!);
      for (const callee of new Set(spec?.delegates ?? []))
        reach(callee, caller.sandbox, [...caller.chain, callee]);
    }
    reaches.push(...level);
  }
  return { issues, reaches };
}

/** The areas a sandbox grants, as a key (the mount table is the host's, shared). */
function policyKey(sandbox: Sandbox): string {
  const p = policyOf(sandbox);
  return JSON.stringify([p.read, p.write, p.secrets.entries]);
}

/** The worker's sandbox on this path, or the issues of each key that fails there. */
function deriveFor(
  worker: string,
  spec: WorkerSandboxSpec | undefined,
  parent: Sandbox,
  chain: string[],
): { sandbox: Sandbox } | { issues: WorkerSandboxIssue[] } {
  try {
    return { sandbox: applyWorkerSandbox(parent, spec) };
  } catch (err) {
    // A malformed key is wrong on every path: its own issues, as they are.
    if (err instanceof ConfigError)
      return {
        issues: err.issues.map((i) => ({
          worker,
          key: i.path[0] === "sandbox" ? i.path.slice(1) : i.path,
          message: i.message,
        })),
      };
    if (!(err instanceof SandboxError)) throw err;
    const found = locate(parent, spec ?? {});
    const failures: Failure[] =
      found.length > 0 ? found : [{ key: [], error: err, on: parent, access: undefined }];
    return {
      issues: failures.map((f) => ({ worker, key: f.key, message: describe(worker, chain, f) })),
    };
  }
}

/** One key that fails on its own, and what it asked for. */
interface Failure {
  key: (string | number)[];
  error: SandboxError;
  /** The sandbox it was tried on: the one received, after the worker's own `restrict` if any. */
  on: Sandbox;
  /** That worker's own `restrict`, when it was applied first. */
  restricted?: string;
  /** The access the key asks for at `entry` (absent for `readonly: false` and other errors). */
  access: "read" | "write" | undefined;
  /** The path it asks for; for `readonly: false`, the `restrict` it applies under. */
  entry?: string;
}

/**
 * Finds the keys that fail, each tried alone in the order `applyWorkerSandbox`
 * applies them (`restrict`, then `readonly`, then each allow-list entry).
 */
function locate(parent: Sandbox, spec: WorkerSandboxSpec): Failure[] {
  const out: Failure[] = [];
  let on = parent;
  const attempt = (
    key: (string | number)[],
    access: Failure["access"],
    entry: string | undefined,
    fn: () => Sandbox,
  ): Sandbox | undefined => {
    try {
      return fn();
    } catch (err) {
      if (!(err instanceof SandboxError)) throw err;
      out.push({
        key,
        error: err,
        on,
        access,
        ...(entry === undefined ? {} : { entry }),
        ...(on !== parent && spec.restrict !== undefined ? { restricted: spec.restrict } : {}),
      });
      return undefined;
    }
  };
  const narrowing =
    spec.allowRead !== undefined || spec.allowWrite !== undefined || spec.inherit !== undefined;
  let s: Sandbox | undefined = parent;
  if (spec.restrict !== undefined) {
    const r = spec.restrict;
    s = attempt(["restrict"], "read", r, () => parent.restrict({ restrict: r }));
    if (!s) return out;
  }
  const base = s;
  // `readonly: false` asserts writes remain under `restrict` (the received
  // sandbox is named, with the restrict it applies).
  if (spec.readonly === false)
    attempt(["readonly"], undefined, spec.restrict, () =>
      base.derive({ readonly: false, inherit: true }),
    );
  on = base;
  const secrets = spec.secrets;
  if (secrets !== undefined)
    attempt(["secrets"], undefined, undefined, () => base.restrict({ secrets }));
  if (!narrowing) return out;
  for (const [k, access] of [
    ["allowWrite", "write"],
    ["allowRead", "read"],
  ] as const) {
    const v = spec[k];
    if (v === undefined) continue;
    const list = typeof v === "string" ? [v] : v;
    list.forEach((e, i) => {
      const key = typeof v === "string" ? [k] : [k, i];
      attempt(key, access, e, () => base.derive({ [k]: [e] }));
    });
  }
  return out;
}

/** The message of one failing key: the worker, the path, what it asked, why it cannot have it. */
function describe(worker: string, chain: string[], f: Failure): string {
  const name = `worker '${escapeControl(worker)}'`;
  const caller = chain.length > 1 ? escapeControl(chain.at(-2)!) : undefined;
  const received = caller
    ? `along ${chain.map((w) => escapeControl(w)).join(" → ")}, the sandbox of its caller '${caller}'`
    : "the host's sandbox";
  const source =
    f.restricted === undefined
      ? received
      : `${received}, restricted by its own 'restrict: ${escapeControl(f.restricted)}',`;
  const parent = f.on;
  const fix =
    f.restricted !== undefined
      ? "change this key, or the worker's 'restrict'"
      : caller
        ? `remove '${escapeControl(worker)}' from the delegates of '${caller}', or change this key`
        : "change this key, or widen the host's sandbox";
  if (f.key[0] === "readonly") {
    const under = f.entry === undefined ? "" : ` under '${escapeControl(f.entry)}'`;
    return `${name} asks for 'readonly: false', but ${source} can write nothing${under} (${writes(parent)}); ${fix}`;
  }
  if (f.access === undefined || f.entry === undefined || f.error.code !== "permission_escalation") {
    // A key that is wrong in itself (a relative path, one climbing above '/').
    return `${name}: ${firstLine(f.error.message)}`;
  }
  const p = policyOf(parent);
  const v = p.normalize(f.entry) ?? f.entry;
  const shown = `'${escapeControl(v)}'`;
  const why =
    f.access === "read"
      ? `cannot read ${shown} (${reads(parent)})`
      : whyNotWritable(parent, v, shown);
  return `${name} can never get ${f.access} access to ${shown}: ${source} ${why}; ${fix}`;
}

/** Why `parent` cannot write `v` (read-only, protected, or outside its write areas). */
function whyNotWritable(parent: Sandbox, v: string, shown: string): string {
  const denial = policyOf(parent).deny(v, "write", false);
  if (denial === "readonly") return `can only read ${shown} (${writes(parent)})`;
  if (denial === "protected") return `protects ${shown} (writes there are refused)`;
  if (denial === undefined)
    return `cannot write ${shown}: a link there leads where it cannot write`;
  return `cannot write ${shown} (${writes(parent)})`;
}

function reads(s: Sandbox): string {
  const roots = s.readableRoots;
  return roots.length === 0 ? "it reads nothing" : `it reads only ${roots.join(", ")}`;
}

function writes(s: Sandbox): string {
  const roots = s.writableRoots;
  if (roots.length === 0) return "it writes nowhere";
  const except = policyOf(s).readOnlyInside();
  return `it writes only under ${roots.join(", ")}${except.length ? ` (read-only inside: ${except.join(", ")})` : ""}`;
}

function firstLine(message: string): string {
  return message.split("\n")[0]!;
}
