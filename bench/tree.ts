/** Fixtures shared by the benchmarks. */
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** A temp tree: root/a/b/c/d/file.txt (1 KiB), root/small.txt, cache/x.txt. */
export function makeBenchTree(): { base: string; root: string; cleanup(): void } {
  const base = realpathSync(mkdtempSync(join(tmpdir(), "mountbox-bench-")));
  const root = join(base, "root");
  mkdirSync(join(root, "a/b/c/d"), { recursive: true });
  mkdirSync(join(base, "cache"), { recursive: true });
  const kib = "x".repeat(1024);
  writeFileSync(join(root, "a/b/c/d/file.txt"), kib);
  writeFileSync(join(root, "small.txt"), kib);
  writeFileSync(join(base, "cache/x.txt"), kib);
  return { base, root, cleanup: () => rmSync(base, { recursive: true, force: true }) };
}

/** The MCP filesystem server's library, allowed to `root` only. */
export interface McpLib {
  validatePath(p: string): Promise<string>;
  readFileContent(p: string, encoding?: string): Promise<string>;
}

/** Loads `@modelcontextprotocol/server-filesystem/dist/lib.js` (a dev dependency). */
export async function loadMcpLib(root: string): Promise<McpLib> {
  const spec = "@modelcontextprotocol/server-filesystem/dist/lib.js";
  const lib = (await import(spec)) as McpLib & { setAllowedDirectories(d: string[]): void };
  lib.setAllowedDirectories([root]);
  return lib;
}
