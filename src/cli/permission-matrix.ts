/**
 * The effective permissions of a program, for `mountbox check`: each worker
 * along each delegation path it can be called along, against each top-level
 * area of the program's sandbox (its root and mounts), with what else the
 * worker may do (shell, network, isolation). Virtual paths only.
 */
import { listWorkerReaches } from "../agents/worker-sandbox-check.js";
import { escapeControl } from "../errors/index.js";
import type { ProgramDefinition } from "../host/load-program.js";
import { policyOf, type Sandbox } from "../sandbox/sandbox.js";
import { isWithin } from "../sandbox/virtual-path.js";
import { makeRootSandbox } from "./program-sandbox.js";

/** One top-level area of the program's sandbox. */
export interface MatrixArea {
  /** Its virtual path (`/` for the root). */
  path: string;
  readonly: boolean;
  /** Reads need an approval. */
  readApproval: boolean;
  /** Writes need an approval. */
  writeApproval: boolean;
}

/**
 * Access to an area: `r` read, `w` write, each followed by `*` when only
 * part of the area is granted; `-` for none.
 */
export type MatrixCell = string;

/** One way a worker can run: the delegation path to it and what it may do there. */
export interface MatrixRow {
  /** Workers from a top-level run to this one (this one last). */
  chain: string[];
  /** Access per area path. */
  access: Record<string, MatrixCell>;
  kind: "code" | "llm";
  shell: boolean;
  network: boolean;
  isolation: "thread" | "process";
}

/**
 * One MCP server of the program, as configured — `check` starts none and
 * shows no value of its `env` or `headers`.
 */
export interface MatrixMcpServer {
  name: string;
  kind: "stdio" | "http";
  approval: "always" | "never";
  /** Workers naming it in `mcp` (a callee uses it only if its caller may too). */
  workers: string[];
}

/** What `mountbox check` prints. */
export interface PermissionMatrix {
  areas: MatrixArea[];
  rows: MatrixRow[];
  mcpServers: MatrixMcpServer[];
}

/** Computes the matrix of a loaded (and so validated) program. */
export function buildPermissionMatrix(def: ProgramDefinition): PermissionMatrix {
  const { options } = def;
  const root = makeRootSandbox(options);
  const areas: MatrixArea[] = policyOf(root)
    .table.mounts.map((m) => ({
      path: m.target,
      readonly: m.readonly,
      readApproval: m.readApproval,
      writeApproval: m.writeApproval,
    }))
    .sort((a, b) => (a.path < b.path ? -1 : 1));
  const workers = new Map(Object.entries(options.workers));
  const reaches = listWorkerReaches(root, workers, options.maxDepth ?? 5);
  const rows = reaches.map(({ chain, sandbox }) => {
    const spec = workers.get(chain.at(-1) as string) ?? {};
    const access: Record<string, MatrixCell> = {};
    for (const a of areas) access[a.path] = cellOf(sandbox, a.path);
    return {
      chain,
      access,
      kind: spec.module === undefined ? ("llm" as const) : ("code" as const),
      shell: spec.shell === true,
      network: spec.network === true,
      isolation: spec.isolation ?? options.isolation ?? "thread",
    };
  });
  // Shortest paths first, then by name: a reader finds each worker's own row first.
  rows.sort(
    (a, b) =>
      a.chain.length - b.chain.length || a.chain.join("\0").localeCompare(b.chain.join("\0")),
  );
  return { areas, rows, mcpServers: listMcpServers(def) };
}

/** The program's MCP servers (already checked by loading), by name. */
function listMcpServers(def: ProgramDefinition): MatrixMcpServer[] {
  const servers = (def.options.mcpServers ?? {}) as Record<
    string,
    { command?: unknown; approval?: "always" | "never" }
  >;
  return Object.keys(servers)
    .sort()
    .map((name) => ({
      name,
      kind: servers[name]?.command !== undefined ? ("stdio" as const) : ("http" as const),
      approval: servers[name]?.approval ?? "never",
      workers: Object.entries(def.options.workers)
        .filter(([, w]) => w.mcp?.includes(name))
        .map(([w]) => w)
        .sort(),
    }));
}

/** `r`/`w` for the whole area, `r*`/`w*` when a granted path lies inside it. */
function cellOf(sandbox: Sandbox, area: string): MatrixCell {
  const inside = (roots: string[], can: (p: string) => boolean) =>
    roots.some((r) => isWithin(r, area) && can(r));
  const read = sandbox.canRead(area)
    ? "r"
    : inside(sandbox.readableRoots, (r) => sandbox.canRead(r))
      ? "r*"
      : "";
  const write = sandbox.canWrite(area)
    ? "w"
    : inside(sandbox.writableRoots, (r) => sandbox.canWrite(r))
      ? "w*"
      : "";
  return read + write || "-";
}

/** The matrix as aligned text for a terminal. */
export function formatPermissionMatrix(m: PermissionMatrix): string {
  const areaLines = m.areas.map((a) => {
    const flags = [
      a.readonly ? "read-only" : "read-write",
      ...(a.readApproval ? ["reads need approval"] : []),
      ...(a.writeApproval ? ["writes need approval"] : []),
    ];
    return `  ${escapeControl(a.path)}  ${flags.join(", ")}`;
  });
  const header = [
    "worker (delegation path)",
    ...m.areas.map((a) => escapeControl(a.path)),
    "shell",
    "network",
    "runs as",
  ];
  const body = m.rows.map((r) => [
    r.chain.map((w) => escapeControl(w)).join(" → ") + (r.kind === "llm" ? " (LLM)" : ""),
    ...m.areas.map((a) => r.access[a.path] ?? "-"),
    r.shell ? "yes" : "no",
    r.network ? "yes" : "no",
    r.isolation,
  ]);
  return [
    "Areas:",
    ...areaLines,
    "",
    "Each worker along each path it can be called along (r read, w write, * only part of the area, - nothing; host code and .git are never writable):",
    ...formatTable(header, body),
    "",
    ...formatMcpServers(m.mcpServers),
  ].join("\n");
}

/** The MCP section, when the program has servers. */
function formatMcpServers(servers: readonly MatrixMcpServer[]): string[] {
  if (servers.length === 0) return [];
  const body = servers.map((s) => [
    escapeControl(s.name),
    s.kind,
    s.approval === "always" ? "every call" : "no",
    s.workers.map((w) => escapeControl(w)).join(", ") || "none (not started)",
  ]);
  return [
    "MCP servers (not started by check; env and header values not shown; a callee uses a server only if its caller may):",
    ...formatTable(["server", "kind", "approval", "workers (mcp)"], body),
    "",
  ];
}

/** Rows of cells, aligned in columns, indented by two spaces. */
function formatTable(header: string[], body: string[][]): string[] {
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((row) => row[i]!.length)));
  const line = (cells: string[]) =>
    `  ${cells.map((c, i) => c.padEnd(widths[i]!)).join("  ")}`.trimEnd();
  return [line(header), ...body.map(line)];
}
