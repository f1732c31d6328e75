/**
 * Fresh-eyes review of issue 24 (secure defaults, git tools): each test is
 * a hole found by the review, reproduced, and held closed. Real git, real
 * bubblewrap, real files.
 */
import { spawnSync } from "node:child_process";
import { symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createSandbox, runCommand, runGitTool } from "../src/index.js";
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

describe("mounts whose source folder is a secret", () => {
  it("refuses a mount of a secret folder under another name, and the root's own one", () => {
    writeTree(dir, {
      home: { ".ssh": { config: "Host x\n" } },
      root: { ".aws": { credentials: "KEY\n" }, "a.txt": "a\n" },
    });
    // Was: /keys/config and /cloud/credentials readable by every tool and command.
    const make = (source: string, target: string) => () =>
      createSandbox({ root: join(dir, "root"), mounts: [{ source, target }] });
    expect(make(join(dir, "home/.ssh"), "/keys")).toThrowErrorMatchingInlineSnapshot(`
      [ConfigError: Invalid configuration:
      ✖ the mount at '/keys' is, or lies inside, a folder withheld by the secrets entry '.ssh/': mounted, its files would be readable under a name the list does not match. Mount another folder, or take '.ssh/' off the root sandbox's 'secrets' list if agents may read it → at mounts]
    `);
    expect(make(join(dir, "root/.aws"), "/cloud")).toThrow(/secrets entry '\.aws\/'/);
    // A link to it is resolved first.
    symlinkSync(join(dir, "home/.ssh"), join(dir, "keys-link"));
    expect(make(join(dir, "keys-link"), "/keys")).toThrow(/secrets entry '\.ssh\/'/);
    // Taken off the list, it is the user's choice.
    const open = createSandbox({
      root: join(dir, "root"),
      mounts: [{ source: join(dir, "home/.ssh"), target: "/keys" }],
      secrets: [".env"],
    });
    expect(open.describe().mounts.map((m) => m.target)).toContain("/keys");
  });

  it("refuses a derived sandbox whose added entry withholds a mount's source", async () => {
    writeTree(dir, { root: { "a.txt": "a\n" }, vault: { "t.txt": "T\n" } });
    const sb = createSandbox({
      root: join(dir, "root"),
      mounts: [{ source: join(dir, "vault"), target: "/data" }],
    });
    expect(() => sb.derive({ secrets: ["vault/"] })).toThrow(/the mount at '\/data'/);
    expect(() => sb.derive({ secrets: ["*.sqlite"] })).not.toThrow();
  });
});

describeWithBwrap("a shell command moving a secret into a folder the walk skips", () => {
  it("keeps it masked in later commands (node_modules and .git)", async () => {
    writeTree(dir, {
      config: { ".env": "TOKEN=moved\n" },
      keys: { deep: { id_rsa: "KEY\n" } },
      node_modules: { pkg: { "index.js": "\n" } },
    });
    const sb = createSandbox({ root: dir });
    // The secret is a mount point and cannot move; a folder above it can,
    // carrying it into a name the next walk did not enter.
    const first = await runCommand(
      sb,
      "mkdir -p a && mv config a/node_modules && mkdir -p g && mv keys g/.git && echo moved",
    );
    expect(first.stdout).toBe("moved\n");
    for (let i = 0; i < 2; i++) {
      const r = await runCommand(sb, "cat a/node_modules/.env g/.git/deep/id_rsa; true");
      expect(r.stdout).toBe("");
      expect(r.stderr).toContain("Permission denied");
    }
  });
});
