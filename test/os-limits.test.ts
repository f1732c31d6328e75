/**
 * Issue 11, finding 8: limits enforced by the kernel, with defaults, and a
 * note naming the limit a command ran into.
 */
import { mkdirSync, mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, expect, test } from "vitest";
import { createSandbox, runCommand, type Sandbox } from "../src/index.js";
import { DEFAULT_LIMITS } from "../src/os/limits.js";
import { describeWithBwrap, FORK_40, IS_ROOT } from "./helpers/bwrap.js";

let dir: string;
let sb: Sandbox;

beforeEach(() => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), "mountbox-limits-")));
  mkdirSync(join(dir, "root"));
  sb = createSandbox({ root: join(dir, "root") });
});

afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

describeWithBwrap("limits (issue 11, finding 8)", () => {
  test("defaults are in force: sized /tmp and /dev/shm, rlimits set", async () => {
    expect(DEFAULT_LIMITS).toEqual({
      memoryMb: 2048,
      processes: 256,
      tmpMb: 512,
      cpuSeconds: 600,
      ptys: 16,
      openFiles: 1024,
    });
    const r = await runCommand(
      sb,
      "df -k --output=size /tmp /dev/shm | tail -n +2 | tr -d ' '; ulimit -t -d -u; touch /dev/x 2>/dev/null || echo dev-ro",
    );
    expect(r.stdout).toBe(
      `${512 * 1024}\n${512 * 1024}\ncpu time                   (seconds, -t) 600\ndata seg size               (kbytes, -d) ${2048 * 1024}\nmax user processes                  (-u) 256\ndev-ro\n`,
    );
  });

  test("tmpMb: /tmp and /dev/shm fill up at the limit, with a note", async () => {
    const r = await runCommand(
      sb,
      "head -c 20M /dev/zero > /tmp/f; echo tmp=$?; head -c 20M /dev/zero > /dev/shm/f; echo shm=$?; du -sm /tmp | cut -f1",
      { limits: { tmpMb: 8 } },
    );
    expect(r.stdout).toBe("tmp=1\nshm=1\n8\n");
    expect(r.stderr).toMatch(/No space left on device/);
    expect(r.notes).toContain(
      "A scratch file system (/tmp or /dev/shm, 8 MiB each) is full, or the disk of a writable folder is.",
    );
  });

  test("memoryMb: an allocation beyond it fails, with a note that says 'may' (no cgroup counter hit)", async () => {
    const r = await runCommand(
      sb,
      "python3 -c 'b = bytearray(300 * 1024 * 1024); print(\"allocated\")'",
      {
        limits: { memoryMb: 64 },
      },
    );
    expect(r.stdout).toBe("");
    expect(r.exitCode).not.toBe(0);
    expect(r.notes).toContain(
      "An allocation failed: the memory limit (64 MiB per process) may have been reached.",
    );
    expect(r.notes.join(" ")).not.toMatch(/was reached/);
  });

  test.skipIf(!IS_ROOT)(
    "review finding 10: the memory cgroup's kill counter makes the note definite",
    async () => {
      // Three processes of ~45 MiB each: under RLIMIT_DATA each, over the cgroup together.
      const r = await runCommand(
        sb,
        "for i in 1 2 3; do python3 -c 'import os, time; b = os.urandom(45 << 20); time.sleep(2)' & done; wait",
        { limits: { memoryMb: 64 } },
      );
      expect(r.notes).toContain(
        "The memory limit (64 MiB) was reached: a process was killed for using too much memory.",
      );
    },
  );

  test("cpuSeconds: a busy loop is stopped, with a note", async () => {
    const r = await runCommand(sb, "while :; do :; done", { limits: { cpuSeconds: 1 } });
    expect(r.exitCode).toBe(128 + 24);
    expect(r.timedOut).toBe(false);
    expect(r.notes).toContain(
      "A process used up its CPU time limit (1 s per process) and was stopped.",
    );
  });

  test("processes: forking stops at the limit, with a note (as root: by a pids cgroup)", async () => {
    const r = await runCommand(sb, FORK_40, { limits: { processes: 12 } });
    const forked = Number(/forked (\d+)/.exec(r.stdout)?.[1]);
    expect(forked).toBeLessThan(12);
    expect(r.notes.join("\n")).toContain(
      "The process limit (12 processes and threads at once) was reached",
    );
  });

  test("bad limits are refused at the edge", async () => {
    await expect(runCommand(sb, "true", { limits: { memoryMb: 0 } })).rejects.toThrow(
      "runCommand: limits.memoryMb must be a positive integer (at most 1048576)",
    );
    await expect(
      runCommand(sb, "true", { limits: { disk: 1 } as unknown as { memoryMb: number } }),
    ).rejects.toThrow("runCommand: unknown limit 'disk'");
  });
});
