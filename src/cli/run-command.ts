/**
 * `mountbox run <program-dir> [worker]`: loads a program folder, runs one
 * of its workers (and whatever it delegates to) and shows it: on a terminal
 * a live tree of agents where approvals are answered (`live-view.tsx`);
 * elsewhere one line per event that matters (or, with `--json`, every event
 * as a JSON line); then the result and a summary. Approvals follow
 * `--approve` (`ask` on a terminal, else `none`: what needs an approval is
 * refused, with the message the agent's model would see).
 *
 * Exit status: 0 on success, 1 on a failed run, 2 on bad usage or config,
 * 130 when interrupted (SIGINT/SIGTERM: every agent stopped, the host
 * closed).
 */
import { lstatSync, readFileSync, realpathSync, type Stats } from "node:fs";
import { basename, dirname, join, relative, resolve, sep } from "node:path";
import { parseArgs } from "node:util";
import { listWorkerReaches } from "../agents/worker-sandbox-check.js";
import type { ApprovalDecision, ApprovalRequest } from "../approvals/approval-types.js";
import { configError, escapeControl, SandboxError } from "../errors/index.js";
import { createHost, type Host } from "../host/host.js";
import type { HostEvent } from "../host/host-types.js";
import { loadProgramDefinition, type ProgramDefinition } from "../host/load-program.js";
import { isLlmWorker } from "../models/worker-models.js";
import { policyOf, type Sandbox } from "../sandbox/sandbox.js";
import { isWithin } from "../sandbox/virtual-path.js";
import { type CliIo, UsageError } from "./cli-io.js";
import { KNOWN_PROVIDERS, loadModelFlags } from "./model-flags.js";
import { makeRootSandbox } from "./program-sandbox.js";
import {
  count,
  describeEvent,
  type RunStats,
  showValue,
  summarize,
  toJsonLine,
} from "./run-output.js";
import { RunState } from "./run-state.js";

/** Help of `mountbox run`. */
export const RUN_HELP = `Usage: mountbox run <program-dir> [worker] [options]

Runs [worker] of the program in <program-dir> (default: 'main', or the only
worker), with every agent in its own thread or process as program.yaml says.
Only [worker] and the workers it can delegate to are loaded: a model is
needed only for the LLM workers among them.

On a terminal: a live tree of the agents (sandbox, last operation, counts,
status, time) where approvals are asked for and answered by one key.
Elsewhere (or with --json, or under CI): one line per agent started,
finished or failed, per refusal and per log line. Then the result and a
summary, with the grants given as sandbox blocks.

Options:
  --input JSON|@FILE   The worker's input: JSON text, or a file of JSON (default: null)
  --approve ask|none|all
                       Requests that need an approval (read_approval/write_approval
                       areas, dynamic expansion): ask in the live view (ask, the
                       default on a terminal), refuse them (none, the default
                       elsewhere) or grant each once (all)
  --audit FILE         Append the audit log (one JSON line per operation, request,
                       decision and denial) to FILE
  --timeout MS         Stop the whole run after MS milliseconds
  --model NAME=PROVIDER:ID
                       Bind the program's model NAME to a model of an AI SDK
                       provider the app has installed (repeatable); PROVIDER is
                       one of ${KNOWN_PROVIDERS}.
                       Its key comes from the provider's usual variable
                       (OPENAI_API_KEY, ANTHROPIC_API_KEY, …), read by the host only
  --json               One JSON line per event, then {"type":"result",…}
  -h, --help           Show this help

Exit status: 0 on success, 1 if the run failed, 2 on bad usage or a
configuration error, 130 if interrupted (every agent is stopped first).
`;

/** Exit status of an interrupted run (128 + SIGINT, as shells report it). */
const EXIT_INTERRUPTED = 130;

/** Runs `mountbox run`; returns the exit status. */
export async function runRun(argv: readonly string[], io: CliIo): Promise<number> {
  let parsed: ReturnType<typeof parseRunArgs>;
  try {
    parsed = parseRunArgs(argv);
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  const { values, positionals } = parsed;
  if (values.help) {
    io.stdout(RUN_HELP);
    return 0;
  }
  const [dir, named, ...extra] = positionals;
  if (dir === undefined) throw new UsageError("run needs a program folder");
  if (extra.length > 0) throw new UsageError(`unexpected argument '${extra[0]?.slice(0, 40)}'`);
  // The live view (and asking by default) needs a terminal on both ends,
  // and not a CI log posing as one.
  const terminal = values.json === true || isCi(process.env) ? undefined : io.terminal;
  const approve = values.approve ?? (terminal === undefined ? "none" : "ask");
  if (approve !== "none" && approve !== "all" && approve !== "ask")
    throw new UsageError(`--approve takes 'ask', 'all' or 'none', not '${approve.slice(0, 20)}'`);
  if (approve === "ask" && terminal === undefined)
    throw new UsageError(
      "--approve ask needs a terminal (and not --json); use --approve none or all here",
    );
  const timeoutMs = values.timeout === undefined ? undefined : Number(values.timeout);
  if (timeoutMs !== undefined && (!Number.isSafeInteger(timeoutMs) || timeoutMs < 1))
    throw new UsageError("--timeout takes a positive number of milliseconds");
  const input = readInput(values.input);

  const def = await loadProgramDefinition(resolve(dir));
  const workers = Object.keys(def.options.workers);
  const worker =
    named ??
    (workers.includes("main") ? "main" : workers.length === 1 ? (workers[0] as string) : undefined);
  if (worker === undefined || !workers.includes(worker))
    throw new UsageError(
      `${named === undefined ? "name the worker to run" : `no worker named '${escapeControl(named.slice(0, 60))}'`}; workers: ${escapeControl(workers.join(", ")) || "none"}`,
    );

  // The worker run, those it can reach, and every code worker: an LLM
  // worker the run cannot reach needs no model, but every code worker's
  // module stays protected (the host protects the modules of the workers it
  // is given; leaving one out let an agent rewrite another worker's code for
  // the next run — found by a review).
  const reached = listReachable(def.options.workers, worker);
  const workerSpecs = Object.fromEntries(
    Object.entries(def.options.workers).filter(
      ([name, spec]) => reached.has(name) || !isLlmWorker(spec),
    ),
  );
  const usedModels = new Set(
    Object.values(workerSpecs).flatMap((s) =>
      isLlmWorker(s) && s.model !== undefined ? [s.model] : [],
    ),
  );
  const root = makeRootSandbox(def.options);
  const table = policyOf(root).table;
  const isAgentWritable = (host: string) => {
    const v = table.mapBack(host);
    return v !== undefined && root.canWrite(v);
  };
  const models = await loadModelFlags(values.model ?? [], usedModels, isAgentWritable);
  const auditLog =
    values.audit === undefined ? checkProgramAuditLog(def, resolve(dir)) : resolve(values.audit);
  // Every path is resolved: the host (and each agent thread, which shares
  // its working folder) now stands in '/', wherever the user ran mountbox.
  process.chdir("/");

  const json = values.json === true;
  const stats: RunStats = { agents: 0, operations: 0, denials: 0, modelSteps: 0, tokens: 0 };
  const names = new Map<string, string>();
  const state =
    terminal === undefined
      ? undefined
      : new RunState(`${programName(def, dir)} · ${worker}`, describeAccess(def, root));
  const onEvent = (e: HostEvent) => {
    count(stats, e);
    if (e.type === "agent_started") names.set(e.agentId, e.worker);
    if (state !== undefined) state.apply(e);
    else if (json) io.stdout(`${toJsonLine(e)}\n`);
    else {
      const line = describeEvent(e, names);
      if (line !== undefined) io.stdout(`${line}\n`);
    }
  };
  const onApproval = (request: ApprovalRequest): ApprovalDecision | Promise<ApprovalDecision> =>
    approve === "all"
      ? "once"
      : approve === "ask" && state !== undefined
        ? state.ask(request)
        : "deny";
  // Node prints process warnings to stderr, across the live view: show
  // them under the tree instead while it is drawn.
  const warningListeners = state === undefined ? [] : process.listeners("warning");
  const onWarning = (w: Error) => state?.warn(w.message);
  if (state !== undefined) {
    process.removeAllListeners("warning");
    process.on("warning", onWarning);
  }
  const restoreWarnings = () => {
    if (state === undefined) return;
    process.off("warning", onWarning);
    for (const l of warningListeners) process.on("warning", l);
  };
  let host: Host;
  try {
    host = await createHost({
      ...def.options,
      workers: workerSpecs,
      ...(Object.keys(models).length > 0 ? { models } : {}),
      onEvent,
      onApproval,
      ...(auditLog === undefined ? {} : { auditLog }),
    });
  } catch (err) {
    restoreWarnings();
    throw err;
  }
  const stop = new AbortController();
  const interrupt = () => {
    stop.abort();
    state?.denyPending();
  };
  process.once("SIGINT", interrupt);
  process.once("SIGTERM", interrupt);
  const view =
    state === undefined || terminal === undefined
      ? undefined
      : (await importLiveView()).startLiveView(state, terminal, interrupt);
  const started = Date.now();
  try {
    const result = await host.run(worker, input, {
      signal: stop.signal,
      ...(timeoutMs === undefined ? {} : { timeoutMs }),
    });
    state?.denyPending();
    await host.close();
    await view?.close();
    if (json) io.stdout(`${toJsonLine({ type: "result", ok: true, value: result ?? null })}\n`);
    else {
      io.stdout(`\nResult:\n${showValue(result)}\n`);
      io.stdout(`\n${summarize(stats, Date.now() - started, host.suggestedSandboxes())}`);
    }
    return 0;
  } catch (err) {
    state?.denyPending();
    await host.close();
    await view?.close();
    if (stop.signal.aborted) {
      io.stderr("mountbox: interrupted; every agent was stopped.\n");
      return EXIT_INTERRUPTED;
    }
    if (!(err instanceof SandboxError)) throw err;
    if (json) io.stdout(`${toJsonLine({ type: "result", ok: false, error: err.toJSON() })}\n`);
    else {
      // Line by line escaped: it can quote what an agent threw.
      io.stdout(`\n✖ The run failed: ${err.message.split("\n").map(escapeControl).join("\n")}\n`);
      io.stdout(`\n${summarize(stats, Date.now() - started, {})}`);
    }
    return 1;
  } finally {
    state?.dispose();
    restoreWarnings();
    process.off("SIGINT", interrupt);
    process.off("SIGTERM", interrupt);
  }
}

/**
 * The live view's module. React's development build, which is what runs
 * without NODE_ENV, records a performance measure per render and never
 * clears them (gigabytes over a long run: found by a review).
 */
async function importLiveView() {
  process.env.NODE_ENV = "production";
  return await import("./live-view.js");
}

/** True where a CI system runs us (its log is no terminal to draw on). */
function isCi(env: NodeJS.ProcessEnv): boolean {
  return env.CI !== undefined && env.CI !== "" && env.CI !== "0" && env.CI !== "false";
}

/** The program's name (program.yaml's `name`, else its folder's), for the live view's header. */
function programName(def: { options: { name?: string } }, dir: string): string {
  return escapeControl(def.options.name ?? basename(resolve(dir)));
}

/**
 * An agent's sandbox in short, from its delegation chain: the folders it may
 * write (`rw`), then those it may only read (`r`) — `/src r /reports rw`.
 */
function describeAccess(def: ProgramDefinition, root: Sandbox): (chain: string[]) => string {
  const { options } = def;
  const reaches = listWorkerReaches(
    root,
    new Map(Object.entries(options.workers)),
    options.maxDepth ?? 5,
  );
  const byChain = new Map(reaches.map((r) => [r.chain.join("\0"), r.sandbox]));
  return (chain) => {
    const sb = byChain.get(chain.join("\0"));
    if (sb === undefined) return "";
    const writable = sb.writableRoots.filter((p) => sb.canWrite(p));
    const readOnly = sb.readableRoots.filter(
      (p) => sb.canRead(p) && !writable.some((w) => isWithin(p, w)),
    );
    const parts = [...readOnly.map((p) => `${p} r`), ...writable.map((p) => `${p} rw`)];
    return parts.length === 0 ? "no files" : escapeControl(parts.join(" "));
  };
}

/**
 * program.yaml's `audit_log`, which the CLI takes only inside the program
 * folder: a program folder is often someone else's, and an audit log
 * appends lines holding text its agents chose (paths, messages) to the file
 * it names — a shell's rc file, say, would run it (found by a review).
 * `--audit FILE` names any file.
 */
function checkProgramAuditLog(def: ProgramDefinition, dir: string): string | undefined {
  const file = def.options.auditLog;
  if (typeof file !== "string") return undefined;
  const refuse = (why: string) =>
    configError(
      [
        {
          path: ["audit_log"],
          message: `mountbox run writes a program's audit log only to a plain file inside its folder (${why}); give --audit FILE to write it elsewhere`,
        },
      ],
      "program.yaml",
    );
  // Where it really is: a link in the folder (to ~/.bashrc, say) must not
  // carry the lines out of it (found by a second review).
  let realDir: string;
  let realParent: string;
  try {
    realDir = realpathSync(dir);
    realParent = realpathSync(dirname(file));
  } catch {
    throw refuse("its folder does not exist");
  }
  const real = join(realParent, basename(file));
  if (!isWithin(real, realDir) || real === realDir) throw refuse("it is outside");
  const parts = relative(realDir, real).split(sep);
  // Places tools run or read as code: git hooks, packages, worker files, dotfiles.
  if (parts.some((p) => p.startsWith(".") || p === "node_modules" || p === "workers"))
    throw refuse("not in a dot folder, node_modules or workers/, nor a dotfile");
  let st: Stats | undefined;
  try {
    st = lstatSync(real);
  } catch {
    st = undefined; // made by the host when it opens the log
  }
  if (st !== undefined && !st.isFile()) throw refuse("it is a link or not a file");
  return real;
}

/** `worker` and every worker it can reach through `delegates`. */
function listReachable(
  workers: Record<string, { delegates?: string[] }>,
  worker: string,
): Set<string> {
  const seen = new Set([worker]);
  const queue = [worker];
  for (let name = queue.pop(); name !== undefined; name = queue.pop())
    for (const next of workers[name]?.delegates ?? [])
      if (!seen.has(next) && Object.hasOwn(workers, next)) {
        seen.add(next);
        queue.push(next);
      }
  return seen;
}

function parseRunArgs(argv: readonly string[]) {
  return parseArgs({
    args: [...argv],
    allowPositionals: true,
    strict: true,
    options: {
      input: { type: "string" },
      approve: { type: "string" },
      audit: { type: "string" },
      timeout: { type: "string" },
      model: { type: "string", multiple: true },
      json: { type: "boolean" },
      help: { type: "boolean", short: "h" },
    },
  });
}

/** `--input`: JSON text, or `@file` holding JSON; null when absent. */
function readInput(raw: string | undefined): unknown {
  if (raw === undefined) return null;
  let text = raw;
  if (raw.startsWith("@")) {
    try {
      text = readFileSync(resolve(raw.slice(1)), "utf8");
    } catch (err) {
      throw new UsageError(
        `--input: cannot read '${escapeControl(raw.slice(1, 200))}' (${(err as NodeJS.ErrnoException).code ?? "error"})`,
      );
    }
  }
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new UsageError(
      `--input takes JSON (a string is written with quotes: --input '"review src"'), or @FILE`,
    );
  }
}
