/**
 * Core II benchmarks: 1 KiB readFile and writeFile, each beside a baseline
 * measured in the same run.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { createSandbox } from "../src/index.js";
import { type BenchRow, compare } from "./lib.js";
import { loadMcpLib, makeBenchTree } from "./tree.js";

export default async function benchIo(): Promise<BenchRow[]> {
  const { base, root, cleanup } = makeBenchTree();
  try {
    const sb = createSandbox({ root: "root" }, { basePath: base });
    const mcp = await loadMcpLib(root);
    const host = join(root, "small.txt");
    const kib = "y".repeat(1024);
    return [
      await compare(
        "readFile 1 KiB",
        () => sb.readFile("/small.txt"),
        "MCP validatePath + readFileContent",
        async () => mcp.readFileContent(await mcp.validatePath(host)),
        {
          goal: "≥ 3×",
        },
      ),
      await compare(
        "writeFile 1 KiB (atomic, verified)",
        () => sb.writeFile("/out.txt", kib),
        "fs.writeFileSync (floor, not atomic)",
        () => writeFileSync(join(root, "out-plain.txt"), kib),
      ),
    ];
  } finally {
    cleanup();
  }
}
