/**
 * OS enforcement cost: `runCommand(sb, "true")` against its floor, bare
 * bubblewrap started with the same namespaces, binds, masks, limits and
 * seccomp program (issue 25), and against a plain `spawn("true")`, all
 * measured in the same run.
 */
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Writable } from "node:stream";
import { createSandbox, runCommand } from "../src/index.js";
import { type BareBwrap, planBareBwrap } from "../src/os/bare-bwrap.js";
import { type BenchRow, compare } from "./lib.js";

function spawnTrue(): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn("true", [], { stdio: "ignore" });
    child.once("error", reject);
    child.once("close", () => resolve());
  });
}

/** Starts bubblewrap as planned: the seccomp program on 3, an empty environment on 4, the binds from 5. */
function spawnBare(bare: BareBwrap): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(bare.file, bare.args, {
      stdio: ["ignore", "ignore", "ignore", "pipe", "pipe", ...bare.bindFds],
    });
    child.once("error", reject);
    (child.stdio[3] as Writable).end(bare.seccomp);
    (child.stdio[4] as Writable).end();
    child.once("close", (code) =>
      code === 0 ? resolve() : reject(new Error(`bare bwrap exited ${code}`)),
    );
  });
}

/** Runs the OS-enforcement benchmark; returns its rows. */
export default async function (): Promise<BenchRow[]> {
  const dir = mkdtempSync(join(tmpdir(), "mountbox-bench-os-"));
  let bare: BareBwrap | undefined;
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
    bare = await planBareBwrap(sb, "true");
    const planned = bare;
    await spawnBare(planned);
    return [
      await compare(
        'runCommand(sb, "true") (bubblewrap)',
        () => runCommand(sb, "true"),
        "bare bwrap, same namespaces, binds and seccomp",
        () => spawnBare(planned),
        { time: 2000, goal: "≥ 0.5×" },
      ),
      await compare(
        'runCommand(sb, "true") (bubblewrap)',
        () => runCommand(sb, "true"),
        'spawn("true")',
        spawnTrue,
        { time: 1000 },
      ),
    ];
  } finally {
    bare?.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
