/**
 * A program folder's MCP keys (`mcp_servers` in program.yaml, each
 * worker's `mcp`), checked when the folder is loaded — by `mountbox check`
 * without starting any server — and reported against the file and key
 * path they are written at, as `createHost` would check them.
 */
import { type ConfigIssue, configError } from "../errors/index.js";
import { checkMcpServers } from "../mcp-client/mcp-servers.js";
import type { HostOptions } from "./host-types.js";

/**
 * @param sources each worker's file, relative to the program folder
 * @throws ConfigError for the first file with an issue, naming each key path in it
 */
export function checkProgramMcp(
  options: HostOptions,
  sources: Readonly<Record<string, { source: string }>>,
  programFile: string,
): void {
  const issues: ConfigIssue[] = [];
  checkMcpServers(options.mcpServers, new Map(Object.entries(options.workers)), issues);
  const byFile = new Map<string, ConfigIssue[]>();
  for (const issue of issues) {
    let file = programFile;
    let path = issue.path;
    if (path[0] === "mcpServers") path = ["mcp_servers", ...path.slice(1)];
    else if (path[0] === "workers") {
      const source = sources[String(path[1])]?.source;
      // A .worker file's keys are at its top level.
      if (source !== undefined && source !== programFile) {
        file = source;
        path = path.slice(2);
      }
    }
    const list = byFile.get(file) ?? [];
    list.push({ ...issue, path });
    byFile.set(file, list);
  }
  const first = [...byFile][0];
  if (first) throw configError(first[1], first[0]);
}
