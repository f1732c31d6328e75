/**
 * Where an audit log may lie: outside every area its sandbox can read or
 * write. One agents (or an MCP client) can reach could be read (other
 * agents' paths), forged, or replaced — an atomic write over it leaves the
 * log's descriptor on an unlinked file, so every later line is lost too.
 * Shared by `createHost` (`auditLog`) and `mountbox mcp --audit`.
 */
import { realpathSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { policyOf, type Sandbox } from "../sandbox/sandbox.js";

/**
 * The virtual path at which `sandbox` can read or write the audit log
 * `file` (judged at its real location, before it is created), or
 * undefined if it cannot reach it.
 */
export function findAuditInside(sandbox: Sandbox, file: string): string | undefined {
  let real: string;
  try {
    real = realpathSync(file);
  } catch {
    try {
      real = join(realpathSync(dirname(file)), basename(file));
    } catch {
      return undefined; // Opening it fails, with its own error.
    }
  }
  const v = policyOf(sandbox).table.mapBack(real);
  if (v === undefined || !(sandbox.canRead(v) || sandbox.canWrite(v))) return undefined;
  return v;
}
