/**
 * Dynamic sandbox expansion (seed 003): the sandboxes an agent's grants
 * build. Approval flags and grants are not part of `Sandbox` (DESIGN §4):
 * the runtime keeps them and builds, for each agent, a new sandbox over the
 * same mount table — its own areas plus the areas granted, each grant cut
 * to the agent's bound (the ceiling, and for a callee its caller's
 * effective sandbox). Nothing here touches the file system.
 */
import { type ConfigIssue, configError, escapeControl } from "../errors/index.js";
import { type Area, intersect } from "../sandbox/areas.js";
import { Policy } from "../sandbox/policy.js";
import { policyOf, Sandbox } from "../sandbox/sandbox.js";
import { normalizeVirtualPath } from "../sandbox/virtual-path.js";

/** The access a grant gives. */
export type GrantAccess = "read" | "write";

/**
 * The ceiling sandbox: `root` cut to the `ceiling` virtual paths (all of
 * `root` when there is none). Expansion never goes beyond it.
 */
export function computeCeiling(root: Sandbox, ceiling: readonly string[] | undefined): Sandbox {
  if (ceiling === undefined) return root;
  const p = policyOf(root);
  const areas: Area[] = ceiling.map((path) => ({ path, exact: false }));
  return new Sandbox(
    new Policy(p.table, intersect(p.read, areas), intersect(p.write, areas), p.secrets),
  );
}

/** What both sandboxes permit (same mount table). */
export function intersectSandboxes(a: Sandbox, b: Sandbox): Sandbox {
  const pa = policyOf(a);
  const pb = policyOf(b);
  return new Sandbox(
    new Policy(
      pa.table,
      intersect(pa.read, pb.read),
      intersect(pa.write, pb.write),
      pa.secrets.union(pb.secrets),
    ),
  );
}

/**
 * `sandbox` plus `access` to the directory `dir`, cut to `bound`. A write
 * grant also lets the agent read there (an edit reads before it writes).
 * What either withholds stays withheld: a grant never shows a secret.
 */
export function widenSandbox(
  sandbox: Sandbox,
  bound: Sandbox,
  access: GrantAccess,
  dir: string,
): Sandbox {
  const p = policyOf(sandbox);
  const b = policyOf(bound);
  const area: Area[] = [{ path: dir, exact: false }];
  const write = access === "write" ? intersect(b.write, area) : [];
  return new Sandbox(
    new Policy(
      p.table,
      [...p.read, ...intersect(b.read, area)],
      [...p.write, ...write],
      p.secrets.union(b.secrets),
    ),
  );
}

/**
 * The ceiling's virtual paths, canonical.
 * @throws ConfigError for a path that is not a canonical virtual path the host's sandbox can read
 */
export function checkCeiling(root: Sandbox, ceiling: readonly string[]): string[] | undefined {
  if (ceiling.length === 0) return undefined;
  const issues: ConfigIssue[] = [];
  const out: string[] = [];
  ceiling.forEach((c, i) => {
    const v = normalizeVirtualPath(c);
    if (v === null || !root.canRead(v))
      issues.push({
        path: ["dynamic", "ceiling", i],
        message: `'${escapeControl(c)}' is not a path the host's sandbox can read`,
      });
    else out.push(v);
  });
  if (issues.length > 0) throw configError(issues);
  return out;
}
