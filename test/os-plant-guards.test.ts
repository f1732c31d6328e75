/**
 * Issue 19, third review: nothing a command leaves behind may be planted for
 * the host's git or the next load — a `.git` case twin (finding 1), absent
 * absolute protected paths such as `/workers` (2), submodule gitfiles and a
 * `core.hooksPath` in the work tree (4), a folder made unreadable (5) — and
 * no spurious failure when one command's placeholder comes or goes while
 * the next is prepared (10). Real bubblewrap, real git (the host's own
 * `git status` after each attack, with a `core.fsmonitor` that would leave
 * a marker), as root and as nobody.
 */
import { spawnSync } from "node:child_process";
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, afterEach, beforeEach, expect, test } from "vitest";
import {
  createSandbox,
  IoError,
  loadProgram,
  loadProgramDefinition,
  runCommand,
  type SandboxConfig,
} from "../src/index.js";
import { pinBinds } from "../src/os/bind-fds.js";
import { planBinds } from "../src/os/bind-plan.js";
import { policyOf } from "../src/sandbox/sandbox.js";
import { describeWithBwrap } from "./helpers/bwrap.js";
import { makeRepoWithSubmodule as makeRepo, runHostGit } from "./helpers/host-git.js";
import { AS_NOBODY, removeNobodyStage, stageForNobody } from "./helpers/nobody.js";

const DIST = resolve(import.meta.dirname, "../dist/src/index.js");
const CLI = resolve(import.meta.dirname, "../dist/src/cli/main.js");

let dir: string;
let marker: string;

beforeEach(() => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), "mountbox-pg-")));
  chmodSync(dir, 0o755);
  marker = join(dir, "PWNED");
});

afterEach(() => {
  chmodSync(dir, 0o755);
  for (const n of readdirSync(dir, { recursive: true }))
    try {
      chmodSync(join(dir, String(n)), 0o755);
    } catch {
      // a link
    }
  rmSync(dir, { recursive: true, force: true });
});
afterAll(removeNobodyStage);

/** The host's own git, as the host user would run it after the command. */
function hostGit(cwd: string, ...args: string[]): void {
  runHostGit(dir, cwd, ...args);
}

/** A planted fsmonitor: leaves the marker if the host's git ever runs it. */
function plant(gitDirArg: string): string {
  return `git ${gitDirArg} config core.fsmonitor 'touch ${marker}; false'`;
}

/** Runs commands one after the other in one sandbox, in a host program run as nobody. */
function runAsNobody(root: string, commands: string[]): Record<string, unknown>[] {
  if (!existsSync(DIST)) throw new Error("build first: npm run build");
  for (const p of [dir, ...readdirSync(dir, { recursive: true }).map((n) => join(dir, String(n)))])
    chownSync(p, 65534, 65534);
  // nobody may not be able to read the repository: it runs a staged copy.
  const staged = stageForNobody();
  const r = spawnSync(
    "setpriv",
    [...AS_NOBODY, staged.node, staged.fixture("os/run-seq.mjs"), root, JSON.stringify(commands)],
    { encoding: "utf8", timeout: 60_000, env: { ...process.env, HOME: "/tmp" } },
  );
  if (r.status !== 0 || r.stdout === "") throw new Error(`host program failed: ${r.stderr}`);
  return JSON.parse(r.stdout) as Record<string, unknown>[];
}

/** A repository with one checked-out submodule `sub` (made by the host's git). */
function makeRepoWithSubmodule(): string {
  return makeRepo(dir);
}

describeWithBwrap("issue 19: nothing plantable for the host's git or the next load", () => {
  test("finding 1: a .GIT case twin does not unprotect .git; the host's git status runs nothing", async () => {
    const ws = join(dir, "ws");
    mkdirSync(ws);
    const sb = createSandbox({ root: ws });
    expect((await runCommand(sb, "mkdir .GIT")).exitCode).toBe(0);
    const r = await runCommand(sb, `git init -q . 2>/dev/null && ${plant("")} && echo planted`);
    expect(r.stdout).not.toContain("planted");
    expect(existsSync(join(ws, ".git"))).toBe(false);
    hostGit(ws, "status");
    expect(existsSync(marker)).toBe(false);
    // The twin itself is held read-only now, as the in-process API holds it.
    expect((await runCommand(sb, "touch .GIT/x 2>/dev/null || echo ro")).stdout).toBe("ro\n");
  });

  test("finding 1 as nobody", () => {
    const ws = join(dir, "ws");
    mkdirSync(ws);
    const r = runAsNobody(ws, [
      "mkdir .GIT",
      `git init -q . 2>/dev/null && ${plant("")} && echo planted; echo done`,
    ]);
    expect(r[1]).toMatchObject({ stdout: "done\n" });
    expect(existsSync(join(ws, ".git"))).toBe(false);
    hostGit(ws, "status");
    expect(existsSync(marker)).toBe(false);
  });

  test("finding 1 through the CLI (mountbox exec)", () => {
    const ws = join(dir, "ws");
    mkdirSync(ws);
    const exec = (command: string) =>
      spawnSync(process.execPath, [CLI, "exec", "--root", ws, "--", command], {
        encoding: "utf8",
        timeout: 30_000,
      });
    expect(exec("mkdir .GIT").status).toBe(0);
    const r = exec(`git init -q . 2>/dev/null && ${plant("")} && echo planted; echo done`);
    expect(r.stdout).toBe("done\n");
    expect(existsSync(join(ws, ".git"))).toBe(false);
    hostGit(ws, "status");
    expect(existsSync(marker)).toBe(false);
  });

  test("finding 2: an absent /workers cannot be created by a command; the next load defines no worker", async () => {
    const prog = join(dir, "prog");
    mkdirSync(prog);
    writeFileSync(join(prog, "program.yaml"), 'name: p\nsandbox:\n  root: "."\n');
    const options = await loadProgram(prog);
    const sb = createSandbox(options.sandbox as SandboxConfig, { basePath: prog });
    const r = await runCommand(
      sb,
      "mkdir -p workers 2>/dev/null; printf -- '---\\ndescription: evil\\n---\\nDo evil.\\n' > workers/evil.worker 2>/dev/null || echo refused; echo x > program.yaml 2>/dev/null || echo ro; echo ok > other.txt && echo rw",
    );
    expect(r.stdout).toBe("refused\nro\nrw\n");
    expect(existsSync(join(prog, "workers"))).toBe(false);
    const def = await loadProgramDefinition(prog);
    expect(Object.keys(def.workers)).toEqual([]);
  });

  test("finding 2: absolute protected paths at any depth, present or absent, file or folder", async () => {
    const ws = join(dir, "ws");
    mkdirSync(join(ws, "a"), { recursive: true });
    writeFileSync(join(ws, "a/manifest.json"), "{}\n");
    const sb = createSandbox({
      root: ws,
      protected: [".git", "/a/manifest.json", "/a/b/c/node_modules", "/top.json"],
    });
    const r = await runCommand(
      sb,
      "echo x > a/manifest.json 2>/dev/null || echo r1; mkdir -p a/b/c/node_modules/x 2>/dev/null || echo r2; echo x > top.json 2>/dev/null || echo r3; echo ok > a/b/free.txt && echo rw",
    );
    expect(r.stdout).toBe("r1\nr2\nr3\nrw\n");
    expect(existsSync(join(ws, "a/b/c/node_modules"))).toBe(false);
    expect(existsSync(join(ws, "top.json"))).toBe(false);
  });

  test("finding 4: a submodule's gitfile cannot be re-pointed; the host's git status at the top runs nothing", async () => {
    const ws = makeRepoWithSubmodule();
    const sb = createSandbox({ root: ws });
    const r = await runCommand(
      sb,
      `cp -r .git/modules/sub evilgd 2>/dev/null || git init -q evilgd; ${plant("--git-dir=evilgd")}; git --git-dir=evilgd config --unset core.worktree; echo 'gitdir: ../evilgd' > sub/.git 2>/dev/null || echo refused; echo x > .gitmodules 2>/dev/null || echo ro`,
    );
    expect(r.stdout).toBe("refused\nro\n");
    hostGit(ws, "status");
    expect(existsSync(marker)).toBe(false);
  });

  test("finding 4: an uninitialised submodule's .git cannot be planted", async () => {
    const ws = makeRepoWithSubmodule();
    hostGit(ws, "submodule", "deinit", "-q", "-f", "sub");
    expect(readdirSync(join(ws, "sub"))).toEqual([]);
    const sb = createSandbox({ root: ws });
    const r = await runCommand(
      sb,
      `git init -q sub 2>/dev/null && ${plant("-C sub")} && echo planted; echo done`,
    );
    expect(r.stdout).toBe("done\n");
    expect(readdirSync(join(ws, "sub"))).toEqual([]);
    hostGit(ws, "status");
    expect(existsSync(marker)).toBe(false);
  });

  test("finding 4: a core.hooksPath in the work tree (husky) cannot be written; the host's commit runs nothing", async () => {
    const ws = join(dir, "ws");
    mkdirSync(ws);
    hostGit(ws, "init", "-q");
    hostGit(ws, "config", "core.hooksPath", ".husky");
    const sb = createSandbox({ root: ws });
    const r = await runCommand(
      sb,
      `mkdir -p .husky 2>/dev/null; printf '#!/bin/sh\\ntouch ${marker}\\n' > .husky/pre-commit 2>/dev/null && chmod +x .husky/pre-commit && echo planted; echo done`,
    );
    expect(r.stdout).toBe("done\n");
    hostGit(ws, "commit", "-q", "--allow-empty", "-m", "x");
    expect(existsSync(marker)).toBe(false);
  });

  test("finding 5 as nobody: a folder made unlistable keeps .git read-only", () => {
    const ws = join(dir, "ws");
    mkdirSync(ws);
    hostGit(ws, "init", "-q");
    const r = runAsNobody(ws, [
      "chmod 100 .",
      `${plant("")} 2>/dev/null && echo planted; echo done`,
    ]);
    expect(r[1]).toMatchObject({ stdout: "done\n" });
    chmodSync(ws, 0o755);
    hostGit(ws, "status");
    expect(existsSync(marker)).toBe(false);
  });

  test("finding 5 as nobody: an absent .git in a folder of its own it cannot write: the command is refused, clearly", () => {
    const ws = join(dir, "ws");
    mkdirSync(ws);
    chownSync(dir, 65534, 65534);
    chownSync(ws, 65534, 65534);
    chmodSync(ws, 0o500);
    const r = runAsNobody(ws, [`chmod 755 . && git init -q . && ${plant("")} && echo planted`]);
    expect(r[0]).toMatchObject({ error: "io_error" });
    // The first protected name it cannot hold absent (`.git` or another default).
    expect(String(r[0]!.message)).toMatch(/'\/\.[\w.-]+' is protected and absent/);
    expect(String(r[0]!.message)).not.toContain(dir);
    chmodSync(ws, 0o755);
    expect(existsSync(join(ws, ".git"))).toBe(false);
  });

  test("finding 10: a placeholder that goes away between the plan and the run is no failure", async () => {
    const ws = join(dir, "ws");
    mkdirSync(ws);
    const sb = createSandbox({ root: ws });
    const policy = policyOf(sb);
    const long = runCommand(sb, "sleep 0.5");
    await new Promise((r) => setTimeout(r, 250));
    // Planned while the other command's placeholder is there…
    const plan = planBinds(policy);
    await long;
    // …pinned once it is gone: the place is held again, not refused.
    const pinned = pinBinds(policy, plan);
    expect(existsSync(join(ws, ".git"))).toBe(true);
    pinned.close();
    pinned.release();
    expect(existsSync(join(ws, ".git"))).toBe(false);
  });

  test("finding 10: 200 commands in a loop, while other commands start and end, never fail", async () => {
    const ws = join(dir, "ws");
    mkdirSync(ws);
    const sb = createSandbox({ root: ws });
    const others: Promise<unknown>[] = [];
    const failures: unknown[] = [];
    for (let i = 0; i < 200; i++) {
      if (i % 10 === 0) {
        // Another command that holds the placeholder and lets it go while
        // the next ones are prepared (started once its setup is over, so
        // that only the placeholder, not the setups, overlaps).
        rmSync(join(ws, "started"), { force: true });
        others.push(runCommand(sb, `touch started; sleep 0.0${i % 7}`));
        while (!existsSync(join(ws, "started"))) await new Promise((r) => setTimeout(r, 5));
      }
      try {
        const r = await runCommand(sb, "true");
        if (r.exitCode !== 0) failures.push(r);
      } catch (err) {
        failures.push(err instanceof IoError ? err.message : err);
      }
    }
    await Promise.all(others);
    expect(failures).toEqual([]);
    expect(existsSync(join(ws, ".git"))).toBe(false);
  }, 120_000);
});
