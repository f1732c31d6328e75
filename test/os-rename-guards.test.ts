/**
 * Issue 19, adversarial review of the fixes: a guard (a read-only bind on a
 * protected place, a submodule's `.git`, a `core.hooksPath`) must not be
 * defeated by renaming a folder above it (finding D: the folders between
 * the top of a writable bind and a guard are mount points in the command's
 * namespace); husky's `.husky/_` protects `.husky` (E); a FIFO or a foreign
 * git folder where the host reads a submodule's git files never blocks the
 * host, and the command does not run (F). Real bubblewrap, real git (the
 * host's own `git status`/`git commit` after each attack, with a planted
 * hook or `core.fsmonitor` that would leave a marker), as root and as
 * nobody.
 */
import { spawnSync } from "node:child_process";
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, afterEach, beforeEach, expect, test } from "vitest";
import { createSandbox, runCommand } from "../src/index.js";
import { planBinds } from "../src/os/bind-plan.js";
import { expectMounts } from "../src/os/verify-mounts.js";
import { policyOf } from "../src/sandbox/sandbox.js";
import { describeWithBwrap } from "./helpers/bwrap.js";
import { makeRepoWithSubmodule as makeRepo, runHostGit } from "./helpers/host-git.js";
import { AS_NOBODY, removeNobodyStage, stageForNobody } from "./helpers/nobody.js";

const SEQ = resolve(import.meta.dirname, "fixtures/os/run-seq.mjs");
const DIST = resolve(import.meta.dirname, "../dist/src/index.js");

let dir: string;
let marker: string;

beforeEach(() => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), "mountbox-rg-")));
  chmodSync(dir, 0o755);
  marker = join(dir, "PWNED");
});

afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});
afterAll(removeNobodyStage);

/** The host's own git, as the host user would run it after the command. */
function hostGit(cwd: string, ...args: string[]): void {
  runHostGit(dir, cwd, ...args);
}

function chownAll(): void {
  for (const p of [dir, ...readdirSync(dir, { recursive: true }).map((n) => join(dir, String(n)))])
    chownSync(p, 65534, 65534);
}

/** Runs commands one after the other in one sandbox, in a host program (as nobody if asked). */
function runSeq(root: string, commands: string[], asNobody: boolean): Record<string, unknown>[] {
  if (!existsSync(DIST)) throw new Error("build first: npm run build");
  if (asNobody) chownAll();
  // nobody may not be able to read the repository: it runs a staged copy.
  const staged = asNobody ? stageForNobody() : undefined;
  const argv = staged
    ? [staged.node, staged.fixture("os/run-seq.mjs"), root, JSON.stringify(commands)]
    : [process.execPath, SEQ, root, JSON.stringify(commands)];
  const r = staged
    ? spawnSync("setpriv", [...AS_NOBODY, ...argv], {
        encoding: "utf8",
        timeout: 60_000,
        env: { ...process.env, HOME: "/tmp" },
      })
    : spawnSync(argv[0]!, argv.slice(1), { encoding: "utf8", timeout: 60_000 });
  if (r.status !== 0 || r.stdout === "")
    throw new Error(`host program failed (status ${r.status}): ${r.stderr}`);
  return JSON.parse(r.stdout) as Record<string, unknown>[];
}

/** A repository with one checked-out submodule `sub` (made by the host's git). */
function makeRepoWithSubmodule(): string {
  return makeRepo(dir);
}

/**
 * A host program inside the sandbox's root (`root: ".."`), as a user's app:
 * its own code is protected. It imports the library at `dist`.
 */
function makeHostInsideRoot(dist = DIST): { app: string; host: string; original: string } {
  const app = join(dir, "ws/app");
  mkdirSync(app, { recursive: true });
  writeFileSync(join(app, "package.json"), '{ "name": "app", "type": "module" }\n');
  const original = [
    `import { createSandbox, runCommand } from ${JSON.stringify(dist)};`,
    'const sb = createSandbox({ root: ".." }, { basePath: import.meta.dirname });',
    "const r = await runCommand(sb, process.argv[2], { timeoutMs: 30000 });",
    "process.stdout.write(JSON.stringify(r));",
    "",
  ].join("\n");
  const host = join(app, "host.mjs");
  writeFileSync(host, original);
  return { app, host, original };
}

const RENAME_APP =
  "mv app app.orig 2>/dev/null || echo busy; mkdir -p app; printf 'evil' > app/host.mjs 2>/dev/null || echo ro; ls app.orig >/dev/null 2>&1 || echo kept";

describeWithBwrap("issue 19 review: renaming a folder above a guard defeats nothing", () => {
  test("D1: the host's own code in the root cannot be swapped by renaming its folder (root)", () => {
    const { app, host, original } = makeHostInsideRoot();
    const r = spawnSync(process.execPath, [host, RENAME_APP], {
      cwd: app,
      encoding: "utf8",
      timeout: 60_000,
    });
    expect(JSON.parse(r.stdout)).toMatchObject({ stdout: "busy\nro\nkept\n" });
    expect(readFileSync(host, "utf8")).toBe(original);
    expect(existsSync(join(dir, "ws/app.orig"))).toBe(false);
  });

  test("D1 as nobody", () => {
    const staged = stageForNobody();
    const { app, host, original } = makeHostInsideRoot(staged.dist);
    chownAll();
    const r = spawnSync("setpriv", [...AS_NOBODY, staged.node, host, RENAME_APP], {
      cwd: app,
      encoding: "utf8",
      timeout: 60_000,
      env: { ...process.env, HOME: "/tmp" },
    });
    expect(JSON.parse(r.stdout)).toMatchObject({ stdout: "busy\nro\nkept\n" });
    expect(readFileSync(host, "utf8")).toBe(original);
  });

  test("D2: a core.hooksPath below a folder cannot be replaced by renaming that folder; the host's commit runs nothing", async () => {
    const ws = join(dir, "ws");
    mkdirSync(join(ws, "tools/hooks"), { recursive: true });
    hostGit(ws, "init", "-q");
    hostGit(ws, "config", "core.hooksPath", "tools/hooks");
    const sb = createSandbox({ root: ws });
    const r = await runCommand(
      sb,
      `mv tools tools.old 2>/dev/null || echo busy; rmdir tools 2>/dev/null || echo busy; mkdir -p tools/hooks; printf '#!/bin/sh\\ntouch ${marker}\\n' > tools/hooks/pre-commit 2>/dev/null && chmod +x tools/hooks/pre-commit && echo planted; echo ok > tools/notes.txt && echo rw`,
    );
    expect(r.stdout).toBe("busy\nbusy\nrw\n");
    expect(existsSync(join(ws, "tools.old"))).toBe(false);
    // The pillar is a bind of the plan, so the sandbox's mount table is checked for it.
    const plan = planBinds(policyOf(sb));
    expect(plan.steps.find((s) => s.virtual === "/tools")).toMatchObject({
      pillar: true,
      writable: true,
    });
    expect(expectMounts(plan, [])).toContainEqual(
      expect.objectContaining({ mountpoint: "/workspace/tools", readonly: false, kind: "bind" }),
    );
    hostGit(ws, "commit", "-q", "--allow-empty", "-m", "x");
    expect(existsSync(marker)).toBe(false);
  });

  test("D2 as nobody through the CLI (mountbox exec)", () => {
    // nobody may not be able to read the repository: it runs a staged copy.
    const staged = stageForNobody();
    const ws = join(dir, "ws");
    mkdirSync(join(ws, "tools/hooks"), { recursive: true });
    hostGit(ws, "init", "-q");
    hostGit(ws, "config", "core.hooksPath", "tools/hooks");
    chownAll();
    const r = spawnSync(
      "setpriv",
      [
        ...AS_NOBODY,
        staged.node,
        staged.cli,
        "exec",
        "--root",
        ws,
        "--",
        `mv tools tools.old 2>/dev/null || echo busy; mkdir -p tools/hooks; printf '#!/bin/sh\\ntouch ${marker}\\n' > tools/hooks/pre-commit 2>/dev/null && chmod +x tools/hooks/pre-commit && echo planted; echo done`,
      ],
      { encoding: "utf8", timeout: 60_000, env: { ...process.env, HOME: "/tmp" } },
    );
    expect(r.stdout).toBe("busy\ndone\n");
    spawnSync(
      "setpriv",
      [
        ...AS_NOBODY,
        "git",
        "-c",
        "user.name=h",
        "-c",
        "user.email=h@h",
        "commit",
        "-q",
        "--allow-empty",
        "-m",
        "x",
      ],
      { cwd: ws, stdio: "ignore", timeout: 20_000, env: { ...process.env, HOME: "/tmp" } },
    );
    expect(existsSync(marker)).toBe(false);
  });

  test("D3: a submodule cannot be swapped for a repository of the command's by renaming it; the host's git status runs nothing", async () => {
    const ws = makeRepoWithSubmodule();
    const sb = createSandbox({ root: ws });
    const r = await runCommand(
      sb,
      `mv sub sub.x 2>/dev/null || echo busy; mkdir -p sub; cd sub && git init -q 2>/dev/null && git config core.fsmonitor 'touch ${marker}; false' && echo planted; echo done`,
    );
    expect(r.stdout).toBe("busy\ndone\n");
    hostGit(ws, "status");
    expect(existsSync(marker)).toBe(false);
  });

  test("D3 as nobody", () => {
    const ws = makeRepoWithSubmodule();
    const r = runSeq(
      ws,
      [
        `mv sub sub.x 2>/dev/null || echo busy; mkdir -p sub; cd sub && git init -q 2>/dev/null && git config core.fsmonitor 'touch ${marker}; false' && echo planted; echo done`,
      ],
      true,
    );
    expect(r[0]).toMatchObject({ stdout: "busy\ndone\n" });
    hostGit(ws, "status");
    expect(existsSync(marker)).toBe(false);
  });

  test("D: a placeholder is removed where it is, even if its folder was renamed meanwhile (by anyone)", async () => {
    const ws = join(dir, "ws");
    mkdirSync(join(ws, "a"), { recursive: true });
    const sb = createSandbox({ root: ws, protected: [".git", "/a/.npmrc"] });
    const running = runCommand(
      sb,
      "touch started; while [ ! -e go ]; do sleep 0.05; done; echo done",
    );
    while (!existsSync(join(ws, "started"))) await new Promise((r) => setTimeout(r, 20));
    expect(existsSync(join(ws, "a/.npmrc"))).toBe(true);
    // The host (or another program) renames the folder while the command runs.
    renameSync(join(ws, "a"), join(ws, "b"));
    writeFileSync(join(ws, "go"), "");
    expect((await running).stdout).toBe("done\n");
    expect(readdirSync(join(ws, "b"))).toEqual([]);
    expect(existsSync(join(ws, ".git"))).toBe(false);
  });
});

describeWithBwrap("issue 19 review: husky and what the host reads from a submodule", () => {
  /** husky v9's layout: `.husky/_/<hook>` runs `.husky/_/h`, which runs `.husky/<hook>`. */
  function makeHusky(): string {
    const ws = join(dir, "ws");
    mkdirSync(join(ws, ".husky/_"), { recursive: true });
    hostGit(ws, "init", "-q");
    hostGit(ws, "config", "core.hooksPath", ".husky/_");
    writeFileSync(
      join(ws, ".husky/_/h"),
      '#!/bin/sh\nn=$(basename "$0")\ns=$(dirname "$(dirname "$0")")/$n\n[ -f "$s" ] || exit 0\nsh -e "$s"\n',
      { mode: 0o755 },
    );
    writeFileSync(join(ws, ".husky/_/pre-commit"), '#!/bin/sh\n. "$(dirname "$0")/h"\n', {
      mode: 0o755,
    });
    writeFileSync(join(ws, ".husky/pre-commit"), "true\n");
    return ws;
  }

  test("E: husky's .husky/_ protects .husky, whose hooks it runs; the host's commit runs nothing", async () => {
    const ws = makeHusky();
    const sb = createSandbox({ root: ws });
    const r = await runCommand(
      sb,
      `echo 'touch ${marker}' > .husky/pre-commit 2>/dev/null && echo planted; echo done`,
    );
    expect(r.stdout).toBe("done\n");
    hostGit(ws, "commit", "-q", "--allow-empty", "-m", "x");
    expect(existsSync(marker)).toBe(false);
  });

  test("E as nobody", () => {
    const ws = makeHusky();
    const r = runSeq(
      ws,
      [`echo 'touch ${marker}' > .husky/pre-commit 2>/dev/null && echo planted; echo done`],
      true,
    );
    expect(r[0]).toMatchObject({ stdout: "done\n" });
    hostGit(ws, "commit", "-q", "--allow-empty", "-m", "x");
    expect(existsSync(marker)).toBe(false);
  });

  test("F: a FIFO where the host reads a submodule's index never blocks the host; the command is refused, clearly", () => {
    const ws = makeRepoWithSubmodule();
    // What a command left behind before its folder could no longer be renamed.
    rmSync(join(ws, "sub"), { recursive: true });
    mkdirSync(join(ws, "sub"));
    mkdirSync(join(ws, "gd"));
    writeFileSync(join(ws, "sub/.git"), "gitdir: ../gd\n");
    expect(spawnSync("mkfifo", [join(ws, "gd/index")]).status).toBe(0);
    // In a child process: a host frozen on the FIFO fails the test (timeout), not the suite.
    const r = runSeq(ws, ["echo ran"], false);
    expect(r[0]).toMatchObject({ error: "io_error" });
    expect(String(r[0]!.message)).toMatch(/submodule/);
    expect(String(r[0]!.message)).not.toContain(dir);
  });

  test("F: a FIFO as a submodule's .git file, or a gitfile leading outside the repository's git folder, is refused", () => {
    const ws = makeRepoWithSubmodule();
    rmSync(join(ws, "sub/.git"));
    expect(spawnSync("mkfifo", [join(ws, "sub/.git")]).status).toBe(0);
    expect(runSeq(ws, ["echo ran"], false)[0]).toMatchObject({ error: "io_error" });
    rmSync(join(ws, "sub/.git"));
    mkdirSync(join(ws, "gd"));
    hostGit(join(ws, "gd"), "init", "-q", "--bare");
    writeFileSync(join(ws, "sub/.git"), "gitdir: ../gd\n");
    expect(runSeq(ws, ["echo ran"], false)[0]).toMatchObject({ error: "io_error" });
  });

  test("B: a repository a command makes below the top is named in the result's notes; the top and submodules are not", async () => {
    const ws = makeRepoWithSubmodule();
    const sb = createSandbox({ root: ws });
    const quiet = await runCommand(sb, "echo x > a.txt && git status --short >/dev/null");
    expect(quiet.notes.join("\n")).not.toMatch(/git repository/);
    const r = await runCommand(
      sb,
      `mkdir -p vendor/lib && cd vendor/lib && git init -q && git config core.fsmonitor 'touch ${marker}; false' && echo planted`,
    );
    expect(r.stdout).toBe("planted\n");
    const note = r.notes.find((n) => n.includes("git repository"));
    expect(note).toMatch(/'\/vendor\/lib'/);
    expect(note).toMatch(/core\.fsmonitor=false/);
    expect(note).not.toContain(dir);
    expect(note).not.toMatch(/'\/sub'/);
  });

  test("F: a submodule keeping its git folder in place (not absorbed), with a submodule of its own, still runs, guarded", async () => {
    const ws = join(dir, "ws");
    const src = join(dir, "innersrc");
    mkdirSync(join(ws, "sub"), { recursive: true });
    mkdirSync(src);
    hostGit(src, "init", "-q");
    hostGit(src, "commit", "-q", "--allow-empty", "-m", "i");
    hostGit(join(ws, "sub"), "init", "-q");
    hostGit(
      join(ws, "sub"),
      "-c",
      "protocol.file.allow=always",
      "submodule",
      "add",
      "-q",
      src,
      "inner",
    );
    hostGit(join(ws, "sub"), "commit", "-q", "-m", "s");
    expect(readFileSync(join(ws, "sub/inner/.git"), "utf8")).toMatch(/\.git\/modules\/inner/);
    hostGit(ws, "init", "-q");
    hostGit(ws, "add", "sub");
    hostGit(ws, "commit", "-q", "-m", "t");
    const sb = createSandbox({ root: ws });
    const r = await runCommand(
      sb,
      "echo x > sub/inner/.git 2>/dev/null || echo ro; echo ok > sub/f && echo rw",
    );
    expect(r.stdout).toBe("ro\nrw\n");
  });
});
