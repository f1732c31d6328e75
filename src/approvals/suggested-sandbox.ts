/**
 * `host.suggestedSandboxes()`: the grants of dynamic expansion, turned into
 * the worker `sandbox` blocks that would make them permanent (seeds' open
 * question 5: exploration into least-privilege config). Only what was
 * approved is listed; nothing is ever written anywhere by the host.
 */
import type { WorkerSpec } from "../config/worker-spec.js";
import { isWithin } from "../sandbox/virtual-path.js";
import type { GrantRecord } from "./agent-gate.js";

/** A worker's suggested `sandbox` block. */
export interface SuggestedSandbox {
  /** The block as an object (a `WorkerSandboxSpec`: `allowRead`, `allowWrite`). */
  sandbox: { allowRead: string[]; allowWrite: string[] };
  /** The same block in program.yaml / `.worker` form. */
  yaml: string;
}

/** Collects grants per worker. */
export class GrantBook {
  readonly #workers: Map<string, WorkerSpec>;
  readonly #grants = new Map<string, { read: Set<string>; write: Set<string> }>();

  constructor(workers: Map<string, WorkerSpec>) {
    this.#workers = workers;
  }

  /** Records one grant. */
  add(g: GrantRecord): void {
    let e = this.#grants.get(g.worker);
    if (!e) {
      e = { read: new Set(), write: new Set() };
      this.#grants.set(g.worker, e);
    }
    e[g.access].add(g.dir);
  }

  /**
   * Per worker with grants: its configured allow-lists (if any) plus the
   * granted directories, a write grant also being a read grant (as granted).
   */
  suggest(): Record<string, SuggestedSandbox> {
    const out: Record<string, SuggestedSandbox> = {};
    for (const [worker, g] of [...this.#grants].sort(([a], [b]) => (a < b ? -1 : 1))) {
      const spec = this.#workers.get(worker)?.sandbox;
      const write = keepOutermost([...toList(spec?.allowWrite), ...g.write]);
      const read = keepOutermost([
        ...toList(spec?.allowRead ?? spec?.allowWrite),
        ...g.read,
        ...write,
      ]);
      const sandbox = { allowRead: read, allowWrite: write };
      out[worker] = { sandbox, yaml: toYaml(sandbox) };
    }
    return out;
  }
}

function toList(v: string | string[] | undefined): string[] {
  return v === undefined ? [] : Array.isArray(v) ? v : [v];
}

/** Sorted, without entries covered by another. */
function keepOutermost(paths: string[]): string[] {
  const unique = [...new Set(paths)];
  return unique.filter((p) => !unique.some((q) => q !== p && isWithin(p, q))).sort();
}

/** The block in YAML, every path JSON-quoted (valid YAML, whatever the characters). */
function toYaml(s: { allowRead: string[]; allowWrite: string[] }): string {
  const list = (key: string, v: string[]) =>
    v.length === 0
      ? `  ${key}: []\n`
      : `  ${key}:\n${v.map((p) => `    - ${JSON.stringify(p)}\n`).join("")}`;
  return `sandbox:\n${list("allow_read", s.allowRead)}${list("allow_write", s.allowWrite)}`;
}
