/**
 * OS enforcement cost: `runCommand(sb, "true")` (bubblewrap, namespaces,
 * binds) against a plain `spawn("true")`, measured in the same run.
 */
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createSandbox, runCommand } from "../src/index.js";
import { type BenchRow, compare } from "./lib.js";

function spawnTrue(): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn("true", [], { stdio: "ignore" });
    child.once("error", reject);
    child.once("close", () => resolve());
  });
}

/** Runs the OS-enforcement benchmark; returns its rows. */
export default async function (): Promise<BenchRow[]> {
  const dir = mkdtempSync(join(tmpdir(), "mountbox-bench-os-"));
  try {
    mkdirSync(join(dir, "root/src"), { recursive: true });
    mkdirSync(join(dir, "cache"));
    writeFileSync(join(dir, "root/src/a.txt"), "a");
    const sb = createSandbox({
      root: join(dir, "root"),
      mounts: [`${join(dir, "cache")}:/cache:ro`],
    });
    mkdirSync(join(dir, "root/cache"));
    // Fail loudly (not with a fast, meaningless figure) if bubblewrap is missing.
    const first = await runCommand(sb, "true");
    if (first.exitCode !== 0) throw new Error("runCommand(sb, 'true') failed");
    return [
      await compare(
        'runCommand(sb, "true") (bubblewrap)',
        () => runCommand(sb, "true"),
        'spawn("true")',
        spawnTrue,
        { time: 2000 },
      ),
    ];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
