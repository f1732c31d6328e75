/**
 * Core I benchmarks: resolve, derive and canRead, each beside a baseline
 * measured in the same run.
 */
import { realpathSync } from "node:fs";
import { join } from "node:path";
import { createSandbox } from "../src/index.js";
import { type BenchRow, compare } from "./lib.js";
import { loadMcpLib, makeBenchTree } from "./tree.js";

export default async function benchCore(): Promise<BenchRow[]> {
  const { base, root, cleanup } = makeBenchTree();
  try {
    const sb = createSandbox({ root: "root", mounts: ["cache:/cache:ro"] }, { basePath: base });
    const virtual = "/a/b/c/d/file.txt";
    const host = join(root, "a/b/c/d/file.txt");
    const mcp = await loadMcpLib(root);
    const rows: BenchRow[] = [];
    rows.push(
      await compare(
        "resolve (existing file, 4 levels deep)",
        () => sb.resolve(virtual),
        "fs.realpathSync.native (floor)",
        () => realpathSync.native(host),
        {
          goal: "≥ 0.8×",
        },
      ),
    );
    rows.push(
      await compare(
        "resolve (existing file, 4 levels deep)",
        () => sb.resolve(virtual),
        "MCP filesystem validatePath",
        () => mcp.validatePath(host),
        {
          goal: "≥ 3×",
        },
      ),
    );
    rows.push(
      await compare(
        "derive({ allowRead: [2 entries], allowWrite })",
        () => sb.derive({ allowRead: ["/a/b", "/cache"], allowWrite: "/a/b/c" }),
        "3 × fs.realpathSync.native",
        () => {
          realpathSync.native(join(root, "a/b"));
          realpathSync.native(join(base, "cache"));
          realpathSync.native(join(root, "a/b/c"));
        },
        {
          goal: "≥ 0.8×",
        },
      ),
    );
    const child = sb.derive({ allowRead: "/a/b" });
    rows.push(
      await compare(
        "canRead on a denied path (no fs)",
        () => child.canRead("/x/y/z.txt"),
        "fs.realpathSync.native",
        () => realpathSync.native(host),
      ),
    );
    return rows;
  } finally {
    cleanup();
  }
}
