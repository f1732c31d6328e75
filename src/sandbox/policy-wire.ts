/**
 * A policy in plain-object form, for trusted host threads (the heavy-work
 * pool): the mount table's entries, the read and write areas, the suffix
 * and size rules, the `protected` list and the secrets — everything `Policy` decides
 * with, nothing else.
 *
 * Rebuilding runs the `MountTable` constructor again, which realpaths and
 * stats every mount source. That re-resolution is allowed only because its
 * result is then compared with the host's, mount by mount (real source,
 * device, inode, nesting, and both lookup orders); any difference refuses
 * the rebuild, so a pool thread never decides with a table the host does
 * not have. The wire comes from host code only, never from an agent.
 */
import type { ParsedMount, ParsedSandboxConfig } from "../config/sandbox-config.js";
import { ioError, type SandboxError } from "../errors/index.js";
import type { Area } from "./areas.js";
import { type ConfinementWire, confinementFromWire, confinementToWire } from "./confinement.js";
import { type Mount, MountTable } from "./mount-table.js";
import { Policy } from "./policy.js";
import { SecretList } from "./secrets.js";

/** Format version; a thread refuses any other. */
const WIRE_VERSION = 2;

/** One mount as the host's table holds it. */
export interface MountWire extends ParsedMount {
  /** Real host path of the source, as the host resolved it. */
  source: string;
  hasNestedSource: boolean;
  dev: number;
  ino: number;
}

/** A {@link Policy} in structured-cloneable form. */
export interface PolicyWire {
  version: typeof WIRE_VERSION;
  form: "root" | "named";
  /** Names of the named-paths form (empty in root form). */
  names: string[];
  /** Table-wide suffix allowlist, as `describe()` reports it. */
  suffixes: string[] | undefined;
  /** Table-wide byte cap, as `describe()` reports it. */
  maxFileBytes: number | undefined;
  /** Protected paths, then protected names (as given). */
  protected: string[];
  /** Secret name patterns (the policy's own list, additions included). */
  secrets: string[];
  /** Mounts in the host table's by-source order (map-back order). */
  mounts: MountWire[];
  /** Mount targets in the host table's lookup order (longest first). */
  lookupOrder: string[];
  read: Area[];
  write: Area[];
  /** What one operation was approved for, when it runs confined (confinement.ts). */
  confinement?: ConfinementWire;
}

const wires = new WeakMap<Policy, PolicyWire>();

/**
 * The wire form of a policy. Policies never change, so the form is built
 * once per policy and shared (treat it as read-only).
 */
export function serializePolicy(policy: Policy): PolicyWire {
  const cached = wires.get(policy);
  if (cached) return cached;
  const t = policy.table;
  const wire: PolicyWire = {
    version: WIRE_VERSION,
    form: t.form,
    names: t.names ? [...t.names] : [],
    suffixes: t.suffixes ? [...t.suffixes] : undefined,
    maxFileBytes: t.maxFileBytes,
    protected: t.protectedEntries,
    secrets: [...policy.secrets.entries],
    mounts: t.bySource.map(toMountWire),
    lookupOrder: t.mounts.map((m) => m.target),
    read: policy.read.map((a) => ({ path: a.path, exact: a.exact })),
    write: policy.write.map((a) => ({ path: a.path, exact: a.exact })),
    ...(policy.confinement ? { confinement: confinementToWire(policy.confinement) } : {}),
  };
  wires.set(policy, wire);
  return wire;
}

/**
 * Rebuilds a real {@link Policy} from its wire form, re-resolving every mount
 * source and refusing unless the result equals what the host resolved.
 * @throws IoError when the wire is malformed or a mount source changed on
 *   disk since the sandbox was created (no host path in the message)
 */
export function deserializePolicy(wire: PolicyWire): Policy {
  if (wire?.version !== WIRE_VERSION || !Array.isArray(wire.mounts)) throw refusal();
  // Never decide with fewer secrets than the host: a malformed list refuses.
  const secrets = SecretList.parse(wire.secrets);
  if (!(secrets instanceof SecretList)) throw refusal();
  // Every mount goes in as a plain mount, in the host's by-source order: the
  // constructor's stable sorts then reproduce both of the host's orders,
  // which decide ties in lookup and map-back.
  const config: ParsedSandboxConfig = {
    form: wire.form,
    root: undefined,
    readonly: false,
    suffixes: wire.suffixes,
    maxFileBytes: wire.maxFileBytes,
    mounts: wire.mounts.map(toParsedMount),
    rootMount: undefined,
    protected: wire.protected,
    secrets: [...secrets.entries],
    names: wire.names,
  };
  let table: MountTable;
  try {
    table = new MountTable(config, "/");
  } catch {
    throw refusal();
  }
  if (!sameTable(table, wire)) throw refusal();
  if (wire.confinement === undefined) return new Policy(table, wire.read, wire.write, secrets);
  // A malformed confinement refuses: never decide wider than the host would.
  const confinement = confinementFromWire(wire.confinement);
  if (confinement === undefined) throw refusal();
  return new Policy(table, wire.read, wire.write, secrets, confinement);
}

function toMountWire(m: Mount): MountWire {
  return {
    source: m.source,
    target: m.target,
    readonly: m.readonly,
    suffixes: m.suffixes ? [...m.suffixes] : undefined,
    maxFileBytes: m.maxFileBytes,
    readApproval: m.readApproval,
    writeApproval: m.writeApproval,
    hasNestedSource: m.hasNestedSource,
    dev: m.dev,
    ino: m.ino,
  };
}

function toParsedMount(m: MountWire): ParsedMount {
  return {
    source: m.source,
    target: m.target,
    readonly: m.readonly,
    suffixes: m.suffixes,
    maxFileBytes: m.maxFileBytes,
    readApproval: m.readApproval,
    writeApproval: m.writeApproval,
  };
}

/** True if the rebuilt table resolved and ordered every mount as the host's did. */
function sameTable(table: MountTable, wire: PolicyWire): boolean {
  if (table.bySource.length !== wire.mounts.length) return false;
  if (table.mounts.map((m) => m.target).join("\0") !== wire.lookupOrder.join("\0")) return false;
  if (table.suffixes?.join("\0") !== wire.suffixes?.join("\0")) return false;
  if (table.maxFileBytes !== wire.maxFileBytes) return false;
  return table.bySource.every((m, i) => {
    const w = wire.mounts[i];
    return (
      w !== undefined &&
      m.target === w.target &&
      m.source === w.source &&
      m.dev === w.dev &&
      m.ino === w.ino &&
      m.hasNestedSource === w.hasNestedSource &&
      m.readonly === w.readonly &&
      m.maxFileBytes === w.maxFileBytes &&
      m.suffixes?.join("\0") === w.suffixes?.join("\0")
    );
  });
}

function refusal(): SandboxError {
  return ioError(
    "the policy check",
    undefined,
    "the sandbox's folders changed on disk since it was created, so this operation was refused; create the sandbox again",
  );
}
