/**
 * A worker's `sandbox` key (how it narrows the sandbox it receives, DESIGN
 * §3), checked against the form of the program's sandbox: its paths must be
 * virtual paths that the program sandbox has.
 */
import { z } from "zod";
import type { ConfigIssue } from "../errors/index.js";
import { checkSecretEntry } from "../sandbox/secrets.js";
import { checkConfigPath } from "./sandbox-config.js";
import type { WorkerSandboxSpec } from "./worker-spec.js";
import { convertZodIssues, type KeyPath } from "./yaml-schema.js";

/** What a worker's paths are checked against: the form of the program's sandbox. */
export interface ProgramSandboxShape {
  /** `root` form needs absolute virtual paths; `named` also takes `name/rel` and `name:rel`. */
  form: "root" | "named";
  /** Names of the named-paths form (empty in root form). */
  names: readonly string[];
}

const pathList = z.union([z.string(), z.array(z.string())], {
  error: "expected a virtual path or a list of virtual paths",
});

const workerSandboxSchema = z.strictObject({
  restrict: z.string().optional(),
  readonly: z.boolean().optional(),
  allow_read: pathList.optional(),
  allow_write: pathList.optional(),
  inherit: z.boolean().optional(),
  secrets: z.array(z.string()).optional(),
});

const SANDBOX_KEYS = Object.keys(workerSandboxSchema.shape);

/**
 * Validates a worker's raw `sandbox` value at `at` and returns its camelCase
 * spec, appending every problem to `issues`.
 */
export function parseWorkerSandboxKey(
  raw: unknown,
  shape: ProgramSandboxShape | "none" | "invalid",
  at: KeyPath,
  issues: ConfigIssue[],
): WorkerSandboxSpec | undefined {
  const parsed = workerSandboxSchema.safeParse(raw);
  if (parsed.success) return parseWorkerSandbox(parsed.data, shape, at, issues);
  issues.push(...convertZodIssues(parsed.error, at, () => SANDBOX_KEYS));
  return undefined;
}

/** Validates a worker's `sandbox` key against the program sandbox's form. */
function parseWorkerSandbox(
  raw: z.infer<typeof workerSandboxSchema>,
  shape: ProgramSandboxShape | "none" | "invalid",
  at: KeyPath,
  issues: ConfigIssue[],
): WorkerSandboxSpec | undefined {
  if (shape === "invalid") return undefined;
  if (shape === "none") {
    // Narrowing nothing is harmless, but the author clearly expects file
    // access this worker will never get (DESIGN §3: no program sandbox →
    // no worker has file access). Say so instead of failing at run time.
    issues.push({
      path: at,
      message:
        "this worker narrows the program's sandbox, but program.yaml has no 'sandbox' (so no worker has file access); add one to program.yaml or remove this key",
    });
    return undefined;
  }
  const out: WorkerSandboxSpec = {};
  const check = (value: string, key: string, where: KeyPath) =>
    checkWorkerPath(value, key, shape, where, issues);
  if (raw.restrict !== undefined) {
    const p = check(raw.restrict, "restrict", [...at, "restrict"]);
    if (p !== undefined) out.restrict = p;
  }
  if (raw.readonly !== undefined) out.readonly = raw.readonly;
  for (const [snake, camel] of [
    ["allow_read", "allowRead"],
    ["allow_write", "allowWrite"],
  ] as const) {
    const v = raw[snake];
    if (v === undefined) continue;
    if (typeof v === "string") {
      const p = check(v, snake, [...at, snake]);
      if (p !== undefined) out[camel] = p;
    } else {
      const list = v.map((e, i) => check(e, `an ${snake} entry`, [...at, snake, i]));
      if (list.every((p) => p !== undefined)) out[camel] = list as string[];
    }
  }
  if (raw.inherit !== undefined) out.inherit = raw.inherit;
  if (raw.secrets !== undefined) {
    const before = issues.length;
    if (raw.secrets.length === 0)
      issues.push({
        path: [...at, "secrets"],
        message:
          "a worker can add secrets to those of its caller, never remove them, so '[]' changes nothing: remove this key, or list names to withhold in addition (to let agents read a secret, remove it from the program sandbox's 'secrets' list)",
      });
    raw.secrets.forEach((e, i) => {
      const problem = checkSecretEntry(e);
      if (problem !== undefined) issues.push({ path: [...at, "secrets", i], message: problem });
    });
    if (issues.length === before) out.secrets = raw.secrets;
  }
  return out;
}

/**
 * Checks one configured worker path and returns its canonical virtual form.
 * Root form: absolute only (DESIGN §2: configuration paths are absolute).
 * Named form: also `name`, `name/rel`, `name:rel`; the first segment must be a name.
 */
function checkWorkerPath(
  value: string,
  what: string,
  shape: ProgramSandboxShape,
  at: KeyPath,
  issues: ConfigIssue[],
): string | undefined {
  if (shape.form === "root") return checkConfigPath(value, what, at, issues);
  const norm = checkConfigPath(value, what, at, issues, new Set(shape.names));
  if (norm === undefined) return undefined;
  const first = norm.split("/")[1] ?? "";
  if (norm !== "/" && !shape.names.includes(first)) {
    issues.push({
      path: at,
      message: `'${value}' is not under a named path of the program sandbox (names: ${shape.names.join(", ") || "none"})`,
    });
    return undefined;
  }
  return norm;
}
