/**
 * Fresh-eyes review of issue 24 (secure defaults, git tools): each test is
 * a hole found by the review, reproduced, and held closed. Real git, real
 * bubblewrap, real files.
 */
import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { afterEach, beforeEach, expect, it } from "vitest";
import { createSandbox, runGitTool } from "../src/index.js";
import { describeWithBwrap } from "./helpers/bwrap.js";
import { makeTempDir, removeDir, writeTree } from "./helpers/tree.js";

let dir: string;

/** The host's git with no user config and hooks off. */
function hostGit(cwd: string, ...args: string[]): void {
  const r = spawnSync(
    "git",
    ["-c", "core.hooksPath=/dev/null", "-c", "user.name=T", "-c", "user.email=t@t", ...args],
    {
      cwd,
      encoding: "utf8",
      env: { ...process.env, GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null" },
    },
  );
  if (r.status !== 0) throw new Error(`git ${args.join(" ")} failed: ${r.stderr}`);
}

beforeEach(() => {
  dir = makeTempDir("mountbox-review24-");
});
afterEach(() => {
  removeDir(dir);
});

describeWithBwrap("git tools and secrets whose names hold glob characters", () => {
  it("leaves a secret named with brackets out of status and staged diffs", async () => {
    writeTree(dir, { "secret[1].txt": "TOKEN v1\n", "a.txt": "a\n" });
    hostGit(dir, "init", "-q");
    hostGit(dir, "add", "-A");
    hostGit(dir, "commit", "-qm", "init");
    writeFileSync(`${dir}/secret[1].txt`, "TOKEN v2\n");
    writeFileSync(`${dir}/a.txt`, "b\n");
    hostGit(dir, "add", "-A");
    const sb = await createSandbox({ root: dir, secrets: ["secret[1].txt"] });
    // Git's glob took `[1]` for a set: the pathspec matched `secret1.txt`,
    // and the real secret showed, content and all.
    const staged = await runGitTool(sb, "git_diff", { staged: true });
    expect(staged).not.toContain("TOKEN");
    expect(staged).toContain("/a.txt");
    const status = await runGitTool(sb, "git_status", {});
    expect(status).not.toContain("secret[");
    expect(status).toContain("/a.txt");
  });
});
