/**
 * The `execArgv` that hardens an agent thread with Node's permission model
 * (DESIGN §7): read access to exactly the code the thread needs, and nothing
 * else — no fs writes, no child processes, no nested workers, no addons.
 *
 * A seat belt, not a wall: see docs/sections/threads.md for what it does not
 * stop.
 */
import { realpathSync, statSync } from "node:fs";
import { dirname, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { policyOf, type Sandbox } from "../sandbox/sandbox.js";

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
 * Real paths of the files the thread entry loads: itself, `mountbox/worker`
 * and what they import. Exact files, never a folder, so a sandbox that
 * happens to contain the package cannot widen the grant.
 */
export function listThreadCodeFiles(): string[] {
  const rel = [
    "../../workers/entry.js",
    "../../workers/index.js",
    "../../workers/sandbox-client.js",
    "../errors.js",
    "./protocol.js",
  ];
  return rel.map((r) => realpathSync(fileURLToPath(new URL(r, import.meta.url))));
}

/** URL of the built thread entry. */
export function threadEntryUrl(): URL {
  return new URL("../../workers/entry.js", import.meta.url);
}

/**
 * Refuses read grants that would let a thread see into a sandbox behind the
 * port's back: any grant whose folder contains or lies inside a mount source
 * of `sandbox`'s mount table. A file grant is checked as its parent folder,
 * because Node 22 (seen on 22.23) lets a file grant read everything below
 * the file's folder; Node 20 grants the file exactly. Grants must exist;
 * they are returned as real paths.
 * @throws Error naming the grant (a host-side configuration mistake, so host paths are fine here)
 */
export function checkReadGrants(grants: readonly string[], sandbox: Sandbox | undefined): string[] {
  const mounts = sandbox ? policyOf(sandbox).table.bySource : [];
  // Node 22 (seen on 22.23) also lets a worker under `--permission` read the
  // whole working directory of the process, whatever its grants. That folder
  // must not overlap a sandbox folder either.
  if (detectPermissionFlag() === "--permission") {
    const cwd = realpathSync(process.cwd());
    for (const m of mounts) {
      if (isWithinHost(cwd, m.source) || isWithinHost(m.source, cwd))
        throw new Error(
          `Cannot start agent threads: on this Node.js (${process.version}) a thread may read the host process's working directory (${cwd}), which overlaps the sandbox folder ${m.source}. Start the host from a folder outside every sandbox folder (process.chdir before createHost, or cd in the shell).`,
        );
    }
  }
  return grants.map((given) => {
    const real = realpathSync(given);
    const folder = statSync(real).isDirectory() ? real : dirname(real);
    for (const m of mounts) {
      if (isWithinHost(folder, m.source) || isWithinHost(m.source, folder))
        throw new Error(
          `Cannot grant the thread read access to ${real}: its folder overlaps the sandbox folder ${m.source}. Keep worker modules and their dependencies outside every sandbox folder.`,
        );
    }
    return real;
  });
}

function isWithinHost(path: string, dir: string): boolean {
  return path === dir || path.startsWith(dir.endsWith(sep) ? dir : dir + sep);
}

/** Options of {@link computeExecArgv}. */
export interface ExecArgvOptions {
  /** Real host paths the thread may read (files exact; folders with everything below). */
  readPaths: readonly string[];
}

/**
 * The worker's `execArgv`: the permission flag, one `--allow-fs-read` per
 * path (Node 20 refuses comma lists, and a comma inside a path would split
 * it), and the experimental warning kept off stderr. No `--allow-fs-write`,
 * `--allow-child-process`, `--allow-worker` or `--allow-addons`.
 * @throws Error if this Node has no permission model, or a path has a comma
 */
export function computeExecArgv(opts: ExecArgvOptions): string[] {
  const flag = detectPermissionFlag();
  if (!flag) throw new Error("This Node.js has no permission model; use Node 20.19+ or 22.13+.");
  const out: string[] = [flag];
  for (const p of new Set(opts.readPaths)) {
    if (p.includes(",")) throw new Error(`Cannot grant a path containing a comma: ${p}`);
    out.push(`--allow-fs-read=${p}`);
  }
  if (process.allowedNodeEnvironmentFlags.has("--disable-warning"))
    out.push("--disable-warning=ExperimentalWarning");
  return out;
}
