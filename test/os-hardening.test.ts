/**
 * Issue 11: a confined command never gets the host root's reach, inherited
 * descriptors, a bubblewrap found on PATH, the kernel keyring, secrets on a
 * command line or host keys — checked with real bubblewrap, as root (CI is
 * root) and, where it matters, as an unprivileged user.
 */
import { spawnSync } from "node:child_process";
import {
  chmodSync,
  chownSync,
  copyFileSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, afterEach, beforeEach, expect, test } from "vitest";
import {
  createSandbox,
  OsSandboxUnavailableError,
  runCommand,
  type Sandbox,
} from "../src/index.js";
import { BWRAP, describeWithBwrap, FORK_40, IS_ROOT } from "./helpers/bwrap.js";
import { AS_NOBODY, removeNobodyStage, stageForNobody } from "./helpers/nobody.js";

const FIXTURE = resolve(import.meta.dirname, "fixtures/os/run.mjs");
const DIST = resolve(import.meta.dirname, "../dist/src/index.js");

let dir: string;
let root: string;
let sb: Sandbox;

beforeEach(() => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), "mountbox-hard-")));
  root = join(dir, "root");
  mkdirSync(root);
  mkdirSync(join(dir, "outside"));
  writeFileSync(join(dir, "outside/host.txt"), "host secret\n");
  sb = createSandbox({ root });
});

afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});
afterAll(removeNobodyStage);

/** Runs the fixture host program (built library) in its own process. */
function runHost(
  args: string[],
  opts: { env?: NodeJS.ProcessEnv; asNobody?: boolean; shellPrefix?: string } = {},
): Record<string, unknown> {
  if (!existsSync(DIST)) throw new Error("build first: npm run build");
  // nobody may not be able to read the repository: it runs a staged copy.
  const staged = opts.asNobody ? stageForNobody() : undefined;
  const node = staged
    ? [staged.node, staged.fixture("os/run.mjs"), ...args]
    : [process.execPath, FIXTURE, ...args];
  const quoted = node.map((a) => `'${a.replaceAll("'", "'\\''")}'`).join(" ");
  const script = `${opts.shellPrefix ?? ""}exec ${quoted}`;
  const cmd = opts.asNobody
    ? ["setpriv", ...AS_NOBODY, "/bin/bash", "-c", script]
    : ["/bin/bash", "-c", script];
  const r = spawnSync(cmd[0]!, cmd.slice(1), {
    encoding: "utf8",
    timeout: 30_000,
    env: opts.env ?? process.env,
  });
  if (r.status !== 0 || r.stdout === "")
    throw new Error(`host program failed (${r.status}): ${r.stderr}`);
  return JSON.parse(r.stdout) as Record<string, unknown>;
}

/** Hands the temp tree to `nobody` so an unprivileged host can use it. */
function giveToNobody(): void {
  chmodSync(dir, 0o755);
  for (const p of [
    root,
    ...readdirSync(root, { recursive: true }).map((n) => join(root, String(n))),
  ])
    chownSync(p, 65534, 65534);
}

const PROBE_KNOBS = [
  "for f in /proc/sys/kernel/core_pattern /proc/sys/kernel/modprobe /proc/sys/vm/drop_caches /proc/sysrq-trigger; do",
  '  if [ -w "$f" ]; then echo "writable $f"; fi',
  "done",
  // Opening for writing, never writing: the errno says whether the kernel would allow it.
  `python3 -c 'import os
try:
    os.close(os.open("/proc/sys/kernel/core_pattern", os.O_WRONLY))
    print("opened")
except OSError as e:
    print("errno", e.errno)'`,
].join("\n");

const SET_ID_ATTEMPTS = [
  "touch s g; chmod u+s s; echo chmod-u+s=$?; chmod g+s g; echo chmod-g+s=$?",
  `python3 -c 'import os
for name, mode in (("o", 0o4755), ("p", 0o2755)):
    try:
        os.close(os.open(name, os.O_CREAT | os.O_WRONLY, mode)); print(name, "created")
    except OSError as e:
        print(name, "errno", e.errno)
try:
    os.mknod("n", 0o104755); print("mknod ok")
except OSError as e:
    print("mknod errno", e.errno)'`,
  "chmod 755 s && echo plain-chmod-ok",
].join("\n");

const EXPECTED_SET_ID = [
  "chmod-u+s=1",
  "chmod-g+s=1",
  "o errno 1",
  "p errno 1",
  "mknod errno 1",
  "plain-chmod-ok",
  "",
].join("\n");

/** True if any file under `p` has a set-uid or set-gid bit. */
function anySetIdBits(p: string): string[] {
  return (readdirSync(p, { recursive: true }) as string[]).filter(
    (n) => (lstatSync(join(p, n)).mode & 0o6000) !== 0,
  );
}

describeWithBwrap("confinement holds when the host runs as root (issue 11)", () => {
  test("finding 1: /proc/sys and the other kernel knobs are read-only inside; the host value is untouched", async () => {
    const before = readFileSync("/proc/sys/kernel/core_pattern", "utf8");
    const r = await runCommand(sb, PROBE_KNOBS);
    expect(r.stderr).toBe("");
    // EROFS as root (read-only mount); EACCES as an unprivileged user.
    expect(r.stdout).toBe(IS_ROOT ? "errno 30\n" : "errno 13\n");
    expect(readFileSync("/proc/sys/kernel/core_pattern", "utf8")).toBe(before);
  });

  test("finding 1: the command is uid 0 only when the host is root, with no capability", async () => {
    const r = await runCommand(sb, "id -u; grep -E '^Cap(Eff|Prm|Bnd)' /proc/self/status");
    expect(r.stdout).toBe(
      `${IS_ROOT ? 0 : process.geteuid?.()}\nCapPrm:\t0000000000000000\nCapEff:\t0000000000000000\nCapBnd:\t0000000000000000\n`,
    );
  });

  test("finding 1: no set-uid/set-gid bit can be set (chmod, open, mknod); binds are nosuid", async () => {
    const r = await runCommand(
      sb,
      `${SET_ID_ATTEMPTS}\ngrep -c ' /workspace .*nosuid' /proc/self/mountinfo`,
    );
    expect(r.stdout).toBe(`${EXPECTED_SET_ID}1\n`);
    expect(anySetIdBits(root)).toEqual([]);
    expect(statSync(join(root, "s")).uid).toBe(process.geteuid?.());
  });

  test("finding 1: kernel modules, clocks, mounts and new namespaces are refused by seccomp", async () => {
    const r = await runCommand(
      sb,
      `python3 -c 'import ctypes
libc = ctypes.CDLL(None, use_errno=True)
for name, nr, args in (("init_module", 175, (0, 0, b"")), ("clock_settime", 227, (0, 0)), ("mount", 165, (b"none", b"/tmp", b"tmpfs", 0, 0)), ("unshare", 272, (0x10000000,)), ("settimeofday", 164, (0, 0))):
    r = libc.syscall(nr, *args)
    print(name, r, ctypes.get_errno())'
unshare -Ur true 2>/dev/null; echo unshare-cmd=$?`,
    );
    if (process.arch !== "x64") return; // the numbers above are x86_64's
    expect(r.stdout).toBe(
      "init_module -1 1\nclock_settime -1 1\nmount -1 1\nunshare -1 1\nsettimeofday -1 1\nunshare-cmd=1\n",
    );
  });

  test("finding 4: the kernel keyring is out of reach (keyctl, add_key, request_key fail with EPERM)", async () => {
    const r = await runCommand(
      sb,
      `python3 -c 'import ctypes
libc = ctypes.CDLL(None, use_errno=True)
import platform
nr = {"x86_64": (250, 248, 249), "aarch64": (219, 217, 218)}[platform.machine()]
print("keyctl", libc.syscall(nr[0], 0, -3), ctypes.get_errno())
print("add_key", libc.syscall(nr[1], b"user", b"planted", b"v", 1, -3), ctypes.get_errno())
print("request_key", libc.syscall(nr[2], b"user", b"host", None, 0), ctypes.get_errno())'`,
    );
    expect(r.stdout).toBe("keyctl -1 1\nadd_key -1 1\nrequest_key -1 1\n");
  });

  test("finding 2: only descriptors 0-2 reach the command, whatever the host inherited", () => {
    const cmd = [
      // biome-ignore lint/suspicious/noTemplateCurlyInString: shell parameter expansion
      'for p in /proc/[0-9]*; do for f in $p/fd/*; do [ -e "$f" ] && echo "${f#/proc/*/fd/} $(readlink $f)"; done; done',
      "[ -e /proc/1/fd/100 ] && echo init-has-100",
      "ls /proc/self/fd/100/ 2>/dev/null && echo listed; true",
    ].join("\n");
    const r = runHost([root, cmd], {
      shellPrefix: `exec 100<'${join(dir, "outside")}'; exec 101<'${join(dir, "outside/host.txt")}'; `,
    });
    expect(r.exitCode).toBe(0);
    expect(String(r.stdout)).not.toMatch(/init-has-100|listed/);
    const lines = String(r.stdout).split("\n").filter(Boolean);
    expect(lines.length).toBeGreaterThan(2);
    for (const line of lines) {
      const [fd, target = ""] = line.split(" ");
      // The command's own 0-2 and descriptors a process opened itself
      // (the glob's /proc folder); bubblewrap's init keeps its event fd.
      expect(target, line).toMatch(/^(\/dev\/null|socket:|pipe:|anon_inode:|\/proc\/\d+\/fd)/);
      expect(Number(fd), line).toBeLessThan(100);
    }
    expect(String(r.stdout)).not.toContain(dir);
  });

  test("finding 3: bubblewrap is never taken from PATH (a planted node_modules/.bin/bwrap does not run)", () => {
    const bin = join(root, "node_modules/.bin");
    mkdirSync(bin, { recursive: true });
    const marker = join(dir, "planted-ran");
    writeFileSync(
      join(bin, "bwrap"),
      `#!/bin/sh\ntouch '${marker}'\nshift $#\nexec /bin/sh -c 'echo unconfined'\n`,
      {
        mode: 0o755,
      },
    );
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      PATH: `${bin}:${process.env.PATH ?? "/usr/bin:/bin"}`,
    };
    if (process.env.MOUNTBOX_BWRAP === undefined) delete env.MOUNTBOX_BWRAP;
    const r = runHost([root, "echo confined; ls /workspace"], { env });
    expect(r).toMatchObject({ exitCode: 0, stdout: "confined\nnode_modules\n", confined: true });
    expect(existsSync(marker)).toBe(false);
  });

  test("finding 3: a bubblewrap inside the sandbox, or writable by others, is refused before it runs", async () => {
    const marker = join(dir, "fake-ran");
    const fake = join(root, "bwrap");
    writeFileSync(fake, `#!/bin/sh\ntouch '${marker}'\n`, { mode: 0o755 });
    const inside = await runCommand(sb, "true", { bwrapPath: fake }).catch((e) => e);
    expect(inside).toBeInstanceOf(OsSandboxUnavailableError);
    expect(inside.message).not.toContain(dir);
    expect(inside.message).toMatchInlineSnapshot(
      `"Cannot run the command: OS sandboxing is unavailable: the bubblewrap binary is not trusted (it must be an absolute path to a file owned by root or the current user, writable by no one else, in folders only they can change, and outside the sandbox's writable folders; set MOUNTBOX_BWRAP or bwrapPath to a system copy). The command was not run. To run commands without OS confinement anyway, pass unsafeAllowUnconfined: true (not recommended)."`,
    );
    const copy = join(dir, "outside/bwrap");
    copyFileSync(BWRAP, copy);
    chmodSync(copy, 0o757);
    const writable = await runCommand(sb, "true", { bwrapPath: copy }).catch((e) => e);
    expect(writable).toBeInstanceOf(OsSandboxUnavailableError);
    const relative = await runCommand(sb, "true", { bwrapPath: "bwrap" }).catch((e) => e);
    expect(relative).toBeInstanceOf(OsSandboxUnavailableError);
    expect(existsSync(marker)).toBe(false);
    // The same copy, once only its owner may write it, is used.
    chmodSync(copy, 0o755);
    expect((await runCommand(sb, "echo ok", { bwrapPath: copy })).stdout).toBe("ok\n");
  });

  test("finding 7: env values never sit on a command line", async () => {
    const secret = `mbx-secret-${process.pid}-${Date.now()}`;
    const running = runCommand(sb, 'echo "$TOKEN"; sleep 1', { env: { TOKEN: secret } });
    await new Promise((r) => setTimeout(r, 400));
    const seen: string[] = [];
    for (const pid of readdirSync("/proc").filter((p) => /^\d+$/.test(p))) {
      try {
        if (readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(secret)) seen.push(pid);
      } catch {
        // gone
      }
    }
    const r = await running;
    expect(r.stdout).toBe(`${secret}\n`);
    expect(seen).toEqual([]);
  });

  test("finding 7: host TLS keys (/etc/ssl/private) are not there; certificates are", async () => {
    const r = await runCommand(sb, "ls -a /etc/ssl; test -e /etc/ssl/private && echo private");
    expect(r.stdout).not.toContain("private");
    if (existsSync("/etc/ssl/certs")) expect(r.stdout).toContain("certs");
  });

  test("finding 9 (library side): a command starting with '-' is a command, not a bash option", async () => {
    const r = await runCommand(sb, "-x");
    expect(r.exitCode).toBe(127);
    expect(r.stderr).toMatch(/-x: command not found/);
  });
});

describeWithBwrap("confinement as an unprivileged host user (issue 11)", () => {
  test("same knobs, no set-id bits, own uid; files the command writes belong to that user", () => {
    giveToNobody();
    const r = runHost([root, `id -u\n${PROBE_KNOBS}\n${SET_ID_ATTEMPTS}`], { asNobody: true });
    expect(r).toMatchObject({ confined: true });
    expect(r.stdout).toBe(`65534\nerrno 13\n${EXPECTED_SET_ID}`);
    expect(anySetIdBits(root)).toEqual([]);
    expect(statSync(join(root, "s")).uid).toBe(65534);
  });

  test("the process limit holds (RLIMIT_NPROC counts only the sandbox's processes)", () => {
    giveToNobody();
    const r = runHost([root, FORK_40, JSON.stringify({ limits: { processes: 10 } })], {
      asNobody: true,
    });
    expect(r).toMatchObject({ confined: true });
    expect(Number(/forked (\d+)/.exec(String(r.stdout))?.[1])).toBeLessThan(10);
    expect(JSON.stringify(r.notes)).toMatch(/process limit \(10 processes/);
  });
});
