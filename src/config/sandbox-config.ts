/**
 * Sandbox configuration: strict zod schemas that accept both the TypeScript
 * camelCase keys and the YAML snake_case keys, and normalize to one shape.
 *
 * Validation happens here, at the public edge; the sandbox trusts what this
 * module returns.
 */
import { z } from "zod";
import { type ConfigIssue, configError } from "../errors/index.js";
import { DEFAULT_PROTECTED } from "../sandbox/protected-defaults.js";
import { DEFAULT_SECRETS, SecretList } from "../sandbox/secrets.js";
import { normalizeVirtualPath } from "../sandbox/virtual-path.js";
import { toConfigIssues } from "./config-issues.js";

export { toConfigIssues } from "./config-issues.js";

/** A mount in object form. */
export interface MountConfig {
  /** Host directory (absolute, or relative to `basePath`). */
  source: string;
  /** Absolute virtual path it appears at, e.g. `/cache`. */
  target: string;
  /** Default false. The root's `readonly: true` overrides it. */
  readonly?: boolean;
  /** This mount's own approval flags (default: the root's). Consulted by the runtime, never by `Sandbox`. */
  readApproval?: boolean;
  writeApproval?: boolean;
}

/** One entry of the legacy named-paths form. */
export interface NamedPathConfig {
  root: string;
  /** `ro` (default) or `rw`. */
  mode?: "ro" | "rw";
  suffixes?: string[];
  maxFileBytes?: number;
  readApproval?: boolean;
  writeApproval?: boolean;
}

/**
 * Sandbox configuration (camelCase; `parseSandboxConfig` also takes the YAML
 * snake_case spellings). Exactly one of `root` and `paths`.
 */
export interface SandboxConfig {
  /** Host directory that becomes virtual `/`. */
  root?: string;
  /** Default false; true makes the root and every mount read-only. */
  readonly?: boolean;
  /** Optional allowlist of file suffixes for reads and writes, e.g. `[".md"]`. */
  suffixes?: string[];
  /** Optional cap, in bytes, on reads and writes. */
  maxFileBytes?: number;
  /** Consulted by tools and the runtime, never by `Sandbox` itself. */
  readApproval?: boolean;
  /** Consulted by tools and the runtime, never by `Sandbox` itself. */
  writeApproval?: boolean;
  /** Extra mounts: objects, or Docker short form `SOURCE:TARGET[:ro]`. */
  mounts?: (MountConfig | string)[];
  /**
   * Folder or file names (matched at any depth), or absolute virtual paths,
   * no write may go under. Default: `.git`, shell rc files, `.gitconfig`,
   * `.gitmodules`, `.husky`, `.vscode`, `.idea`, `.claude`, `.mcp.json`,
   * `.envrc`, `.npmrc`, `.yarnrc`, `.yarnrc.yml`, `.pnpmfile.cjs`
   * (`DEFAULT_PROTECTED`); `[]` protects nothing.
   */
  protected?: string[];
  /**
   * Name patterns (`*`, `?`; matched at any depth, regardless of case)
   * withheld from every operation, listing, search and shell command.
   * Default: `.env`, `.env.*`, `*.pem`, `*.key`, SSH keys, `.npmrc`,
   * `.netrc`, `.git-credentials`, `.aws/`, `.ssh/` (`DEFAULT_SECRETS`);
   * `[]` withholds nothing.
   */
  secrets?: string[];
  /** Legacy named-paths form: each name becomes a mount at `/name`. */
  paths?: Record<string, NamedPathConfig>;
  /** Dynamic expansion (read by the host, never by `Sandbox`); see `createHost({ dynamic })`. */
  dynamic?: { enabled: boolean; ceiling?: string | string[] };
}

/** A mount after validation (trusted by the sandbox). */
export interface ParsedMount {
  source: string;
  target: string;
  readonly: boolean;
  suffixes: string[] | undefined;
  maxFileBytes: number | undefined;
  readApproval: boolean;
  writeApproval: boolean;
}

/** A validated, normalized sandbox configuration. */
export interface ParsedSandboxConfig {
  form: "root" | "named";
  /** Host root as written (root form only). */
  root: string | undefined;
  readonly: boolean;
  suffixes: string[] | undefined;
  maxFileBytes: number | undefined;
  /** Mounts other than the root, in configuration order. */
  mounts: ParsedMount[];
  /** The root's own flags (root form). */
  rootMount: ParsedMount | undefined;
  protected: string[];
  /** Secret name patterns (validated). */
  secrets: string[];
  /** Names of the named-paths form (empty in root form). */
  names: string[];
}

const bool = z.boolean();
const suffixList = z.array(z.string().min(1, "a suffix cannot be empty"));
const byteCap = z
  .number()
  .int("expected an integer number of bytes")
  .positive("expected a positive number of bytes");

const mountObject = z.strictObject({
  source: z.string().min(1, "a mount source cannot be empty"),
  target: z.string().min(1, "a mount target cannot be empty"),
  readonly: bool.optional(),
  readApproval: bool.optional(),
  read_approval: bool.optional(),
  writeApproval: bool.optional(),
  write_approval: bool.optional(),
});

const namedPath = z.strictObject({
  root: z.string().min(1, "a root cannot be empty"),
  mode: z.enum(["ro", "rw"]).optional(),
  suffixes: suffixList.optional(),
  maxFileBytes: byteCap.optional(),
  max_file_bytes: byteCap.optional(),
  readApproval: bool.optional(),
  read_approval: bool.optional(),
  writeApproval: bool.optional(),
  write_approval: bool.optional(),
});

const sandboxSchema = z.strictObject({
  root: z.string().min(1, "a root cannot be empty").optional(),
  readonly: bool.optional(),
  suffixes: suffixList.optional(),
  maxFileBytes: byteCap.optional(),
  max_file_bytes: byteCap.optional(),
  readApproval: bool.optional(),
  read_approval: bool.optional(),
  writeApproval: bool.optional(),
  write_approval: bool.optional(),
  mounts: z
    .array(
      z.union([z.string(), mountObject], {
        error: "expected a mount object or a 'SOURCE:TARGET[:ro]' string",
      }),
    )
    .optional(),
  protected: z.array(z.string().min(1, "a protected entry cannot be empty")).optional(),
  secrets: z.array(z.string()).optional(),
  paths: z.record(z.string(), namedPath).optional(),
  // Read by the host (issue 13), never by the Sandbox.
  dynamic: z
    .strictObject({
      enabled: bool,
      ceiling: z.union([z.string().min(1), z.array(z.string().min(1))]).optional(),
    })
    .optional(),
});

/** Picks the camelCase or snake_case spelling of a key (both → an issue). */
function pick<T>(
  obj: Record<string, unknown>,
  camel: string,
  snake: string,
  issues: ConfigIssue[],
  at: (string | number)[],
): T | undefined {
  if (obj[camel] !== undefined && obj[snake] !== undefined) {
    issues.push({
      path: [...at, snake],
      message: `give either '${camel}' or '${snake}', not both`,
    });
  }
  return (obj[camel] ?? obj[snake]) as T | undefined;
}

/** `md` and `.md` both mean `.md`. */
function normalizeSuffixes(list: string[] | undefined): string[] | undefined {
  return list?.map((s) => (s.startsWith(".") ? s : `.${s}`));
}

/** Parses Docker short form `SOURCE:TARGET[:ro|:rw]`. */
function parseShortMount(
  spec: string,
): { source: string; target: string; readonly: boolean } | null {
  let rest = spec;
  let readonly = false;
  if (rest.endsWith(":ro") || rest.endsWith(":rw")) {
    readonly = rest.endsWith(":ro");
    rest = rest.slice(0, -3);
  }
  const colon = rest.lastIndexOf(":");
  if (colon <= 0 || colon === rest.length - 1) return null;
  return { source: rest.slice(0, colon), target: rest.slice(colon + 1), readonly };
}

/**
 * Validates a configured virtual path (mount target, restrict, …): absolute,
 * unless `names` (the named-paths form) lets `name/rel` and `name:rel` in.
 */
export function checkConfigPath(
  value: string,
  what: string,
  at: (string | number)[],
  issues: ConfigIssue[],
  names?: ReadonlySet<string>,
): string | undefined {
  if (names === undefined && !value.startsWith("/")) {
    issues.push({
      path: at,
      message: `${what} must be an absolute virtual path such as '/${value.replace(/^\.?\/*/, "")}'`,
    });
    return undefined;
  }
  let norm: string | null;
  try {
    norm = normalizeVirtualPath(value, names ? { names } : undefined);
  } catch (err) {
    issues.push({ path: at, message: (err as Error).message });
    return undefined;
  }
  if (norm === null) {
    issues.push({ path: at, message: `${what} climbs above '/'` });
    return undefined;
  }
  return norm;
}

/**
 * Validates a sandbox configuration (camelCase or snake_case keys) and
 * returns its normalized form.
 *
 * @param input the raw configuration (from YAML or code)
 * @param opts.source file name to name in the error; `opts.at` key prefix
 * @throws ConfigError listing every issue with its key path
 */
export function parseSandboxConfig(
  input: unknown,
  opts: { source?: string; at?: (string | number)[] } = {},
): ParsedSandboxConfig {
  const at = opts.at ?? [];
  const result = sandboxSchema.safeParse(input);
  if (!result.success) throw configError(toConfigIssues(result.error, at), opts.source);
  const raw = result.data as Record<string, unknown> & z.infer<typeof sandboxSchema>;
  const issues: ConfigIssue[] = [];

  const readonly = raw.readonly ?? false;
  const suffixes = normalizeSuffixes(raw.suffixes);
  const maxFileBytes = pick<number>(raw, "maxFileBytes", "max_file_bytes", issues, at);
  const readApproval = pick<boolean>(raw, "readApproval", "read_approval", issues, at) ?? false;
  const writeApproval = pick<boolean>(raw, "writeApproval", "write_approval", issues, at) ?? false;
  const protectedList = raw.protected ?? [...DEFAULT_PROTECTED];
  protectedList.forEach((p, i) => {
    if (p.includes("\0"))
      issues.push({
        path: [...at, "protected", i],
        message: "a protected entry cannot contain a NUL byte",
      });
  });
  const secrets = SecretList.parse(raw.secrets ?? DEFAULT_SECRETS);
  if (!(secrets instanceof SecretList))
    for (const p of secrets)
      issues.push({
        path: [...at, "secrets", ...(p.index < 0 ? [] : [p.index])],
        message: p.message,
      });

  if ((raw.root === undefined) === (raw.paths === undefined)) {
    issues.push({
      path: at,
      message: "give exactly one of 'root' (a folder seen as '/') and 'paths' (named folders)",
    });
    throw configError(issues, opts.source);
  }

  const mounts: ParsedMount[] = [];
  let rootMount: ParsedMount | undefined;
  const names: string[] = [];
  const base = { suffixes, maxFileBytes, readApproval, writeApproval };

  if (raw.root !== undefined) {
    rootMount = { source: raw.root, target: "/", readonly, ...base };
    (raw.mounts ?? []).forEach((m, i) => {
      const where = [...at, "mounts", i];
      const spec =
        typeof m === "string"
          ? parseShortMount(m)
          : { source: m.source, target: m.target, readonly: m.readonly ?? false };
      if (!spec) {
        issues.push({
          path: where,
          message: `expected 'SOURCE:TARGET' or 'SOURCE:TARGET:ro', received ${JSON.stringify(m)}`,
        });
        return;
      }
      const target = checkConfigPath(
        spec.target,
        "a mount target",
        typeof m === "string" ? where : [...where, "target"],
        issues,
      );
      if (target === undefined) return;
      if (target === "/") {
        issues.push({
          path: [...where, "target"],
          message: "a mount cannot replace '/'; set 'root' instead",
        });
        return;
      }
      if (mounts.some((x) => x.target === target)) {
        issues.push({ path: where, message: `two mounts share the target '${target}'` });
        return;
      }
      // An object mount may set its own approval flags; the root's are the default.
      const own = typeof m === "string" ? {} : (m as Record<string, unknown>);
      mounts.push({
        source: spec.source,
        target,
        readonly: readonly || spec.readonly,
        ...base,
        readApproval:
          pick<boolean>(own, "readApproval", "read_approval", issues, where) ?? readApproval,
        writeApproval:
          pick<boolean>(own, "writeApproval", "write_approval", issues, where) ?? writeApproval,
      });
    });
  } else {
    if (raw.mounts !== undefined)
      issues.push({
        path: [...at, "mounts"],
        message: "'mounts' goes with 'root', not with 'paths'",
      });
    for (const [name, cfg] of Object.entries(raw.paths ?? {})) {
      const where = [...at, "paths", name];
      if (!/^[A-Za-z0-9_][A-Za-z0-9._-]*$/.test(name)) {
        issues.push({
          path: where,
          message: "a path name may use letters, digits, '.', '_' and '-' only",
        });
        continue;
      }
      const c = cfg as Record<string, unknown> & NamedPathConfig;
      names.push(name);
      mounts.push({
        source: c.root,
        target: `/${name}`,
        readonly: readonly || (c.mode ?? "ro") === "ro",
        suffixes: normalizeSuffixes(c.suffixes) ?? suffixes,
        maxFileBytes:
          pick<number>(c, "maxFileBytes", "max_file_bytes", issues, where) ?? maxFileBytes,
        readApproval:
          pick<boolean>(c, "readApproval", "read_approval", issues, where) ?? readApproval,
        writeApproval:
          pick<boolean>(c, "writeApproval", "write_approval", issues, where) ?? writeApproval,
      });
    }
  }
  if (issues.length > 0) throw configError(issues, opts.source);
  return {
    form: rootMount ? "root" : "named",
    root: raw.root,
    readonly,
    suffixes,
    maxFileBytes,
    mounts,
    rootMount,
    protected: protectedList,
    secrets: secrets instanceof SecretList ? [...secrets.entries] : [],
    names,
  };
}
