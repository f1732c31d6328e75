/**
 * The host's own git, as the tests of what a command may plant run it: no
 * user config (HOME is the test's folder), any directory trusted, output
 * ignored. Shared by the shell tests that check the host's next `git status`
 * or `git commit` runs nothing a command planted.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { expect } from "vitest";

/** Runs the host's git in `cwd` with `home` as HOME. */
export function runHostGit(home: string, cwd: string, ...args: string[]): void {
  spawnSync(
    "git",
    ["-c", "safe.directory=*", "-c", "user.name=h", "-c", "user.email=h@h", ...args],
    { cwd, stdio: "ignore", timeout: 20_000, env: { ...process.env, HOME: home } },
  );
}

/** Makes `dir/ws`, a repository with one checked-out submodule `sub` (from `dir/subsrc`). */
export function makeRepoWithSubmodule(dir: string): string {
  const ws = join(dir, "ws");
  const src = join(dir, "subsrc");
  mkdirSync(ws);
  mkdirSync(src);
  runHostGit(dir, src, "init", "-q");
  runHostGit(dir, src, "commit", "-q", "--allow-empty", "-m", "s");
  runHostGit(dir, ws, "init", "-q");
  runHostGit(dir, ws, "-c", "protocol.file.allow=always", "submodule", "add", "-q", src, "sub");
  runHostGit(dir, ws, "commit", "-q", "-m", "add");
  expect(existsSync(join(ws, "sub/.git"))).toBe(true);
  return ws;
}
