/**
 * Issue 11, findings 5 and 6: what a command can do to the host folders
 * behind its mounts between runs. A mount source keeps its identity (device
 * and inode recorded at creation), and mount points are never made through
 * a link a command planted.
 */
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, expect, test } from "vitest";
import { createSandbox, IoError, runCommand } from "../src/index.js";
import { planBinds } from "../src/os/bind-plan.js";
import { policyOf } from "../src/sandbox/sandbox.js";
import { describeWithBwrap } from "./helpers/bwrap.js";

let dir: string;

beforeEach(() => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), "mountbox-ident-")));
  mkdirSync(join(dir, "root"));
  mkdirSync(join(dir, "shared/a/b"), { recursive: true });
  writeFileSync(join(dir, "shared/a/b/f"), "genuine\n");
  mkdirSync(join(dir, "mnt"));
  writeFileSync(join(dir, "mnt/m.txt"), "mounted\n");
  mkdirSync(join(dir, "outside"));
});

afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

describeWithBwrap("mount sources and mount points (issue 11, findings 5 and 6)", () => {
  test("finding 5: a read-only mount whose source was replaced through a writable one is refused", async () => {
    const sb = createSandbox({
      root: join(dir, "root"),
      mounts: [`${join(dir, "shared")}:/w`, `${join(dir, "shared/a/b")}:/cache:ro`],
    });
    const first = await runCommand(
      sb,
      "cat cache/f; mv w/a w/z && mkdir -p w/a/b && echo evil > w/a/b/f",
    );
    expect(first).toMatchObject({ exitCode: 0, stdout: "genuine\n" });
    const err = await runCommand(sb, "cat cache/f").catch((e) => e);
    expect(err).toBeInstanceOf(IoError);
    expect(err.path).toBe("/cache");
    expect(err.message).not.toContain(dir);
    expect(err.message).toMatchInlineSnapshot(
      `"Cannot run the command: the folder mounted at '/cache' was moved or replaced since the sandbox was created; its path now leads to a different folder (or none). Create the sandbox again to use what is there now."`,
    );
    // A sandbox created now binds what is there now, as it says.
    const fresh = createSandbox({
      root: join(dir, "root"),
      mounts: [`${join(dir, "shared")}:/w`, `${join(dir, "shared/a/b")}:/cache:ro`],
    });
    expect((await runCommand(fresh, "cat cache/f")).stdout).toBe("evil\n");
  });

  test("finding 5: a source replaced by a link to elsewhere is refused too; changed contents are fine", async () => {
    const sb = createSandbox({ root: join(dir, "root"), mounts: [`${join(dir, "mnt")}:/m:ro`] });
    writeFileSync(join(dir, "mnt/new.txt"), "new\n");
    expect((await runCommand(sb, "cat m/new.txt")).stdout).toBe("new\n");
    rmSync(join(dir, "mnt"), { recursive: true });
    symlinkSync(join(dir, "outside"), join(dir, "mnt"));
    await expect(runCommand(sb, "ls m")).rejects.toThrow(
      /the folder mounted at '\/m' was moved or replaced/,
    );
  });

  test("finding 6: a link planted on the way to a mount point makes nothing outside", async () => {
    const sb = createSandbox({
      root: join(dir, "root"),
      mounts: [`${join(dir, "mnt")}:/a/b/c:ro`],
    });
    const first = await runCommand(sb, "cat a/b/c/m.txt");
    expect(first.stdout).toBe("mounted\n");
    // The command replaces the folder on the way with a link to a host folder.
    const plant = await runCommand(
      sb,
      `mv a a2 && ln -s ${join(dir, "outside")} a && echo planted`,
    );
    expect(plant.stdout).toBe("planted\n");
    const plan = planBinds(policyOf(sb));
    expect(plan.skipped).toContainEqual({ virtual: "/a/b/c", reason: "link-in-parent" });
    const next = await runCommand(sb, "cat a/b/c/m.txt");
    expect(next.exitCode).not.toBe(0);
    expect(readdirSync(join(dir, "outside"))).toEqual([]);
  });

  test("finding 6: mount points are made folder by folder, never through a link", async () => {
    mkdirSync(join(dir, "root/a"));
    const sb = createSandbox({
      root: join(dir, "root"),
      mounts: [`${join(dir, "mnt")}:/a/b/c:ro`],
    });
    symlinkSync(join(dir, "outside"), join(dir, "root/a/b"));
    const r = await runCommand(sb, "ls a/b/c 2>&1; true");
    expect(r.exitCode).toBe(0);
    expect(readdirSync(join(dir, "outside"))).toEqual([]);
    expect(existsSync(join(dir, "outside/c"))).toBe(false);
  });
});
