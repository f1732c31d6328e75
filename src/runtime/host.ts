/**
 * The host (DESIGN §7): runs named workers, each agent in its own fresh
 * hardened thread, and serves their delegations. The host owns every
 * `Sandbox`; a callee's sandbox is derived from its caller's, narrowed by
 * the callee's configuration and then by the call site, so a delegation
 * chain can only shrink access.
 */
import { setMaxListeners } from "node:events";
import { existsSync, realpathSync } from "node:fs";
import { isAbsolute, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import {
  AgentThreadError,
  type ConfigIssue,
  configError,
  DelegationRefusedError,
  SandboxError,
} from "../errors.js";
import { createSandbox, Sandbox } from "../sandbox/sandbox.js";
import {
  type AgentThreadOptions,
  DEFAULT_RESOURCE_LIMITS,
  runAgentThread,
} from "./agent-thread.js";
import { EventHub } from "./event-hub.js";
import type { HostEvent, HostOptions, WorkerSpec } from "./host-types.js";
import { checkReadGrants, computeExecArgv, listThreadCodeFiles } from "./permissions.js";
import type { Attachment } from "./protocol.js";
import { SparePool } from "./spare-pool.js";
import { applyWorkerSandbox } from "./worker-sandbox.js";

/** Most attachments in one delegation, and their size caps. */
const MAX_ATTACHMENTS = 32;
const MAX_ATTACHMENT_BYTES = 16 * 1024 * 1024;
const MAX_ATTACHMENTS_TOTAL = 64 * 1024 * 1024;

/** Options of {@link Host.run}. */
export interface RunOptions {
  /** Aborts the agent and its whole delegation subtree. */
  signal?: AbortSignal;
  /** Deadline for the whole subtree (the smaller of this and the worker's). */
  timeoutMs?: number;
}

/** A running host; see {@link createHost}. */
export interface Host {
  /**
   * Runs worker `name` with `input` in a fresh thread and resolves with its
   * result.
   * @throws AgentThreadError (it failed), DelegationRefusedError (agent limit), SandboxError
   */
  run(name: string, input?: unknown, opts?: RunOptions): Promise<unknown>;
  /** Every event, as an async iterator (ends when the host closes). */
  readonly events: AsyncIterable<HostEvent>;
  /** Stops every agent, terminates spare threads; leaves no handles. */
  close(): Promise<void>;
}

interface Agent {
  id: string;
  worker: string;
  spec: WorkerSpec;
  sandbox: Sandbox;
  depth: number;
  deadline: number | undefined;
  controller: AbortController;
  /** Callees it is waiting on; while > 0 it does not count as running. */
  waiting: number;
  /** Attachment bytes it has handed to callees still running. */
  attachedBytes: number;
}

/**
 * Creates a host from options (or from `await loadProgram(dir)`). Options
 * are validated here; a bad one is a ConfigError naming its key.
 */
export async function createHost(options: HostOptions): Promise<Host> {
  const basePath = resolve(options.basePath ?? ".");
  const root = toSandbox(options.sandbox, basePath);
  const workers = checkWorkers(options.workers, basePath);
  const maxDepth = checkCount(options.maxDepth, 5, "maxDepth", 1);
  const maxAgents = checkCount(options.maxAgents, 32, "maxAgents", 1);
  const warm = checkCount(options.warmThreads, 0, "warmThreads", 0);
  // Fail fast on a module inside a sandbox folder (a thread could read the
  // sandbox behind the port's back).
  const modules = [...workers.values()].flatMap((w) =>
    w.module ? [w.module, ...(w.dependencies ?? [])] : [],
  );
  const grants = checkReadGrants([...listThreadCodeFiles(), ...modules], root);
  const pool =
    warm > 0
      ? new SparePool(warm, computeExecArgv({ readPaths: grants }), DEFAULT_RESOURCE_LIMITS)
      : undefined;

  const hub = new EventHub(options.onEvent);
  const running = new Set<Promise<unknown>>();
  const live = new Set<Agent>();
  let active = 0;
  let nextId = 1;
  let closed = false;

  const deadlineOf = (
    parent: number | undefined,
    ...ms: (number | undefined)[]
  ): number | undefined => {
    let d = parent;
    for (const m of ms)
      if (m !== undefined && (d === undefined || Date.now() + m < d)) d = Date.now() + m;
    return d;
  };

  const admit = (worker: string): void => {
    if (closed) throw new DelegationRefusedError("The host is closed.");
    if (active >= maxAgents) {
      throw new DelegationRefusedError(
        `Cannot start '${worker}': ${maxAgents} agents are already running (maxAgents). Wait for one to finish, or raise maxAgents.`,
      );
    }
  };

  const runAgent = async (
    agent: Agent,
    input: unknown,
    parentId: string | undefined,
    attachments?: Attachment[],
  ): Promise<unknown> => {
    admit(agent.worker);
    active++;
    live.add(agent);
    const started = Date.now();
    hub.emit({
      type: "agent_started",
      agentId: agent.id,
      worker: agent.worker,
      depth: agent.depth,
      ...(parentId ? { parentId } : {}),
      time: started,
    });
    try {
      if (!agent.spec.module) {
        throw new AgentThreadError(
          "not_runnable",
          `Worker '${agent.worker}' has no module: LLM workers need a model adapter, which this release does not include.`,
        );
      }
      const opts: AgentThreadOptions = {
        module: agent.spec.module,
        input,
        sandbox: agent.sandbox,
        signal: agent.controller.signal,
        ...(agent.spec.dependencies ? { allowRead: agent.spec.dependencies } : {}),
        onDelegate: (name, childInput, callOpts) => delegate(agent, name, childInput, callOpts),
        onOperation: (op, path, error) => {
          const time = Date.now();
          const p = error?.path ?? path;
          hub.emit({
            type: "operation",
            agentId: agent.id,
            op,
            ...(p ? { path: p } : {}),
            ok: !error,
            time,
          });
          if (error && isDenial(error)) {
            hub.emit({
              type: "denial",
              agentId: agent.id,
              op,
              ...(p ? { path: p } : {}),
              code: error.code,
              message: error.message,
              time,
            });
          }
        },
      };
      if (agent.deadline !== undefined) opts.timeoutMs = Math.max(1, agent.deadline - Date.now());
      if (agent.spec.maxOldGenerationSizeMb !== undefined) {
        opts.resourceLimits = { maxOldGenerationSizeMb: agent.spec.maxOldGenerationSizeMb };
      } else if (pool) {
        const spare = pool.take();
        if (spare) opts.spare = spare;
      }
      if (attachments) opts.attachments = attachments;
      const { value } = await runAgentThread(opts);
      hub.emit({
        type: "agent_finished",
        agentId: agent.id,
        worker: agent.worker,
        durationMs: Date.now() - started,
        time: Date.now(),
      });
      return value;
    } catch (err) {
      const e = describeFailure(agent.worker, err);
      hub.emit({
        type: "agent_failed",
        agentId: agent.id,
        worker: agent.worker,
        reason: e instanceof AgentThreadError ? e.reason : e.code,
        message: e.message,
        durationMs: Date.now() - started,
        time: Date.now(),
      });
      throw e;
    } finally {
      active--;
      live.delete(agent);
      // Whatever happened, nothing below this agent outlives it.
      agent.controller.abort();
    }
  };

  const delegate = async (
    caller: Agent,
    name: string,
    input: unknown,
    raw: Record<string, unknown>,
  ): Promise<unknown> => {
    const allowed = caller.spec.delegates ?? [];
    if (!allowed.includes(name)) {
      throw new DelegationRefusedError(
        `Worker '${caller.worker}' may not delegate to '${name.slice(0, 100)}'. It may call: ${allowed.length ? allowed.join(", ") : "no workers"}.`,
      );
    }
    const spec = workers.get(name)!;
    if (caller.depth + 1 > maxDepth) {
      throw new DelegationRefusedError(
        `Cannot delegate to '${name}': the chain would be ${caller.depth + 1} agents deep (maxDepth ${maxDepth}). Do the work here, or return to your caller.`,
      );
    }
    const callOpts = checkCallOptions(raw);
    const sandbox = applyWorkerSandbox(
      applyWorkerSandbox(caller.sandbox, spec.sandbox),
      callOpts.sandbox,
    );
    // A caller waiting on its callees does not hold a slot they need: it
    // gives its own slot back once, however many callees it waits on.
    if (caller.waiting++ === 0) active--;
    let charged = 0;
    try {
      admit(name); // before any costly work (attachments)
      const read = await readAttachments(caller, callOpts.attachments);
      charged = read.charged;
      const child: Agent = {
        id: `a${nextId++}`,
        worker: name,
        spec,
        sandbox,
        depth: caller.depth + 1,
        deadline: deadlineOf(caller.deadline, spec.timeoutMs, callOpts.timeoutMs),
        controller: linkedController(caller.controller.signal),
        waiting: 0,
        attachedBytes: 0,
      };
      return await runAgent(child, input, caller.id, read.attachments);
    } finally {
      caller.attachedBytes -= charged;
      if (--caller.waiting === 0) active++;
    }
  };

  return {
    async run(name, input, opts = {}) {
      const spec = workers.get(name);
      if (!spec) {
        throw new DelegationRefusedError(
          `No worker named '${String(name).slice(0, 100)}'. Workers: ${[...workers.keys()].join(", ") || "none"}.`,
        );
      }
      opts.signal?.throwIfAborted();
      const controller = linkedController(opts.signal);
      const agent: Agent = {
        id: `a${nextId++}`,
        worker: name,
        spec,
        sandbox: applyWorkerSandbox(root, spec.sandbox),
        depth: 1,
        deadline: deadlineOf(undefined, spec.timeoutMs, opts.timeoutMs),
        controller,
        waiting: 0,
        attachedBytes: 0,
      };
      const p = runAgent(agent, input, undefined);
      running.add(p);
      const done = () => running.delete(p);
      p.then(done, done);
      return p;
    },
    events: hub,
    async close() {
      if (closed) return;
      closed = true;
      for (const a of live) a.controller.abort(new Error("host closed"));
      await Promise.allSettled([...running]);
      await pool?.close();
      hub.end();
    },
  };
}

/**
 * Names the worker in a failure, so a chain reads "Worker 'a' failed: Worker
 * 'b' failed: …". A worker that threw a mountbox error keeps it as `cause`.
 */
function describeFailure(worker: string, err: unknown): SandboxError {
  if (!(err instanceof AgentThreadError)) {
    return err instanceof SandboxError
      ? err
      : new AgentThreadError("crashed", `Worker '${worker}' could not run.`);
  }
  if (err.message.startsWith(`Worker '${worker}'`)) return err;
  const cause = err.cause;
  const message =
    err.reason === "threw" && cause instanceof Error
      ? `Worker '${worker}' failed: ${cause instanceof SandboxError ? "" : `${cause.name}: `}${cause.message}`
      : err.message.replace(/^The agent('s)?/, `Worker '${worker}'$1`);
  return new AgentThreadError(
    err.reason,
    message,
    { stdout: err.stdout, stderr: err.stderr },
    cause,
  );
}

function isDenial(e: SandboxError): boolean {
  return (
    e.code === "path_not_in_sandbox" ||
    e.code === "path_not_writable" ||
    e.code === "suffix_not_allowed" ||
    e.code === "file_too_large" ||
    e.code === "invalid_path"
  );
}

/** An AbortController that aborts when `parent` does. */
function linkedController(parent: AbortSignal | undefined): AbortController {
  const c = new AbortController();
  // Each callee listens on its caller's signal; many callees are normal.
  setMaxListeners(0, c.signal);
  if (parent) {
    if (parent.aborted) c.abort(parent.reason);
    else {
      const onAbort = () => c.abort(parent.reason);
      parent.addEventListener("abort", onAbort, { once: true });
      c.signal.addEventListener("abort", () => parent.removeEventListener("abort", onAbort), {
        once: true,
      });
    }
  }
  return c;
}

function toSandbox(s: HostOptions["sandbox"], basePath: string): Sandbox {
  if (s instanceof Sandbox) return s;
  // No sandbox configured: no worker has any file access.
  if (s === undefined) return createSandbox({ paths: {} });
  return createSandbox(s, { basePath });
}

function checkCount(v: unknown, dflt: number, key: string, min: number): number {
  if (v === undefined) return dflt;
  if (typeof v !== "number" || !Number.isInteger(v) || v < min) {
    throw configError([{ path: [key], message: `expected an integer ≥ ${min}` }]);
  }
  return v;
}

const SPEC_KEYS = new Set([
  "dependencies",
  "module",
  "instructions",
  "description",
  "sandbox",
  "delegates",
  "timeoutMs",
  "maxOldGenerationSizeMb",
]);

/** Validates worker specs at the edge; module paths become absolute real paths. */
function checkWorkers(raw: unknown, basePath: string): Map<string, WorkerSpec> {
  const issues: ConfigIssue[] = [];
  const out = new Map<string, WorkerSpec>();
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    throw configError([{ path: ["workers"], message: "expected an object of worker specs" }]);
  }
  for (const [name, value] of Object.entries(raw as Record<string, unknown>)) {
    const at = ["workers", name];
    if (typeof value !== "object" || value === null) {
      issues.push({ path: at, message: "expected a worker spec object" });
      continue;
    }
    const spec = { ...(value as WorkerSpec) };
    for (const k of Object.keys(spec))
      if (!SPEC_KEYS.has(k)) issues.push({ path: [...at, k], message: `unknown key '${k}'` });
    if (spec.module !== undefined) {
      if (typeof spec.module !== "string")
        issues.push({ path: [...at, "module"], message: "expected a path" });
      else {
        const p = spec.module.startsWith("file:")
          ? fileURLToPath(spec.module)
          : isAbsolute(spec.module)
            ? spec.module
            : resolve(basePath, spec.module);
        if (!existsSync(p))
          issues.push({
            path: [...at, "module"],
            message: `no module at '${spec.module}' (relative paths are resolved against basePath)`,
          });
        else spec.module = realpathSync(p);
      }
    }
    if (spec.dependencies !== undefined) {
      if (
        !Array.isArray(spec.dependencies) ||
        !spec.dependencies.every((d) => typeof d === "string")
      ) {
        issues.push({
          path: [...at, "dependencies"],
          message: "expected a list of file or folder paths",
        });
      } else {
        const deps: string[] = [];
        spec.dependencies.forEach((d, i) => {
          const p = isAbsolute(d) ? d : resolve(basePath, d);
          if (!existsSync(p))
            issues.push({
              path: [...at, "dependencies", i],
              message: `no file or folder at '${d}'`,
            });
          else deps.push(realpathSync(p));
        });
        spec.dependencies = deps;
      }
    }
    if (
      spec.delegates !== undefined &&
      (!Array.isArray(spec.delegates) || !spec.delegates.every((d) => typeof d === "string"))
    ) {
      issues.push({ path: [...at, "delegates"], message: "expected a list of worker names" });
    }
    for (const k of ["timeoutMs", "maxOldGenerationSizeMb"] as const) {
      const v = spec[k];
      if (v !== undefined && (typeof v !== "number" || !(v > 0)))
        issues.push({ path: [...at, k], message: "expected a positive number" });
    }
    out.set(name, spec);
  }
  for (const [name, spec] of out) {
    (spec.delegates ?? []).forEach((d, i) => {
      if (!out.has(d))
        issues.push({ path: ["workers", name, "delegates", i], message: `no worker named '${d}'` });
    });
  }
  if (issues.length > 0) throw configError(issues);
  return out;
}

interface CallOptions {
  sandbox?: unknown;
  attachments?: string[];
  timeoutMs?: number;
}

/** Checks `ctx.delegate` options sent by a (hostile) worker. */
function checkCallOptions(raw: Record<string, unknown>): CallOptions {
  const issues: ConfigIssue[] = [];
  for (const k of Object.keys(raw)) {
    if (k !== "sandbox" && k !== "attachments" && k !== "timeoutMs")
      issues.push({ path: [k], message: `unknown option '${k}'` });
  }
  const out: CallOptions = {};
  if (raw.sandbox !== undefined) out.sandbox = raw.sandbox;
  if (raw.attachments !== undefined) {
    const a = raw.attachments;
    if (!Array.isArray(a) || a.length > MAX_ATTACHMENTS || !a.every((p) => typeof p === "string")) {
      issues.push({
        path: ["attachments"],
        message: `expected at most ${MAX_ATTACHMENTS} virtual paths`,
      });
    } else out.attachments = a;
  }
  if (raw.timeoutMs !== undefined) {
    if (typeof raw.timeoutMs !== "number" || !(raw.timeoutMs > 0))
      issues.push({ path: ["timeoutMs"], message: "expected a positive number" });
    else out.timeoutMs = raw.timeoutMs;
  }
  if (issues.length > 0) throw configError(issues);
  return out;
}

const MEDIA_TYPES: Record<string, string> = {
  pdf: "application/pdf",
  png: "image/png",
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  gif: "image/gif",
  webp: "image/webp",
  svg: "image/svg+xml",
  txt: "text/plain",
  md: "text/markdown",
  json: "application/json",
  csv: "text/csv",
  html: "text/html",
  ts: "text/plain",
  js: "text/javascript",
};

/** Reads attachments through the caller's sandbox (so only what it may read), size-capped. */
async function readAttachments(
  caller: Agent,
  paths: string[] | undefined,
): Promise<{ attachments: Attachment[] | undefined; charged: number }> {
  if (!paths || paths.length === 0) return { attachments: undefined, charged: 0 };
  // Sizes first, charged to the caller's in-flight budget before any byte is
  // read: concurrent delegations cannot multiply the host's memory.
  let total = 0;
  for (const path of paths) {
    const st = await caller.sandbox.stat(path);
    if (st.type !== "file" || st.size > MAX_ATTACHMENT_BYTES) {
      throw new DelegationRefusedError(
        `Cannot attach '${path.slice(0, 200)}': attachments must be files of at most ${MAX_ATTACHMENT_BYTES} bytes.`,
      );
    }
    total += st.size;
  }
  if (caller.attachedBytes + total > MAX_ATTACHMENTS_TOTAL) {
    throw new DelegationRefusedError(
      `Cannot attach ${total} bytes: this agent's attachments to running callees may total at most ${MAX_ATTACHMENTS_TOTAL} bytes.`,
    );
  }
  caller.attachedBytes += total;
  const out: Attachment[] = [];
  let read = 0;
  try {
    for (const path of paths) {
      const bytes = await caller.sandbox.readBytes(path);
      read += bytes.byteLength;
      if (bytes.byteLength > MAX_ATTACHMENT_BYTES || read > total) {
        throw new DelegationRefusedError(
          `Cannot attach '${path.slice(0, 200)}': it grew while being read.`,
        );
      }
      const ext = path.slice(path.lastIndexOf(".") + 1).toLowerCase();
      out.push({ path, mediaType: MEDIA_TYPES[ext] ?? "application/octet-stream", bytes });
    }
  } catch (err) {
    caller.attachedBytes -= total;
    throw err;
  }
  return { attachments: out, charged: total };
}
