/**
 * Issue 19, findings 3, 6 and 7: what a confined command can reach of the
 * host besides its files — host unix sockets with the network off, the
 * host's shared pool of pseudo-terminals and open files, root-only `/proc`
 * files — checked with real bubblewrap as root (like CI) and as an
 * unprivileged user.
 */
import { execFile, spawnSync } from "node:child_process";
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  realpathSync,
  rmSync,
} from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, afterEach, beforeEach, expect, test } from "vitest";
import { createSandbox, runCommand, type Sandbox } from "../src/index.js";
import { describeWithBwrap, IS_ROOT } from "./helpers/bwrap.js";
import { AS_NOBODY, removeNobodyStage, stageForNobody } from "./helpers/nobody.js";

const DIST = resolve(import.meta.dirname, "../dist/src/index.js");

let dir: string;
let root: string;
let servers: Server[];

beforeEach(() => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), "mountbox-reach-")));
  root = join(dir, "root");
  mkdirSync(root);
  mkdirSync(join(dir, "ro"));
  servers = [];
});

afterEach(async () => {
  for (const s of servers) await new Promise((r) => s.close(r));
  rmSync(dir, { recursive: true, force: true });
});
afterAll(removeNobodyStage);

/** A host server on a unix socket at `path`; `got` lists what clients sent. */
async function listen(path: string): Promise<{ got: string[] }> {
  const got: string[] = [];
  const server = createServer((c) => {
    c.on("data", (b) => got.push(b.toString()));
    c.end("hello from the host\n");
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(path, r));
  chmodSync(path, 0o777);
  return { got };
}

/** Connects to each socket path given; prints `connected <reply>` or `errno N`. */
const CONNECT = `python3 -c 'import socket, sys
for p in sys.argv[1:]:
    try:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(p); s.sendall(b"from the sandbox")
        print("connected", s.recv(100).decode().strip())
    except OSError as e:
        print("errno", e.errno)
a, b = socket.socketpair(); a.sendall(b"pair"); print("socketpair", b.recv(4).decode())'`;

/** Opens pseudo-terminals until one fails (at most 200: never the host's whole pool). */
const OPEN_PTYS = `python3 -c 'import os
fds = []
try:
    while len(fds) < 200:
        fds.append(os.openpty())
    print("opened", len(fds))
except OSError as e:
    print("stopped", len(fds), e.errno)'`;

/** Root-only `/proc` files (and the kernel's boot line): bytes a command can read of each. */
const PROC_FILES = [
  "kpageflags",
  "kpagecount",
  "kpagecgroup",
  "slabinfo",
  "vmallocinfo",
  "pagetypeinfo",
  "cmdline",
];
const READ_PROC = `for f in ${PROC_FILES.join(" ")}; do if [ -e /proc/$f ]; then echo "$f $(head -c 64 /proc/$f 2>/dev/null | wc -c)"; fi; done`;

/**
 * Runs the fixture host program (built library) as `nobody`; asynchronously,
 * so that this process's socket servers keep answering meanwhile.
 */
async function runAsNobody(command: string, opts: object = {}, mounts: string[] = []) {
  if (!existsSync(DIST)) throw new Error("build first: npm run build");
  chmodSync(dir, 0o755);
  for (const p of [
    root,
    ...readdirSync(root, { recursive: true }).map((n) => join(root, String(n))),
  ])
    chownSync(p, 65534, 65534);
  // nobody may not be able to read the repository: it runs a staged copy.
  const staged = stageForNobody();
  const r = await new Promise<{ status: number; stdout: string; stderr: string }>((done) =>
    execFile(
      "setpriv",
      [
        ...AS_NOBODY,
        staged.node,
        staged.fixture("os/run.mjs"),
        root,
        command,
        JSON.stringify(opts),
        JSON.stringify(mounts),
      ],
      { encoding: "utf8", timeout: 30_000 },
      (err, stdout, stderr) => done({ status: err === null ? 0 : 1, stdout, stderr }),
    ),
  );
  if (r.status !== 0 || r.stdout === "") throw new Error(`host program failed: ${r.stderr}`);
  return JSON.parse(r.stdout) as { stdout: string; notes: string[]; confined: boolean };
}

describeWithBwrap(
  "a command reaches no host service through a unix socket (issue 19, finding 3)",
  () => {
    let sb: Sandbox;
    beforeEach(() => {
      sb = createSandbox({ root, mounts: [`${join(dir, "ro")}:/data:ro`] });
    });

    test("with the network off, a listening host socket in the root and under a :ro mount cannot be connected to; socketpair works", async () => {
      const a = await listen(join(root, "app.sock"));
      const b = await listen(join(dir, "ro", "db.sock"));
      const r = await runCommand(sb, `${CONNECT} app.sock data/db.sock`);
      expect(r.stdout).toBe("errno 1\nerrno 1\nsocketpair pair\n");
      expect(a.got).toEqual([]);
      expect(b.got).toEqual([]);
    });

    test("also with the network on: unix sockets are their own permission", async () => {
      const a = await listen(join(root, "app.sock"));
      const r = await runCommand(sb, `${CONNECT} app.sock`, { network: true });
      expect(r.stdout).toBe("errno 1\nsocketpair pair\n");
      expect(a.got).toEqual([]);
    });

    test("allowUnixSockets: true connects (the explicit option)", async () => {
      const a = await listen(join(root, "app.sock"));
      const b = await listen(join(dir, "ro", "db.sock"));
      const r = await runCommand(sb, `${CONNECT} app.sock data/db.sock`, {
        allowUnixSockets: true,
      });
      expect(r.stdout).toBe(
        "connected hello from the host\nconnected hello from the host\nsocketpair pair\n",
      );
      expect(a.got.join("")).toBe("from the sandbox");
      expect(b.got.join("")).toBe("from the sandbox");
    });

    test("a bad allowUnixSockets is refused before anything runs", async () => {
      await expect(
        runCommand(sb, "true", { allowUnixSockets: "yes" as unknown as boolean }),
      ).rejects.toThrow(/allowUnixSockets must be a boolean/);
    });

    test("as an unprivileged host user too", async () => {
      const a = await listen(join(root, "app.sock"));
      const r = await runAsNobody(`${CONNECT} app.sock`);
      expect(r.confined).toBe(true);
      expect(r.stdout).toBe("errno 1\nsocketpair pair\n");
      expect(a.got).toEqual([]);
    });
  },
);

describeWithBwrap(
  "pseudo-terminals and open files are bounded per command (issue 19, finding 6)",
  () => {
    test.runIf(IS_ROOT)(
      "as root: a command opening ptys stops at limits.ptys (default 16); the host still opens one after",
      async () => {
        const sb = createSandbox({ root });
        const r = await runCommand(sb, OPEN_PTYS);
        // ENOSPC (28) from the command's own devpts instance, at its max.
        expect(r.stdout).toBe("stopped 16 28\n");
        const four = await runCommand(sb, `${OPEN_PTYS} 2>&1`, { limits: { ptys: 4 } });
        expect(four.stdout).toBe("stopped 4 28\n");
        const host = spawnSync(
          "python3",
          ["-c", "import os; m, s = os.openpty(); print(os.ttyname(s).startswith('/dev/pts/'))"],
          { encoding: "utf8" },
        );
        expect(host.stdout).toBe("True\n");
      },
    );

    test.runIf(IS_ROOT)(
      "as root: the ptys work (a program runs on one) and /dev/pts is not the host's",
      async () => {
        const sb = createSandbox({ root });
        const r = await runCommand(
          sb,
          `python3 -c 'import os, pty, sys
pid, fd = pty.fork()
if pid == 0:
    os.execlp("tty", "tty")
print(os.read(fd, 100).decode().strip())'; ls /dev/pts`,
        );
        expect(r.stdout).toBe("/dev/pts/0\nptmx\n");
      },
    );

    test("ulimit -n inside is limits.openFiles (default 1024), soft and hard", async () => {
      const sb = createSandbox({ root });
      const r = await runCommand(sb, "ulimit -S -n; ulimit -H -n");
      expect(r.stdout).toBe("1024\n1024\n");
      const small = await runCommand(
        sb,
        `ulimit -n; python3 -c 'fs = [open("/dev/null") for _ in range(200)]'`,
        { limits: { openFiles: 64 } },
      );
      expect(small.stdout).toBe("64\n");
      expect(small.stderr).toMatch(/Too many open files/);
      expect(small.notes.join("\n")).toMatch(/open-file limit \(64 per process/);
    });

    test("as an unprivileged host user: no pty at all (no bound can be set), open files bounded", async () => {
      const r = await runAsNobody(`${OPEN_PTYS}; ulimit -n; ls -A /dev/pts | wc -l`);
      expect(r.confined).toBe(true);
      expect(r.stdout).toBe("stopped 0 2\n1024\n0\n");
    });
  },
);

describeWithBwrap("root-only /proc files are masked (issue 19, finding 7)", () => {
  test("each one is empty inside, as root and as an unprivileged host user", async () => {
    const sb = createSandbox({ root });
    const present = PROC_FILES.filter((f) => existsSync(`/proc/${f}`));
    const expected = present.map((f) => `${f} 0\n`).join("");
    const r = await runCommand(sb, READ_PROC);
    expect(r.stdout).toBe(expected);
    expect((await runAsNobody(READ_PROC)).stdout).toBe(expected);
  });
});

describeWithBwrap(
  "bubblewrap's init cannot be stalled (issue 19, also documented too narrowly)",
  () => {
    test("ptrace of pid 1 and writes to its memory are refused: a background process dies with the shell, not at the timeout", async () => {
      const sb = createSandbox({ root });
      const r = await runCommand(
        sb,
        `sleep 60 & python3 -c 'import ctypes, errno, os
libc = ctypes.CDLL(None, use_errno=True)
print("attach", libc.ptrace(16, 1, 0, 0), errno.errorcode.get(ctypes.get_errno(), 0))
for p in ("/proc/1/mem", "/proc/1/task/1/mem"):
    try:
        os.open(p, os.O_RDWR); print(p, "open")
    except OSError as e:
        print(p, errno.errorcode[e.errno])'; echo shell-done`,
        { timeoutMs: 30_000 },
      );
      expect(r.stdout).toBe(
        "attach -1 EPERM\n/proc/1/mem EACCES\n/proc/1/task/1/mem EACCES\nshell-done\n",
      );
      expect(r.timedOut).toBe(false);
    });

    test("the command's own processes stay traceable (strace works)", async () => {
      const sb = createSandbox({ root });
      const r = await runCommand(sb, "strace -f -e trace=none true 2>&1 | tail -n 1");
      expect(r.stdout).toBe("+++ exited with 0 +++\n");
    });
  },
);

describeWithBwrap("the CLI: --allow-unix-sockets, --ptys, --open-files (issue 19)", () => {
  test("unix sockets are refused without the flag and work with it; ulimit -n follows --open-files", async () => {
    const { runCli } = await import("../src/cli/main.js");
    const run = async (args: string[]) => {
      let stdout = "";
      const code = await runCli(args, {
        stdout: (t) => {
          stdout += t;
        },
        stderr: () => {},
      });
      return { code, stdout };
    };
    const a = await listen(join(root, "app.sock"));
    const cmd = `${CONNECT} app.sock; ulimit -n`;
    expect(await run(["exec", "--root", root, "--open-files", "100", "--", cmd])).toEqual({
      code: 0,
      stdout: "errno 1\nsocketpair pair\n100\n",
    });
    expect(a.got).toEqual([]);
    expect(
      await run(["exec", "--root", root, "--allow-unix-sockets", "--ptys", "2", "--", cmd]),
    ).toEqual({ code: 0, stdout: "connected hello from the host\nsocketpair pair\n1024\n" });
    expect(a.got.join("")).toBe("from the sandbox");
  });
});
