/**
 * The sandbox policy: which virtual paths may be read or written, and where
 * they really lead. Pure decisions plus one realpath per resolve.
 *
 * A policy is a shared mount table plus two area sets (read, write). Derived
 * policies share the table and only ever get smaller area sets.
 */
import { lstatSync, statSync } from "node:fs";
import {
  formatPathList,
  InvalidPathError,
  notFound,
  notInSandbox,
  notWritable,
  type SandboxError,
  secretWithheld,
  suffixNotAllowed,
  wrapFsError,
} from "../errors/index.js";
import { type Area, canonicalize, setCovers } from "./areas.js";
import { type Confinement, confinementAllows, unapprovedError } from "./confinement.js";
import type { Mount, MountTable } from "./mount-table.js";
import { type RealpathMemo, realpathLoose } from "./real-path.js";
import type { SecretList } from "./secrets.js";
import { baseName, isWithin, normalizeVirtualPath, parentPath, suffixOf } from "./virtual-path.js";

/** The access asked for. */
export type Access = "read" | "write";

/** Why a virtual path is refused (no fs consulted). */
type Denial = "outside" | "readonly" | "protected" | "secret" | "suffix" | "unapproved";

/** A successful resolution. */
export interface Resolved {
  /** Canonical virtual path as asked. */
  virtual: string;
  /** Real host path (may not exist yet). */
  real: string;
  /** The mount the virtual path falls in. */
  mount: Mount;
}

/** Read/write areas over a shared mount table, and the names withheld. */
export class Policy {
  readonly table: MountTable;
  readonly read: readonly Area[];
  readonly write: readonly Area[];
  /**
   * Names withheld from every access (the `secrets` list, with whatever a
   * derived sandbox added): a path with a matching segment is refused for
   * reading and writing, and left out of every listing.
   */
  readonly secrets: SecretList;
  /**
   * Set on the sandbox one operation runs on under approvals: in the mounts
   * that ask approval, only what that operation was approved for (see
   * confinement.ts). Undefined everywhere else.
   */
  readonly confinement: Confinement | undefined;
  #readableRoots: string[] | undefined;
  #writableRoots: string[] | undefined;

  constructor(
    table: MountTable,
    read: readonly Area[],
    write: readonly Area[],
    secrets: SecretList,
    confinement?: Confinement,
  ) {
    this.table = table;
    this.read = canonicalize(read);
    this.write = canonicalize(write);
    this.secrets = secrets;
    this.confinement = confinement;
  }

  /** Virtual paths of the readable areas. */
  get readableRoots(): string[] {
    this.#readableRoots ??= this.read.map((a) => a.path);
    return this.#readableRoots;
  }

  /**
   * Virtual paths where a write is permitted at the path itself: write areas
   * on writable mounts, plus writable mounts nested under a read-only part.
   */
  get writableRoots(): string[] {
    if (this.#writableRoots) return this.#writableRoots;
    const candidates = new Map<string, boolean>();
    for (const a of this.write) candidates.set(a.path, a.exact);
    for (const m of this.table.mounts) {
      if (m.target !== "/" && !candidates.has(m.target) && setCovers(this.write, m.target))
        candidates.set(m.target, false);
    }
    const ok = [...candidates.keys()].filter((c) => {
      const m = this.table.lookup(c);
      return m !== undefined && !m.readonly && !this.table.isProtected(c);
    });
    const readOnlyTargets = this.table.mounts.filter((m) => m.readonly).map((m) => m.target);
    this.#writableRoots = ok
      .filter(
        (c) =>
          !ok.some(
            (r) =>
              r !== c &&
              !candidates.get(r) &&
              isWithin(c, r) &&
              !readOnlyTargets.some((t) => t !== r && isWithin(t, r) && isWithin(c, t)),
          ),
      )
      .sort();
    return this.#writableRoots;
  }

  /** Read-only mounts lying strictly inside a writable root (for messages). */
  readOnlyInside(): string[] {
    const roots = this.writableRoots;
    return this.table.mounts
      .filter((m) => m.readonly && roots.some((r) => r !== m.target && isWithin(m.target, r)))
      .map((m) => m.target)
      .sort();
  }

  /** Normalizes and screens a user path; `null` if it climbs above `/`. */
  normalize(path: string): string | null {
    const v = normalizeVirtualPath(
      path,
      this.table.names ? { names: this.table.names } : undefined,
    );
    // A pasted host path is caught in its normalized form, and in its raw form
    // too, before `..` could carry it out of its root.
    let pasted = v === null ? undefined : this.table.virtualForHostPath(v);
    if (pasted === undefined && v !== path && typeof path === "string") {
      pasted = this.table.virtualForHostPath(path.replaceAll("\\", "/").replace(/\/{2,}/g, "/"));
    }
    if (pasted !== undefined) {
      const equivalent = normalizeVirtualPath(pasted);
      if (equivalent === null) {
        throw new InvalidPathError(
          `Invalid path: that is a host path, and it leads outside the sandbox. Paths here are virtual (the sandbox root is '/').\nReadable paths: ${formatPathList(this.readableRoots)}`,
        );
      }
      throw new InvalidPathError(
        `Invalid path: that is a host path, but paths here are virtual (the sandbox root is '/'). Use '${equivalent}' instead.`,
        equivalent,
      );
    }
    return v;
  }

  /** Lexical verdict on a canonical virtual path (no fs). */
  deny(v: string, access: Access, checkSuffix = true): Denial | undefined {
    const m = this.table.lookup(v);
    if (m === undefined) return "outside";
    if (access === "read") {
      if (!setCovers(this.read, v)) return "outside";
      if (this.secrets.covers(v)) return "secret";
    } else {
      if (!setCovers(this.write, v)) return setCovers(this.read, v) ? "readonly" : "outside";
      if (this.secrets.covers(v)) return "secret";
      if (m.readonly) return "readonly";
      if (this.table.isProtected(v)) return "protected";
    }
    const c = this.confinement;
    if (c !== undefined && !confinementAllows(c, m.target, v, access)) return "unapproved";
    if (checkSuffix && !this.table.suffixAllowed(m, v)) return "suffix";
    return undefined;
  }

  /**
   * Resolves a user path for an access: lexical check, realpath, then the
   * real location mapped back and checked again.
   * @throws SandboxError (never with a host path)
   */
  resolve(path: string, access: Access, checkSuffix = true): Resolved {
    const v = this.normalize(path);
    if (v === null) throw this.climbError(path, access);
    return this.resolveVirtual(v, access, checkSuffix);
  }

  /**
   * {@link resolve} for an already-canonical virtual path. `memo` shares
   * realpath work between calls of one operation (see {@link RealpathMemo}).
   */
  resolveVirtual(v: string, access: Access, checkSuffix = true, memo?: RealpathMemo): Resolved {
    const mount = this.table.lookup(v);
    const host = mount ? this.table.toHost(mount, v) : "";
    const denial = this.deny(v, access, checkSuffix);
    if (denial === "secret") throw this.secretError(v, access, host, memo);
    if (denial !== undefined && !(denial === "suffix" && isDirectory(host))) {
      throw this.denialError(denial, v, access);
    }
    let real: string;
    try {
      real = realpathLoose(host, memo);
    } catch (err) {
      throw wrapFsError(err, "resolve", v);
    }
    if (real !== host || mount!.hasNestedSource) this.checkReal(real, v, access, checkSuffix);
    return { virtual: v, real, mount: mount! };
  }

  /**
   * Checks that a real host path maps back to a permitted virtual location.
   * Used after resolve and again by the I/O layer on opened descriptors.
   * @returns the virtual location of `real`
   */
  checkReal(real: string, asked: string, access: Access, checkSuffix = true): string {
    const v2 = this.table.mapBack(real);
    if (v2 === undefined) throw this.linkError(asked, access, undefined);
    if (v2 !== asked) {
      const d = this.deny(v2, access, checkSuffix);
      if (d !== undefined && !(d === "suffix" && isDirectory(real))) {
        if (d === "unapproved") throw unapprovedError(asked, access, v2);
        if (d === "secret")
          throw access === "read" && !existsQuietly(real)
            ? this.notFoundError(asked)
            : this.secretLinkError(asked, access, v2);
        if (d === "suffix")
          throw suffixNotAllowed(
            asked,
            suffixOf(baseName(v2)),
            this.table.lookup(v2)?.suffixes ?? [],
          );
        throw this.linkError(asked, access, v2);
      }
    }
    return v2;
  }

  /** Error for a path whose `..` climbs above `/`. */
  climbError(path: string, access: Access): SandboxError {
    return notInSandbox(
      path,
      this.readableRoots,
      "it climbs above the sandbox root '/'",
      this.writableLine(access),
    );
  }

  /** Error for a lexical denial. */
  denialError(d: Denial, v: string, access: Access): SandboxError {
    switch (d) {
      case "outside":
        return notInSandbox(v, this.readableRoots, undefined, this.writableLine(access));
      case "readonly":
        return notWritable(v, this.writableRoots, undefined, this.readOnlyInside());
      case "protected":
        return notWritable(
          v,
          this.writableRoots,
          this.table.protectionReason(v),
          this.readOnlyInside(),
        );
      case "suffix": {
        const m = this.table.lookup(v);
        return suffixNotAllowed(v, suffixOf(baseName(v)), m?.suffixes ?? []);
      }
      case "unapproved":
        return unapprovedError(v, access);
      case "secret":
        return secretWithheld(v, { access, entry: this.secrets.find(v)?.entry });
    }
  }

  /**
   * The refusal of secret `v`: for a read of a secret that is not there, a
   * plain not-found (withheld means "exists"), said only where the path
   * leads to a place the policy would otherwise show (no existence is
   * told of anything outside); otherwise {@link SecretWithheldError}.
   */
  secretError(v: string, access: Access, host: string, memo?: RealpathMemo): SandboxError {
    const refusal = this.denialError("secret", v, access);
    if (access !== "read" || host === "") return refusal;
    let real: string;
    try {
      real = realpathLoose(host, memo);
      const v2 = this.table.mapBack(real);
      const d = v2 === undefined ? "outside" : this.deny(v2, "read", false);
      if (d !== undefined && d !== "secret") return refusal;
    } catch {
      return refusal;
    }
    return existsQuietly(real) ? refusal : this.notFoundError(v);
  }

  /** Error for a path that leads (through a link) to the secret `leadsTo`. */
  secretLinkError(asked: string, access: Access, leadsTo: string): SandboxError {
    return secretWithheld(asked, {
      access,
      via: leadsTo,
      entry: this.secrets.find(leadsTo)?.entry,
    });
  }

  /** Error for a link (or a real location) that leads somewhere refused. */
  linkError(asked: string, access: Access, leadsTo: string | undefined): SandboxError {
    // Name the link's target only where the caller may look; elsewhere it
    // would reveal names outside its areas.
    if (leadsTo !== undefined && !setCovers(this.read, leadsTo)) leadsTo = undefined;
    if (leadsTo === undefined) {
      return notInSandbox(
        asked,
        this.readableRoots,
        "it leads (through a link) to a location outside the sandbox",
        this.writableLine(access),
      );
    }
    if (access === "write" && setCovers(this.read, leadsTo)) {
      return notWritable(
        asked,
        this.writableRoots,
        `it leads (through a link) to '${leadsTo}', which is not writable`,
        this.readOnlyInside(),
      );
    }
    return notInSandbox(
      asked,
      this.readableRoots,
      `it leads (through a link) to '${leadsTo}', which is not readable`,
      this.writableLine(access),
    );
  }

  writableLine(access: Access): string[] | undefined {
    return access === "write" ? this.writableRoots : undefined;
  }

  /**
   * A not-found error naming the nearest existing readable directory above
   * `v`. The ancestors share one realpath walk (a memo), so a deep missing
   * path costs O(depth) syscalls, not O(depth²).
   */
  notFoundError(v: string): SandboxError {
    const memo: RealpathMemo = new Map();
    for (let dir = parentPath(v); ; dir = parentPath(dir)) {
      const m = this.table.lookup(dir);
      // Known from the walk already done for a deeper folder: nothing there.
      const absent = m !== undefined && memo.get(this.table.toHost(m, dir))?.absent === true;
      if (!absent && this.deny(dir, "read", false) === undefined) {
        try {
          const { real } = this.resolveVirtual(dir, "read", false, memo);
          if (isDirectory(real)) return notFound(v, dir);
        } catch {
          // keep climbing
        }
      }
      if (dir === "/") return notFound(v);
    }
  }

  /** True if the policy permits anything at or below `v` for the access. */
  reachesBelow(v: string, access: Access): boolean {
    const set = access === "read" ? this.read : this.write;
    return set.some((a) => isWithin(a.path, v) || (!a.exact && isWithin(v, a.path)));
  }
}

function existsQuietly(real: string): boolean {
  try {
    return lstatSync(real, { throwIfNoEntry: false }) !== undefined;
  } catch {
    return true;
  }
}

function isDirectory(host: string): boolean {
  if (host === "") return false;
  try {
    return statSync(host, { throwIfNoEntry: false })?.isDirectory() ?? false;
  } catch {
    return false;
  }
}
