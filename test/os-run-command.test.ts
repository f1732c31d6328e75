import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import {
  createSandbox,
  describeCommandSandbox,
  OsSandboxUnavailableError,
  runCommand,
  type Sandbox,
} from "../src/index.js";
import { describeWithBwrap } from "./helpers/bwrap.js";

let dir: string;
let sb: Sandbox;

/** Every file and folder under `p`, relative, sorted (to prove nothing appeared). */
function tree(p: string): string[] {
  return (readdirSync(p, { recursive: true }) as string[]).sort();
}

beforeEach(() => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), "mountbox-os-")));
  mkdirSync(join(dir, "root/src"), { recursive: true });
  mkdirSync(join(dir, "root/secret"), { recursive: true });
  mkdirSync(join(dir, "root/.git"));
  writeFileSync(join(dir, "root/src/a.txt"), "alpha\n");
  writeFileSync(join(dir, "root/secret/key.txt"), "s3cret\n");
  writeFileSync(join(dir, "root/.git/HEAD"), "ref\n");
  mkdirSync(join(dir, "cache"));
  writeFileSync(join(dir, "cache/c.txt"), "cached\n");
  mkdirSync(join(dir, "outside"));
  writeFileSync(join(dir, "outside/host.txt"), "host file\n");
  sb = createSandbox({
    root: join(dir, "root"),
    mounts: [`${join(dir, "cache")}:/cache:ro`],
  });
  // The mount point /cache inside the root is created up front so the tree
  // comparisons below see only what commands do.
  mkdirSync(join(dir, "root/cache"));
});

afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

describeWithBwrap("runCommand (bubblewrap)", () => {
  test("a folder mounted read-write and read-only is read-only through both, as in-process", async () => {
    mkdirSync(join(dir, "shared"));
    writeFileSync(join(dir, "shared/f.txt"), "F\n");
    mkdirSync(join(dir, "root/a"));
    mkdirSync(join(dir, "root/b"));
    const twice = createSandbox({
      root: join(dir, "root"),
      mounts: [
        { source: join(dir, "shared"), target: "/a" },
        { source: join(dir, "shared"), target: "/b", readonly: true },
      ],
    });
    expect(twice.canWrite("/a/f.txt")).toBe(false);
    const r = await runCommand(
      twice,
      "cat a/f.txt; echo G > a/f.txt; echo G > b/f.txt; cat a/f.txt",
    );
    expect(r.stdout).toBe("F\nF\n");
    expect(readFileSync(join(dir, "shared/f.txt"), "utf8")).toBe("F\n");
  });

  test("runs in /workspace with the sandbox's files at their virtual paths", async () => {
    const r = await runCommand(sb, "pwd; cat src/a.txt; cat /workspace/cache/c.txt; exit 7");
    expect(r).toMatchObject({ exitCode: 7, stdout: "/workspace\nalpha\ncached\n", stderr: "" });
    expect(r.confined).toBe(true);
  });

  test("writes go to writable areas only; refused writes create nothing on the host", async () => {
    const ro = sb.derive({ allowRead: ["/"], allowWrite: ["/src"] });
    const before = tree(dir);
    const r = await runCommand(
      ro,
      [
        "echo x > /workspace/new.txt",
        "echo x > /workspace/cache/new.txt",
        "echo x > /workspace/.git/new",
        "echo x > /new.txt",
        "echo x > /usr/new.txt",
        "echo x > /etc/new.txt",
        "mkdir /home/new",
        `echo x > ${join(dir, "outside/new.txt")}`,
        "echo ok > /tmp/scratch.txt && cat /tmp/scratch.txt",
      ].join("; "),
    );
    expect(r.stdout).toBe("ok\n");
    expect(r.stderr.split("\n").filter(Boolean)).toHaveLength(8);
    expect(tree(dir)).toEqual(before);
    expect(existsSync(join(tmpdir(), "scratch.txt"))).toBe(false);

    const w = await runCommand(ro, "echo written > /workspace/src/b.txt && mkdir src/d");
    expect(w.exitCode).toBe(0);
    expect(readFileSync(join(dir, "root/src/b.txt"), "utf8")).toBe("written\n");
    expect(statSync(join(dir, "root/src/d")).isDirectory()).toBe(true);
  });

  test("a refused write gets a note naming the writable paths", async () => {
    const child = sb.derive({ allowRead: ["/"], allowWrite: ["/src"] });
    const r = await runCommand(child, "touch /workspace/cache/x");
    expect(r.exitCode).toBe(1);
    expect(r.notes).toMatchInlineSnapshot(`
      [
        "A path was refused or not found by the OS sandbox. The sandbox's files are under /workspace (the sandbox path '/x' is '/workspace/x'). Writable: /workspace/src; /tmp is private scratch space. Everything else is read-only or absent.",
      ]
    `);
  });

  test("read-only mounts stay read-only, also against remount as root inside", async () => {
    const r = await runCommand(
      sb,
      [
        "id -u",
        "mount -o remount,rw /workspace/cache 2>/dev/null && echo REMOUNTED",
        "mount -o remount,rw,bind /workspace/cache 2>/dev/null && echo REMOUNTED",
        "echo changed > /workspace/cache/c.txt 2>/dev/null && echo WROTE",
        "echo hi > /workspace/top.txt && echo root-writable",
      ].join("; "),
    );
    expect(r.stdout).toBe("0\nroot-writable\n");
    expect(readFileSync(join(dir, "cache/c.txt"), "utf8")).toBe("cached\n");
    expect(readdirSync(join(dir, "cache"))).toEqual(["c.txt"]);
  });

  test("a derived child cannot see areas it was not given", async () => {
    const child = sb.derive({ allowRead: ["/src"] });
    const r = await runCommand(
      child,
      `ls -A /workspace; cat /workspace/secret/key.txt; cat ${join(dir, "root/secret/key.txt")}; ls /workspace/cache`,
    );
    expect(r.stdout).toBe("src\n");
    expect(r.stdout + r.stderr).not.toContain("s3cret");
    expect(r.stderr).toContain("No such file or directory");
  });

  test("an exact-file area shows that file only", async () => {
    const child = sb.derive({ allowRead: ["/src/a.txt"] });
    const r = await runCommand(child, "cat /workspace/src/a.txt; ls -A /workspace/src");
    expect(r.stdout).toBe("alpha\na.txt\n");
  });

  test("escaping symlinks reach nothing", async () => {
    symlinkSync(join(dir, "outside"), join(dir, "root/src/abs-link"));
    symlinkSync("../../../outside/host.txt", join(dir, "root/src/rel-link"));
    const before = tree(join(dir, "outside"));
    const r = await runCommand(
      sb,
      "cat src/abs-link/host.txt; cat src/rel-link; echo x > src/abs-link/new.txt; ls src/abs-link/",
    );
    expect(r.stdout).toBe("");
    expect(r.stdout + r.stderr).not.toContain("host file");
    expect(tree(join(dir, "outside"))).toEqual(before);
  });

  test("no host environment variable leaks in; given env is set", async () => {
    process.env.MOUNTBOX_LEAK_CHECK = "leaked-value";
    try {
      const r = await runCommand(sb, "env", { env: { GREETING: "hello" } });
      expect(r.stdout).not.toContain("leaked-value");
      expect(r.stdout).not.toContain("MOUNTBOX_LEAK_CHECK");
      const names = r.stdout
        .split("\n")
        .filter(Boolean)
        .map((l) => l.split("=")[0])
        .sort();
      expect(names).toEqual(["GREETING", "HOME", "LANG", "PATH", "PWD", "SHLVL", "TMPDIR", "_"]);
    } finally {
      delete process.env.MOUNTBOX_LEAK_CHECK;
    }
  });

  describe("network", () => {
    let server: Server;
    let port: number;
    beforeEach(async () => {
      server = createServer((_req, res) => res.end("pong"));
      server.requestTimeout = 2_000;
      await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
      port = (server.address() as AddressInfo).port;
    });
    afterEach(async () => {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    });
    // bash's /dev/tcp: no curl needed. `timeout` bounds a hanging connect.
    const fetchCmd = (p: number) =>
      `timeout 3 bash -c 'exec 3<>/dev/tcp/127.0.0.1/${p}; printf "GET / HTTP/1.0\\r\\n\\r\\n" >&3; cat <&3' | tail -n 1`;

    test("the host's loopback is unreachable with network off, with a note", async () => {
      const r = await runCommand(sb, `set -o pipefail; ${fetchCmd(port)}`, { timeoutMs: 10_000 });
      expect(r.stdout).not.toContain("pong");
      expect(r.exitCode).not.toBe(0);
      expect(r.notes.at(-1)).toMatchInlineSnapshot(
        `"Network access is off for this command (it runs in an empty network namespace, the host's 127.0.0.1 included). Ask for network access if it is needed."`,
      );
    });

    test("and reachable with network on", async () => {
      const r = await runCommand(sb, fetchCmd(port), { network: true, timeoutMs: 10_000 });
      expect(r.stdout).toBe("pong");
      expect(r.notes).toEqual([]);
    });
  });

  test("the timeout kills backgrounded children too", async () => {
    mkdirSync(join(dir, "root/out"));
    const marker = `987.${process.pid}`;
    const t0 = Date.now();
    const r = await runCommand(
      sb,
      `(while true; do echo t >> /workspace/out/tick; sleep 0.05; done) & sleep ${marker} & setsid sleep ${marker} & wait`,
      { timeoutMs: 400 },
    );
    expect(Date.now() - t0).toBeLessThan(5_000);
    expect(r.timedOut).toBe(true);
    expect(r.exitCode).toBe(137);
    expect(r.notes[0]).toMatchInlineSnapshot(
      `"The command was stopped after 400 ms (timeout); every process it started was killed."`,
    );
    const size = statSync(join(dir, "root/out/tick")).size;
    await new Promise((res) => setTimeout(res, 300));
    expect(statSync(join(dir, "root/out/tick")).size).toBe(size);
    // No process with the marker in its command line survives anywhere.
    const alive = readdirSync("/proc")
      .filter((p) => /^\d+$/.test(p))
      .filter((p) => {
        try {
          return readFileSync(`/proc/${p}/cmdline`, "utf8").includes(marker);
        } catch {
          return false;
        }
      });
    expect(alive).toEqual([]);
  });

  test("output is capped per stream and marked truncated", async () => {
    const r = await runCommand(sb, "head -c 3000000 /dev/zero | tr '\\0' a; echo done >&2", {
      maxOutputBytes: 1000,
    });
    expect(r.stdout).toBe("a".repeat(1000));
    expect(r.stderr).toBe("done\n");
    expect(r.truncated).toBe(true);
    expect(r.exitCode).toBe(0);
    const small = await runCommand(sb, "echo hi", { maxOutputBytes: 1000 });
    expect(small.truncated).toBe(false);
  });

  test("an abort signal stops the command", async () => {
    const ac = new AbortController();
    const p = runCommand(sb, "sleep 30", { signal: ac.signal });
    setTimeout(() => ac.abort(), 200);
    const r = await p;
    expect(r.exitCode).toBe(137);
    expect(r.notes).toContain("The command was cancelled; every process it started was killed.");
  });

  test("missing bubblewrap: OsSandboxUnavailableError, and the command does not run", async () => {
    const bwrapPath = join(dir, "no-such-bwrap");
    const err = await runCommand(sb, "touch /workspace/ran", { bwrapPath }).catch((e) => e);
    expect(err).toBeInstanceOf(OsSandboxUnavailableError);
    expect(err.code).toBe("os_sandbox_unavailable");
    expect(err.message).not.toContain(dir);
    expect(err.message).toMatchInlineSnapshot(
      `"Cannot run the command: OS sandboxing is unavailable: bubblewrap (bwrap) was not found. Install it (e.g. \`apt install bubblewrap\`). The command was not run. To run commands without OS confinement anyway, pass unsafeAllowUnconfined: true (not recommended)."`,
    );
    expect(existsSync(join(dir, "root/ran"))).toBe(false);
  });

  test("bubblewrap that cannot create namespaces is refused too", async () => {
    const fake = join(dir, "failing-bwrap");
    writeFileSync(
      fake,
      "#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n",
      {
        mode: 0o755,
      },
    );
    const err = await runCommand(sb, "true", { bwrapPath: fake }).catch((e) => e);
    expect(err).toBeInstanceOf(OsSandboxUnavailableError);
    expect(err.message).toContain("cannot create the namespaces");
  });

  test("unsafeAllowUnconfined runs without bubblewrap, and says so", async () => {
    const r = await runCommand(sb, "cat src/a.txt; echo $HOME", {
      bwrapPath: join(dir, "no-such-bwrap"),
      unsafeAllowUnconfined: true,
    });
    expect(r.confined).toBe(false);
    expect(r.stdout).toBe("alpha\n/tmp\n");
    expect(r.notes[0]).toContain("WITHOUT OS confinement");
  });

  test("bad options are refused at the edge", async () => {
    await expect(runCommand(sb, "")).rejects.toThrow(/command must be a non-empty string/);
    await expect(runCommand(sb, "true", { timeoutMs: -1 })).rejects.toThrow(TypeError);
    await expect(runCommand(sb, "true", { maxOutputBytes: 1.5 })).rejects.toThrow(TypeError);
    await expect(runCommand(sb, "true", { env: { "A=B": "x" } })).rejects.toThrow(
      /not a valid variable name/,
    );
    await expect(
      runCommand(sb, "true", { netwrok: true } as unknown as Parameters<typeof runCommand>[2]),
    ).rejects.toThrow(/unknown option 'netwrok'/);
    await expect(runCommand({} as Sandbox, "true")).rejects.toThrow(TypeError);
  });

  test("describeCommandSandbox explains the /workspace mapping", () => {
    const child = sb.derive({ allowRead: ["/"], allowWrite: ["/"] });
    expect(describeCommandSandbox(child)).toMatchInlineSnapshot(`
      "Commands run with bash in an OS sandbox. The sandbox's files are under /workspace, the working directory: the sandbox path '/src/a.ts' is '/workspace/src/a.ts' there.
      Readable: /workspace.
      Writable: /workspace (read-only inside: /workspace/cache).
      /tmp is private scratch space, discarded when the command ends. Nothing else is writable; paths outside these do not exist.
      Secrets are withheld: files named like .env, .env.*, *.pem, *.key, id_rsa*, id_dsa*, id_ecdsa*, id_ed25519*, .npmrc, .netrc, .git-credentials, .aws/, .ssh/ (at any depth) cannot be opened, and such folders show empty; do not try to get around this.
      Network: off. The environment is empty except PATH, HOME=/tmp, TMPDIR=/tmp and LANG."
    `);
  });
});
