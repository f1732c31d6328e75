/**
 * `Sandbox`: the public face of a policy. Answers what is permitted, and
 * performs symlink- and race-resistant file I/O within it.
 */
import { resolve as resolveHostPath } from "node:path";
import { parseSandboxConfig, type SandboxConfig } from "../config/sandbox-config.js";
import { wrapFsError } from "../errors/index.js";
import {
  type DeriveOptions,
  derivePolicy,
  type RestrictOptions,
  restrictPolicy,
} from "./derive.js";
import { findHostCode } from "./host-code.js";
import * as io from "./io.js";
import { MountTable } from "./mount-table.js";
import { type Access, Policy } from "./policy.js";
import { checkMountSources } from "./secret-sources.js";
import { SecretList } from "./secrets.js";
import type { FileEdit, FileStat, ReadOptions, SandboxDescription } from "./types.js";

export type { FileEdit, FileStat, ReadOptions, SandboxDescription };

const policies = new WeakMap<Sandbox, Policy>();

/** @internal The policy behind a sandbox (host-side code only). */
export function policyOf(sandbox: Sandbox): Policy {
  const p = policies.get(sandbox);
  if (!p) throw new TypeError("not a mountbox Sandbox");
  return p;
}

/**
 * A file sandbox: a virtual namespace (`/` plus mounts) with readable and
 * writable areas. Create one with {@link createSandbox}; narrow it with
 * {@link Sandbox.derive} or {@link Sandbox.restrict}. Host paths never leave
 * it except from {@link Sandbox.resolve}.
 */
export class Sandbox {
  /** @internal Use {@link createSandbox}. */
  constructor(policy: Policy) {
    if (!(policy instanceof Policy)) throw new TypeError("Use createSandbox() to make a Sandbox");
    policies.set(this, policy);
  }

  /**
   * Resolves a virtual path to its real host path for the given access,
   * following links and checking both the lexical and the real location.
   * @throws SandboxError (PathNotInSandboxError, PathNotWritableError, …)
   */
  resolve(path: string, access: Access = "read"): string {
    if (access !== "read" && access !== "write")
      throw new TypeError(`access must be "read" or "write"`);
    return policyOf(this).resolve(path, access).real;
  }

  /** True if `path` may be read. Never throws. */
  canRead(path: string): boolean {
    return check(policyOf(this), path, "read");
  }

  /** True if `path` may be written. Never throws. */
  canWrite(path: string): boolean {
    return check(policyOf(this), path, "write");
  }

  /** Readable virtual areas. */
  get readableRoots(): string[] {
    return [...policyOf(this).readableRoots];
  }

  /** Writable virtual areas. */
  get writableRoots(): string[] {
    return [...policyOf(this).writableRoots];
  }

  /** What this sandbox permits, in virtual terms (safe to show a model). */
  describe(): SandboxDescription {
    const p = policyOf(this);
    const visible = p.table.mounts
      .filter((m) => p.reachesBelow(m.target, "read") || p.reachesBelow(m.target, "write"))
      .map((m) => ({ target: m.target, readonly: m.readonly }))
      .sort((a, b) => (a.target < b.target ? -1 : 1));
    const out: SandboxDescription = {
      readable: [...p.readableRoots],
      writable: [...p.writableRoots],
      mounts: visible,
      secrets: [...p.secrets.entries],
    };
    if (p.table.suffixes) out.suffixes = [...p.table.suffixes];
    if (p.table.maxFileBytes !== undefined) out.maxFileBytes = p.table.maxFileBytes;
    return out;
  }

  /**
   * A narrower child in the same namespace (DESIGN §4). With no arguments the
   * child can do nothing.
   * @throws SandboxPermissionEscalationError if it asks for more than this has
   */
  derive(opts?: DeriveOptions): Sandbox {
    return new Sandbox(derivePolicy(policyOf(this), opts));
  }

  /**
   * Keeps only a subtree (same paths, no rebasing), optionally read-only.
   * @throws SandboxPermissionEscalationError if it asks for more than this has
   */
  restrict(opts: RestrictOptions = {}): Sandbox {
    return new Sandbox(restrictPolicy(policyOf(this), opts));
  }

  /** Reads a file as UTF-8 (`opts`: a default size cap and a byte budget, see {@link ReadOptions}). */
  readFile(path: string, opts?: ReadOptions): Promise<string> {
    return guard("readText", path, () => io.readText(policyOf(this), path, opts));
  }

  /** Reads a file's bytes (`opts` as {@link readFile}). */
  readBytes(path: string, opts?: ReadOptions): Promise<Uint8Array> {
    return guard("readBytes", path, () => io.readBytes(policyOf(this), path, opts));
  }

  /** Writes a file atomically, creating parent directories. */
  writeFile(path: string, content: string | Uint8Array): Promise<void> {
    return guard("writeFile", path, () => io.writeFile(policyOf(this), path, content));
  }

  /** Applies exact, unique-match edits in order; returns a unified diff. */
  editFile(
    path: string,
    edits: FileEdit[],
    opts?: { dryRun?: boolean },
  ): Promise<{ diff: string }> {
    return guard("editFile", path, () =>
      io.editFile(policyOf(this), path, edits, opts?.dryRun ?? false),
    );
  }

  /**
   * Readable files under `path` matching a glob (default `**\/*`), virtual
   * and sorted. A big listing yields to the event loop as it goes; `signal`
   * stops it between folders.
   */
  listFiles(
    path = "/",
    pattern = "**/*",
    opts?: { signal?: AbortSignal | undefined },
  ): Promise<string[]> {
    return guard("listFiles", path, () =>
      io.listFiles(policyOf(this), path, pattern, opts?.signal),
    );
  }

  /** Type, size and modification time of a file or directory. */
  stat(path: string): Promise<FileStat> {
    return guard("stat", path, () => io.stat(policyOf(this), path));
  }

  /** True if something readable exists at `path`. Never throws for a missing path. */
  exists(path: string): Promise<boolean> {
    return guard("exists", path, () => io.exists(policyOf(this), path));
  }

  /** Creates a directory and its missing parents. */
  mkdir(path: string): Promise<void> {
    return guard("mkdir", path, () => io.mkdir(policyOf(this), path));
  }

  /**
   * Removes a file, or a directory (with contents only when `recursive`).
   * An aborted `signal` stops it before anything is deleted.
   */
  remove(
    path: string,
    opts?: { recursive?: boolean | undefined; signal?: AbortSignal | undefined },
  ): Promise<void> {
    return guard("remove", path, () =>
      io.remove(policyOf(this), path, opts?.recursive ?? false, opts?.signal),
    );
  }

  /**
   * Moves a file or directory, across mounts too. All or nothing: a failure,
   * or `signal` aborting it between files, leaves the source as it was and
   * removes what was copied.
   */
  move(
    from: string,
    to: string,
    opts?: { overwrite?: boolean | undefined; signal?: AbortSignal | undefined },
  ): Promise<void> {
    return guard("move", from, () =>
      io.move(policyOf(this), from, to, opts?.overwrite ?? false, opts?.signal),
    );
  }
}

/**
 * Safety net for the public I/O methods: whatever escapes the I/O layer (a
 * synchronous throw included) reaches the caller as a SandboxError without a
 * host path.
 */
async function guard<T>(op: string, path: unknown, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    throw wrapFsError(err, op, typeof path === "string" ? path : String(path));
  }
}

function check(p: Policy, path: string, access: Access): boolean {
  try {
    const v = p.normalize(path);
    if (v === null) return false;
    const d = p.deny(v, access);
    if (d !== undefined && d !== "suffix") return false;
    p.resolveVirtual(v, access);
    return true;
  } catch {
    return false;
  }
}

/**
 * Creates the root sandbox from a configuration (camelCase or snake_case).
 * Roots and mount sources are realpath'd once, here. Where a writable mount
 * holds the host's own code (its `node_modules` chain, package manifests
 * and lockfiles, entry script, mountbox's package), those places are
 * protected; a writable mount inside such a folder is refused.
 * @param opts.basePath folder that relative `root`/`source` paths are relative to
 * @throws ConfigError naming each bad key
 */
export function createSandbox(config: SandboxConfig, opts: { basePath?: string } = {}): Sandbox {
  const parsed = parseSandboxConfig(config);
  // The host's own code is never writable by agents (issue 18): computed
  // here, so the API, the port, derived children and the shell all inherit it.
  const table = new MountTable(parsed, resolveHostPath(opts.basePath ?? "."), findHostCode());
  const areas = table.mounts
    .filter((m) => (parsed.form === "root" ? m.target === "/" : true))
    .map((m) => ({ path: m.target, exact: false }));
  const secrets = SecretList.of(parsed.secrets);
  checkMountSources(table, secrets);
  return new Sandbox(new Policy(table, areas, parsed.readonly ? [] : areas, secrets));
}
