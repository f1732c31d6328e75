/**
 * derive() and restrict(): child policies that can only be narrower.
 *
 * Both work in the parent's namespace (no rebasing) and intersect area sets,
 * so child ⊆ parent holds by construction at any depth. Asking for anything
 * the parent does not have is a SandboxPermissionEscalationError.
 */
import {
  configError,
  formatPathList,
  InvalidPathError,
  quotePath,
  SandboxError,
  SandboxPermissionEscalationError,
} from "../errors/index.js";
import { type Area, intersect } from "./areas.js";
import { EntryProbe } from "./entry-probe.js";
import { type Access, Policy } from "./policy.js";
import { checkMountSources } from "./secret-sources.js";
import { SecretList } from "./secrets.js";

/** Options of `Sandbox.derive()`; see DESIGN §4. */
export interface DeriveOptions {
  /** Child reads = parent reads ∩ these. */
  allowRead?: string | string[];
  /** Child writes = parent writes ∩ these (and reads too, if `allowRead` is absent). */
  allowWrite?: string | string[];
  /** `true`: no writes at all. `false`: asserts the parent can write somewhere. */
  readonly?: boolean;
  /** With no allowlist: start from the parent's access instead of nothing. Default false. */
  inherit?: boolean;
  /**
   * More secret name patterns, added to the parent's (which a child always
   * keeps: it can add secrets, never remove one). `[]` is refused: it is
   * how a root sandbox drops the defaults, and a child cannot.
   */
  secrets?: string[];
}

/** Options of `Sandbox.restrict()`. */
export interface RestrictOptions {
  /** Subtree (or file) to keep, same paths; default `/`. */
  restrict?: string;
  /** `true`: no writes. `false`: asserts writes remain under `restrict`. */
  readonly?: boolean;
  /** More secret name patterns, added to the parent's (see {@link DeriveOptions.secrets}). */
  secrets?: string[];
}

/** Most allow-list entries in one derive() call. */
const MAX_ENTRIES = 256;

const DERIVE_KEYS = new Set(["allowRead", "allowWrite", "readonly", "inherit", "secrets"]);
const RESTRICT_KEYS = new Set(["restrict", "readonly", "secrets"]);

function checkOptions(opts: unknown, keys: Set<string>, method: string): Record<string, unknown> {
  if (opts === undefined || opts === null) return {};
  if (typeof opts !== "object" || Array.isArray(opts)) {
    throw configError([{ path: [], message: `${method}() takes an options object` }]);
  }
  const o = opts as Record<string, unknown>;
  const issues: { path: string[]; message: string }[] = [];
  for (const k of Object.keys(o)) {
    if (!keys.has(k))
      issues.push({
        path: [k],
        message: `unknown option '${k}' (allowed: ${[...keys].join(", ")})`,
      });
  }
  for (const k of ["readonly", "inherit"]) {
    if (o[k] !== undefined && typeof o[k] !== "boolean") {
      issues.push({ path: [k], message: `expected boolean, received ${typeof o[k]}` });
    }
  }
  for (const k of ["allowRead", "allowWrite"]) {
    const v = o[k];
    if (
      v !== undefined &&
      typeof v !== "string" &&
      !(Array.isArray(v) && v.every((e) => typeof e === "string"))
    ) {
      issues.push({ path: [k], message: "expected a string or an array of strings" });
    } else if (Array.isArray(v) && v.length > MAX_ENTRIES) {
      // Each entry is resolved on disk; a huge list (e.g. from a hostile
      // worker's call site) would stall the host.
      issues.push({ path: [k], message: `at most ${MAX_ENTRIES} entries` });
    }
  }
  if (o.restrict !== undefined && typeof o.restrict !== "string") {
    issues.push({ path: ["restrict"], message: `expected string, received ${typeof o.restrict}` });
  }
  if (o.secrets !== undefined) {
    const parsed = SecretList.parse(o.secrets);
    if (!(parsed instanceof SecretList))
      for (const p of parsed)
        issues.push({
          path: p.index < 0 ? ["secrets"] : ["secrets", String(p.index)],
          message: p.message,
        });
  }
  if (issues.length > 0) throw configError(issues);
  return o;
}

/**
 * The child's secrets: the parent's, plus those asked for. A child keeps
 * every secret of its parent; `[]` (the root's way to drop the defaults)
 * is refused with a message saying so, rather than silently ignored.
 */
function childSecrets(parent: Policy, asked: unknown): SecretList {
  if (asked === undefined) return parent.secrets;
  const more = SecretList.of(asked as string[]);
  if (more.entries.length === 0 && parent.secrets.entries.length > 0)
    throw new SandboxPermissionEscalationError(
      `Cannot derive a child sandbox with secrets []: a child sandbox keeps every secret of its parent and can only add more.\nParent secrets: ${formatPathList([...parent.secrets.entries])}\nList names to withhold in addition, or omit secrets. To let agents read a secret, remove it from the root sandbox's 'secrets' list.`,
    );
  let all: SecretList;
  try {
    all = parent.secrets.union(more);
  } catch (err) {
    throw configError([{ path: ["secrets"], message: (err as Error).message }]);
  }
  // An added name may withhold a mount's own source folder.
  if (all !== parent.secrets) checkMountSources(parent.table, all, "secrets");
  return all;
}

function escalation(
  parent: Policy,
  asked: string,
  problem: string,
  alternative: string,
  path?: string,
) {
  const except = parent.readOnlyInside();
  return new SandboxPermissionEscalationError(
    `Cannot derive a child sandbox with ${asked}: ${problem}.\n` +
      `Parent readable paths: ${formatPathList(parent.readableRoots)}\n` +
      `Parent writable paths: ${formatPathList(parent.writableRoots)}${except.length ? ` (read-only inside: ${except.join(", ")})` : ""}\n` +
      `Child sandboxes can only narrow access, never widen it. ${alternative}`,
    path,
  );
}

function suggest(kind: string, roots: string[], fallback: string): string {
  return roots.length > 0
    ? `Use ${kind} inside those paths, for example ${JSON.stringify(roots[0])}.`
    : fallback;
}

/** Resolves one allowlist entry in the parent, checking the parent permits it. */
function entryArea(
  parent: Policy,
  entry: string,
  kind: "allowRead" | "allowWrite" | "restrict",
  access: Access,
  probe: EntryProbe,
): Area {
  // Absolute: starts with `/`, or with `\` (read as `/`).
  const lead = entry.charCodeAt(0);
  if (parent.table.form === "root" && lead !== 47 && lead !== 92) {
    throw new InvalidPathError(
      `Invalid path ${quotePath(entry)} in ${kind}: entries must be absolute virtual paths. Use ${quotePath(`/${entry.replace(/^\.?\/*/, "")}`)}.`,
    );
  }
  const v = parent.normalize(entry);
  if (v === null) {
    throw escalation(
      parent,
      `${kind} ${JSON.stringify(entry)}`,
      "it climbs above the sandbox root '/'",
      suggest(kind, parent.readableRoots, ""),
    );
  }
  // The same host path resolveVirtual derives (it looks the mount up alike).
  const mount = parent.table.lookup(v);
  const host = mount === undefined ? "" : parent.table.toHost(mount, v);
  if (host !== "") probe.prepare(host);
  let real: string;
  try {
    real = parent.resolveVirtual(v, access, false, probe.memo).real;
  } catch (err) {
    const refused =
      err instanceof SandboxError &&
      (err.code === "path_not_in_sandbox" || err.code === "path_not_writable");
    if (!refused) throw err;
    const what = `${kind} ${JSON.stringify(entry)}`;
    if (access === "read") {
      throw escalation(
        parent,
        what,
        "the parent sandbox cannot read it",
        suggest(
          `${kind} entries`,
          parent.readableRoots,
          "The parent can read nothing, so derive() with no arguments is the only child.",
        ),
        v,
      );
    }
    throw escalation(
      parent,
      what,
      "the parent sandbox cannot write it",
      suggest(
        "allowWrite entries",
        parent.writableRoots,
        "The parent can write nowhere: use allowRead (or readonly: true) instead.",
      ),
      v,
    );
  }
  return { path: v, exact: probe.isFile(host, real) };
}

function toList(v: string | string[]): string[] {
  return typeof v === "string" ? [v] : v;
}

/** Computes the policy of `parent.derive(opts)`. */
export function derivePolicy(parent: Policy, rawOpts: DeriveOptions | undefined): Policy {
  const opts = checkOptions(rawOpts, DERIVE_KEYS, "derive") as DeriveOptions;
  if (opts.readonly === false && parent.writableRoots.length === 0) {
    throw escalation(
      parent,
      "readonly: false",
      "the parent sandbox has no write access",
      "Omit readonly, or pass readonly: true.",
    );
  }
  // One probe for all entries: nested entries share their walks.
  const probe = new EntryProbe();
  const writeAreas =
    opts.allowWrite === undefined
      ? undefined
      : toList(opts.allowWrite).map((e) => entryArea(parent, e, "allowWrite", "write", probe));
  let readAreas: Area[] | undefined;
  if (opts.allowRead !== undefined) {
    readAreas = toList(opts.allowRead).map((e) => entryArea(parent, e, "allowRead", "read", probe));
  } else if (writeAreas !== undefined) {
    readAreas = writeAreas; // write implies read; ∩ with the parent's reads keeps it honest
  }
  const inherit = opts.inherit ?? false;
  const read = readAreas ? intersect(parent.read, readAreas) : inherit ? parent.read : [];
  let write = writeAreas
    ? intersect(parent.write, writeAreas)
    : readAreas
      ? []
      : inherit
        ? parent.write
        : [];
  if (opts.readonly === true) write = [];
  // A confined parent's child stays confined (never wider than its parent).
  return new Policy(
    parent.table,
    read,
    write,
    childSecrets(parent, opts.secrets),
    parent.confinement,
  );
}

/** Computes the policy of `parent.restrict(opts)`. */
export function restrictPolicy(parent: Policy, rawOpts: RestrictOptions | undefined): Policy {
  const opts = checkOptions(rawOpts, RESTRICT_KEYS, "restrict") as RestrictOptions;
  const area: Area =
    opts.restrict === undefined
      ? { path: "/", exact: false }
      : entryArea(parent, opts.restrict, "restrict", "read", new EntryProbe());
  const read = intersect(parent.read, [area]);
  const write = opts.readonly === true ? [] : intersect(parent.write, [area]);
  const secrets = childSecrets(parent, opts.secrets);
  const child = new Policy(parent.table, read, write, secrets, parent.confinement);
  if (opts.readonly === false && child.writableRoots.length === 0) {
    throw escalation(
      parent,
      `restrict ${JSON.stringify(area.path)} and readonly: false`,
      `the parent sandbox cannot write anywhere under '${area.path}'`,
      parent.writableRoots.length > 0
        ? `Pass readonly: true, or restrict to a writable path such as ${JSON.stringify(parent.writableRoots[0])}.`
        : "Pass readonly: true, or omit readonly.",
      area.path,
    );
  }
  return child;
}
