/**
 * `mountbox check <program-dir> [--json]`: loads a program as `run` would
 * (program.yaml and every worker file, each worker's `sandbox` key along
 * every delegation path) and prints its effective permissions, or the
 * configuration errors with their file and key path (exit 2).
 */
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { ConfigError } from "../errors/index.js";
import { loadProgramDefinition } from "../host/load-program.js";
import { type CliIo, UsageError } from "./cli-io.js";
import { buildPermissionMatrix, formatPermissionMatrix } from "./permission-matrix.js";

/** Help of `mountbox check`. */
export const CHECK_HELP = `Usage: mountbox check <program-dir> [--json]

Validates <program-dir>/program.yaml and every worker (workers/*.worker and
the modules they name) as 'mountbox run' would load them, and prints the
effective permissions: each worker along each delegation path it can be
called along, against each top-level area (the root and the mounts), with
the approvals each area asks for, and shell, network and isolation per worker;
then the program's MCP servers (kind, approval, the workers naming them),
none of them started, no env or header value shown.

Options:
  --json       One JSON object: { ok, areas, rows, mcpServers } or { ok: false, message, issues }
  -h, --help   Show this help

Exit status: 0 if the program is valid; 2 on a configuration error or bad usage.
`;

/** Runs `mountbox check`; returns the exit status. */
export async function runCheck(argv: readonly string[], io: CliIo): Promise<number> {
  let parsed: ReturnType<typeof parseCheckArgs>;
  try {
    parsed = parseCheckArgs(argv);
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  if (parsed.values.help) {
    io.stdout(CHECK_HELP);
    return 0;
  }
  const [dir, ...extra] = parsed.positionals;
  if (dir === undefined) throw new UsageError("check needs a program folder");
  if (extra.length > 0) throw new UsageError(`unexpected argument '${extra[0]?.slice(0, 40)}'`);
  const json = parsed.values.json === true;
  try {
    const def = await loadProgramDefinition(resolve(dir));
    const matrix = buildPermissionMatrix(def);
    if (json) io.stdout(`${JSON.stringify({ ok: true, ...matrix })}\n`);
    else {
      const n = Object.keys(def.options.workers).length;
      io.stdout(
        `✔ program.yaml and ${n} worker${n === 1 ? "" : "s"} are valid.\n\n${formatPermissionMatrix(matrix)}`,
      );
    }
    return 0;
  } catch (err) {
    if (!(err instanceof ConfigError) || !json) throw err;
    io.stdout(`${JSON.stringify({ ok: false, message: err.message, issues: err.issues })}\n`);
    return 2;
  }
}

function parseCheckArgs(argv: readonly string[]) {
  return parseArgs({
    args: [...argv],
    allowPositionals: true,
    strict: true,
    options: { json: { type: "boolean" }, help: { type: "boolean", short: "h" } },
  });
}
