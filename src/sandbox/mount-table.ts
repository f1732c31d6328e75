/**
 * The mount table: virtual → host mapping and its inverse.
 *
 * Built once per `createSandbox` and shared, unchanged, by every sandbox
 * derived from it. Mounts are kept sorted longest target first and match on
 * whole segments only, so `/cache` never matches `/cache2`.
 */
import { statSync } from "node:fs";
import { isAbsolute, resolve } from "node:path";
import type { ParsedMount, ParsedSandboxConfig } from "../config/sandbox-config.js";
import { type ConfigIssue, configError, escapeControl, quotePath } from "../errors/index.js";
import { type CodeLocation, placeHostCode, refuseInsideHostCode } from "./host-code-places.js";
import { checkMountSourcePath } from "./mount-source.js";
import { realpathLoose } from "./real-path.js";
import { baseName, isWithin } from "./virtual-path.js";

/** A mount with its host source realpath'd. */
export interface Mount extends ParsedMount {
  /** Real host path of the source. */
  readonly source: string;
  /** True if another mount's source is this one's or lies inside it (map-back may differ). */
  readonly hasNestedSource: boolean;
  /** Device and inode of the source when the sandbox was created (OS enforcement checks them). */
  readonly dev: number;
  readonly ino: number;
}

/** A host-path prefix an LLM might paste, and the virtual path it stands for. */
interface HostHint {
  host: string;
  target: string;
}

/** Virtual ↔ host mapping shared by a sandbox and all its descendants. */
export class MountTable {
  /** All mounts (root included), longest target first. */
  readonly mounts: readonly Mount[];
  /** All mounts, most specific source first; read-only first on a tie. */
  readonly bySource: readonly Mount[];
  /** Names of the named-paths form, for `name:rel` paths. */
  readonly names: ReadonlySet<string> | undefined;
  readonly form: "root" | "named";
  readonly suffixes: string[] | undefined;
  readonly maxFileBytes: number | undefined;
  readonly #protectedNames: readonly string[];
  readonly #protectedNamesGiven: readonly string[];
  readonly #protectedPaths: readonly string[];
  /** Protected paths that hold host code, and what each is (for messages). */
  readonly #hostCode: ReadonlyMap<string, string>;
  readonly #hints: readonly HostHint[];

  /**
   * @param hostCode the host's code locations (see `findHostCode`): writable
   *   mounts that hold one get it protected; one inside one is refused.
   *   Omitted when rebuilding a table whose protected list already has them.
   */
  constructor(config: ParsedSandboxConfig, basePath: string, hostCode?: readonly CodeLocation[]) {
    const issues: ConfigIssue[] = [];
    const keys: (string | number)[][] = [];
    const hints: HostHint[] = [];
    const raw: ParsedMount[] = config.rootMount
      ? [config.rootMount, ...config.mounts]
      : [...config.mounts];
    const real: Omit<Mount, "hasNestedSource">[] = [];
    const given: { path: string; target: string; key: (string | number)[] }[] = [];
    raw.forEach((m, i) => {
      const key =
        config.form === "named"
          ? ["paths", m.target.slice(1), "root"]
          : m.target === "/"
            ? ["root"]
            : ["mounts", i - 1, "source"];
      const givenPath = isAbsolute(m.source) ? resolve(m.source) : resolve(basePath, m.source);
      let source: string;
      let st: ReturnType<typeof statSync>;
      // Setup errors go to the host's own code, whose developer needs the
      // folder it looked at (never to a thread or a model: see policy-wire).
      const folder = () => describeSource(m.source, givenPath, basePath);
      try {
        source = realpathLoose(givenPath);
        st = statSync(source, { throwIfNoEntry: false });
        if (!st) {
          issues.push({
            path: key,
            message: `the folder for '${m.target}' does not exist: ${folder()}`,
          });
          return;
        }
        if (!st.isDirectory()) {
          issues.push({
            path: key,
            message: `the source for '${m.target}' is not a directory: ${folder()}`,
          });
          return;
        }
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        issues.push({
          path: key,
          message: `the folder for '${m.target}' cannot be opened${code ? ` (${code})` : ""}: ${folder()}`,
        });
        return;
      }
      real.push({ ...m, source, dev: st.dev, ino: st.ino });
      given.push({ path: givenPath, target: m.target, key });
      keys.push(key);
      for (const host of new Set([givenPath, source]))
        if (host !== "/") hints.push({ host, target: m.target });
    });
    if (hostCode) issues.push(...refuseInsideHostCode(real, keys, hostCode));
    if (issues.length > 0) throw configError(issues);
    // No source may be re-pointed by a command: see `mount-source.ts`.
    const writable = real.filter((m) => !m.readonly);
    for (const g of given) {
      const issue = checkMountSourcePath(g.path, g.target, g.key, writable);
      if (issue !== undefined) issues.push(issue);
    }
    if (issues.length > 0) throw configError(issues);

    const mounts: Mount[] = real.map((m) => ({
      ...m,
      hasNestedSource: real.some((o) => o !== m && isWithin(o.source, m.source)),
    }));
    this.mounts = [...mounts].sort((a, b) => b.target.length - a.target.length);
    this.bySource = [...mounts].sort(
      (a, b) => b.source.length - a.source.length || Number(b.readonly) - Number(a.readonly),
    );
    this.names = config.form === "named" ? new Set(config.names) : undefined;
    this.form = config.form;
    this.suffixes =
      config.form === "root" ? config.suffixes : uniformOrUndefined(mounts.map((m) => m.suffixes));
    this.maxFileBytes =
      config.form === "root"
        ? config.maxFileBytes
        : uniformOrUndefined(mounts.map((m) => m.maxFileBytes));
    // Matched lower-cased: on a case-insensitive file system `.GIT` is the
    // same folder. Kept as given too: on a case-sensitive one the command
    // must not be able to create the name exactly as the host's tools read it.
    this.#protectedNamesGiven = [...new Set(config.protected.filter((p) => !p.startsWith("/")))];
    this.#protectedNames = this.#protectedNamesGiven.map((p) => p.toLowerCase());
    this.#hostCode = hostCode ? placeHostCode(this, hostCode) : new Map();
    this.#protectedPaths = [
      ...config.protected.filter((p) => p.startsWith("/")),
      ...[...this.#hostCode.keys()].filter((p) => !config.protected.includes(p)),
    ];
    this.#hints = hints.sort((a, b) => b.host.length - a.host.length);
  }

  /** The mount a canonical virtual path falls in, if any. */
  lookup(v: string): Mount | undefined {
    for (const m of this.mounts) if (isWithin(v, m.target)) return m;
    return undefined;
  }

  /** The host path of a virtual path inside mount `m` (not realpath'd). */
  toHost(m: Mount, v: string): string {
    const rest = m.target === "/" ? (v === "/" ? "" : v) : v.slice(m.target.length);
    if (rest === "") return m.source;
    return m.source === "/" ? rest : m.source + rest;
  }

  /**
   * The virtual location of a real host path: the most specific mount source
   * that contains it and whose virtual location is not shadowed by another
   * mount. `undefined` when it maps to no virtual location.
   */
  mapBack(real: string): string | undefined {
    for (const m of this.bySource) {
      if (!isWithin(real, m.source)) continue;
      const rest = m.source === "/" ? (real === "/" ? "" : real) : real.slice(m.source.length);
      const v = m.target === "/" ? rest || "/" : m.target + rest;
      if (this.lookup(v) === m) return v;
    }
    return undefined;
  }

  /**
   * The `protected` list as this table applies it: absolute virtual paths,
   * then folder names (as given; matched regardless of case). Fed back to
   * the constructor, it yields the same decisions (used to carry a policy to
   * a pool thread).
   */
  get protectedEntries(): string[] {
    return [...this.#protectedPaths, ...this.#protectedNamesGiven];
  }

  /** True if writes to `v` are refused by the `protected` list. */
  isProtected(v: string): boolean {
    for (const p of this.#protectedPaths) if (isWithin(v, p)) return true;
    if (this.#protectedNames.length === 0) return false;
    const lower = v.toLowerCase();
    for (const name of this.#protectedNames) {
      let i = lower.indexOf(`/${name}`);
      while (i >= 0) {
        const end = i + 1 + name.length;
        if (end === lower.length || lower.charCodeAt(end) === 47) return true;
        i = lower.indexOf(`/${name}`, i + 1);
      }
    }
    return false;
  }

  /**
   * The protected path strictly below `v`, if any (the shortest): moving or
   * removing `v`, or putting a moved entry (a link, say) at `v`, would carry
   * the protected place away or make it lead elsewhere — the file API's
   * counterpart of the shell's pillar binds.
   */
  protectedBelow(v: string): string | undefined {
    let found: string | undefined;
    for (const p of this.#protectedPaths)
      if (p !== v && isWithin(p, v) && (found === undefined || p.length < found.length)) found = p;
    return found;
  }

  /** Why moving or removing `v` is refused: it holds the protected `entry` (for messages). */
  holdingReason(entry: string): string {
    const what = this.#hostCode.get(entry);
    return what === undefined
      ? `it holds a protected entry (${quotePath(entry)}) where writes are refused, which must stay where it is`
      : `it holds ${quotePath(entry)} (${what}: code or packages the host process runs), which must stay where it is`;
  }

  /** The protected entry that `v` falls under (the outermost path), for messages. */
  protectedEntryFor(v: string): string {
    let found: string | undefined;
    for (const p of this.#protectedPaths)
      if (isWithin(v, p) && (found === undefined || p.length < found.length)) found = p;
    if (found !== undefined) return found;
    const segments = v.toLowerCase().split("/");
    return this.#protectedNames.find((n) => segments.includes(n)) ?? "";
  }

  /** Why a write to protected `v` is refused, naming the entry (for messages). */
  protectionReason(v: string): string {
    const entry = this.protectedEntryFor(v);
    const what = this.#hostCode.get(entry);
    if (what === undefined)
      return `it is inside a protected folder (${quotePath(entry)}) where writes are refused`;
    return `${v === entry ? "it is" : "it is inside"} ${quotePath(entry)} (${what}: code or packages the host process runs), where agents cannot write`;
  }

  /** True if the mount's suffix allowlist admits the file name. */
  suffixAllowed(m: Mount, v: string): boolean {
    if (!m.suffixes) return true;
    const name = baseName(v).toLowerCase();
    for (const s of m.suffixes) if (name.endsWith(s.toLowerCase())) return true;
    return false;
  }

  /** If `v` looks like a pasted host path, the virtual path it stands for. */
  virtualForHostPath(v: string): string | undefined {
    for (const h of this.#hints) {
      if (!isWithin(v, h.host)) continue;
      const rest = v.slice(h.host.length);
      return h.target === "/" ? rest || "/" : h.target + rest;
    }
    return undefined;
  }
}

function uniformOrUndefined<T>(values: T[]): T | undefined {
  const first = values[0];
  return values.every((v) => JSON.stringify(v) === JSON.stringify(first)) ? first : undefined;
}

/**
 * The host folder a mount source names, for setup errors: the resolved path
 * and, for a relative source, what it was resolved against.
 */
function describeSource(written: string, resolved: string, basePath: string): string {
  const at = `'${escapeControl(resolved)}'`;
  return isAbsolute(written)
    ? at
    : `${at} ('${escapeControl(written)}' resolved against basePath '${escapeControl(basePath)}')`;
}
