/**
 * The `execArgv` that hardens an agent thread with Node's permission model
 * (DESIGN §7): read access to exactly the code the thread needs, and nothing
 * else — no fs writes, no child processes, no nested workers, no addons, and
 * (where Node can enforce it) no network unless the worker asks for it.
 *
 * A seat belt, not a wall: README "Security model" says what it does not stop.
 */
import { readdirSync, realpathSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { policyOf, type Sandbox } from "../sandbox/sandbox.js";
import { repairPrefixSiblings } from "./grant-siblings.js";
import {
  collectPackages,
  compactGrants,
  findPackage,
  findSelfReference,
  isWithin,
  toPackageName,
} from "./module-grants.js";

/** This package's name, as worker modules import it (`mountbox/worker`). */
const SELF = "mountbox";

/**
 * The permission flag this Node understands: `--permission` (Node ≥ 22.13),
 * else `--experimental-permission` (Node 20), else none.
 */
export function detectPermissionFlag(): "--permission" | "--experimental-permission" | undefined {
  const flags = process.allowedNodeEnvironmentFlags;
  if (flags.has("--permission")) return "--permission";
  if (flags.has("--experimental-permission")) return "--experimental-permission";
  return undefined;
}

/**
 * True where Node's permission model can take the network away from a
 * thread (`--allow-net`, Node ≥ 25). Before that, a thread has the network.
 */
export function canRestrictNetwork(): boolean {
  return process.allowedNodeEnvironmentFlags.has("--allow-net");
}

/**
 * Real paths of the files the thread entry loads: every module of the
 * thread side (`workers/`: the entry, its lockdown, `mountbox/worker`, the
 * sandbox client) and the shared ones they import (every module of the
 * error family in `src/errors/`, and the wire protocol). Exact files, never
 * a folder.
 */
export function listThreadCodeFiles(): string[] {
  const files = listModules(new URL("../../workers/", import.meta.url));
  const errors = listModules(new URL("../errors/", import.meta.url));
  const protocol = fileURLToPath(new URL("../port/protocol.js", import.meta.url));
  return [...files, ...errors, protocol].map((f) => realpathSync(f));
}

/** Paths of the built modules (`.js` files) directly in the folder `dir`. */
function listModules(dir: URL): string[] {
  const path = fileURLToPath(dir);
  return readdirSync(path)
    .filter((f) => f.endsWith(".js"))
    .map((f) => join(path, f));
}

/** URL of the built thread entry. */
export function threadEntryUrl(): URL {
  return new URL("../../workers/entry.js", import.meta.url);
}

/** What one worker's thread needs to read; see {@link computeWorkerGrants}. */
export interface WorkerCode {
  /** Real path of the worker module. */
  module: string;
  /**
   * What it imports besides `mountbox/worker`: package names (`zod`,
   * `@scope/pkg`), looked up from the module's folder as Node does, or
   * real host paths of helper files and folders.
   */
  dependencies?: readonly string[];
}

/**
 * The read grants of a thread running `code`: the thread entry's files, the
 * module, `mountbox` as the module's folder resolves it (link and real
 * folder — or, with `exactSelf`, their manifests only — or the package.json
 * of a self-reference), each declared package
 * with everything it depends on, and each declared path.
 * @throws Error naming a declared package that is not installed
 */
export function computeWorkerGrants(
  code: WorkerCode,
  opts: { exactSelf?: boolean } = {},
): string[] {
  const from = dirname(code.module);
  const out = [...listThreadCodeFiles(), code.module];
  const self = findSelfReference(SELF, from);
  if (self) out.push(self);
  else {
    const pkg = findPackage(SELF, from);
    // Node's permission model needs the whole folder to reach it through a
    // link; a process's view (`exactSelf`) needs only its manifests, as
    // the thread code is listed file by file (a linked checkout's `.git`
    // stays out).
    if (pkg && opts.exactSelf)
      out.push(join(pkg.path, "package.json"), join(pkg.real, "package.json"));
    else if (pkg) out.push(pkg.path, pkg.real);
  }
  const names: string[] = [];
  for (const d of code.dependencies ?? []) {
    const name = toPackageName(d);
    if (name) names.push(name);
    else out.push(d);
  }
  const { found, missing } = collectPackages(names, from);
  if (missing.length > 0)
    throw new Error(
      `Cannot find the package${missing.length > 1 ? "s" : ""} ${missing.map((m) => `'${m}'`).join(", ")} from the worker module's folder. Install ${missing.length > 1 ? "them" : "it"} where the module can import ${missing.length > 1 ? "them" : "it"}, or remove ${missing.length > 1 ? "them" : "it"} from 'dependencies'.`,
    );
  for (const p of found) out.push(p.path, p.real);
  return compactGrants(repairPrefixSiblings(compactGrants(out)));
}

/**
 * Refuses read grants that would hand a thread a whole sandbox folder
 * behind the port's back: a grant equal to, or containing, a mount source
 * of `sandbox`. Files and package folders *inside* a sandbox folder are
 * fine — a program whose workers and `node_modules` live under its root
 * gets exactly those files. Returns the grants unchanged.
 * @throws Error naming the grant (a host-side configuration mistake, so host paths are fine here)
 */
export function checkReadGrants(grants: readonly string[], sandbox: Sandbox | undefined): string[] {
  const mounts = sandbox ? policyOf(sandbox).table.bySource : [];
  for (const given of grants) {
    for (const m of mounts) {
      if (isWithin(m.source, given) || isWithin(m.source, safeRealpath(given)))
        throw new Error(
          `Cannot grant the thread read access to ${given}: it contains the sandbox folder ${m.source}, which agents may only reach through their sandbox. Grant the module's own files and package folders instead.`,
        );
    }
  }
  return [...grants];
}

function safeRealpath(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return p;
  }
}

/** Options of {@link computeExecArgv}. */
export interface ExecArgvOptions {
  /** Host paths the thread may read (files exact; folders with everything below). */
  readPaths: readonly string[];
  /** Give the thread the network (only matters where Node can take it away). */
  network?: boolean;
}

/**
 * The worker's `execArgv`: the permission flag; one `--allow-fs-read` per
 * path (Node 20 refuses comma lists, and a comma inside a path would split
 * it); `--interactive`, which stops Node ≥ 22 from granting the thread the
 * process's working folder (it grants a worker's empty "entry point", which
 * resolves to the working folder, unless the worker is a REPL — seen on
 * 22.23, 24.21 and 26.10; Node 20 accepts the flag and grants nothing);
 * `--allow-net` when asked and supported; the experimental warning kept off
 * stderr. No `--allow-fs-write`, `--allow-child-process`, `--allow-worker`
 * or `--allow-addons`.
 * @throws Error if this Node has no permission model, or a path has a comma
 */
export function computeExecArgv(opts: ExecArgvOptions): string[] {
  const flag = detectPermissionFlag();
  if (!flag) throw new Error("This Node.js has no permission model; use Node 20.19+ or 22.13+.");
  const out: string[] = [flag, "--interactive"];
  for (const p of new Set(opts.readPaths)) {
    if (p.includes(",")) throw new Error(`Cannot grant a path containing a comma: ${p}`);
    out.push(`--allow-fs-read=${p}`);
  }
  if (opts.network && canRestrictNetwork()) out.push("--allow-net");
  if (process.allowedNodeEnvironmentFlags.has("--disable-warning"))
    out.push("--disable-warning=ExperimentalWarning");
  return out;
}

/** What to install when a program has LLM workers and `ai` is missing. */
export const MISSING_AI_FOR_LLM_WORKERS =
  "LLM workers need the Vercel AI SDK, an optional peer dependency of mountbox: install it beside mountbox with `npm install ai@^6` (any version >= 6).";

let llmCode: WorkerCode | undefined;

/**
 * The code an LLM agent's thread runs: the built-in `workers/llm-worker.js`,
 * with `ai` found from mountbox's own folder as Node will find it (in npm
 * and pnpm layouts the peer sits beside mountbox) and everything it depends
 * on, zod, the tool layer's files and the AI SDK adapter.
 * @throws Error naming what to install when `ai` cannot be found
 */
export function llmWorkerCode(): WorkerCode {
  if (llmCode) return llmCode;
  const module = realpathSync(
    fileURLToPath(new URL("../../workers/llm-worker.js", import.meta.url)),
  );
  if (!findPackage("ai", dirname(module))) throw new Error(MISSING_AI_FOR_LLM_WORKERS);
  const toolsDir = fileURLToPath(new URL("../tools/", import.meta.url));
  const files = readdirSync(toolsDir)
    .filter((f) => f.endsWith(".js"))
    .map((f) => realpathSync(join(toolsDir, f)));
  const adapter = realpathSync(fileURLToPath(new URL("../ai-sdk/index.js", import.meta.url)));
  llmCode = { module, dependencies: ["ai", "zod", ...files, adapter] };
  return llmCode;
}
