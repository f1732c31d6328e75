import { spawn, spawnSync } from "node:child_process";
import {
  closeSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { runCli } from "../src/cli/main.js";
import { describeWithBwrap } from "./helpers/bwrap.js";

const CLI = resolve(import.meta.dirname, "../dist/src/cli/main.js");
let dir: string;

/** Runs the built CLI as a user would. */
function cli(args: string[], env: Record<string, string> = {}) {
  const r = spawnSync(process.execPath, [CLI, ...args], {
    encoding: "utf8",
    timeout: 20_000,
    env: { ...process.env, ...env },
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** Runs the CLI in-process, capturing its output. */
async function cliInProcess(args: string[]) {
  let stdout = "";
  let stderr = "";
  const code = await runCli(args, {
    stdout: (t) => {
      stdout += t;
    },
    stderr: (t) => {
      stderr += t;
    },
  });
  return { code, stdout, stderr };
}

beforeAll(() => {
  if (!existsSync(CLI)) throw new Error("build first: npx tsc -p tsconfig.build.json");
  dir = realpathSync(mkdtempSync(join(tmpdir(), "mountbox-cli-")));
  mkdirSync(join(dir, "root"));
  mkdirSync(join(dir, "cache"));
  writeFileSync(join(dir, "root/a.txt"), "alpha\n");
  writeFileSync(join(dir, "cache/c.txt"), "cached\n");
});

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

describeWithBwrap("mountbox exec (built CLI)", () => {
  test("runs the command confined and passes its exit code through", () => {
    const root = join(dir, "root");
    const r = cli([
      "exec",
      "--root",
      root,
      "--mount",
      `${join(dir, "cache")}:/cache:ro`,
      "--",
      "cat a.txt cache/c.txt; echo new > b.txt; { echo x > cache/x; } 2>/dev/null || echo ro; exit 42",
    ]);
    expect(r).toEqual({ code: 42, stdout: "alpha\ncached\nro\n", stderr: "" });
    expect(readFileSync(join(root, "b.txt"), "utf8")).toBe("new\n");
    expect(existsSync(join(dir, "cache/x"))).toBe(false);
  });

  test("--readonly, several words joined; the command's stderr passed through as is", () => {
    const r = cli(["exec", "--root", join(dir, "root"), "--readonly", "--", "touch", "c.txt"]);
    expect(r.code).toBe(1);
    // The CLI hands the command its own stdout/stderr (exact bytes and
    // order), so notes read from the command's output are not added.
    expect(r.stderr).toBe("touch: cannot touch 'c.txt': Read-only file system\n");
    expect(r.stderr).not.toContain(dir);
    expect(existsSync(join(dir, "root/c.txt"))).toBe(false);
  });

  test("bubblewrap missing: message only, exit 125, no stack, no host path", () => {
    const r = cli(["exec", "--root", join(dir, "root"), "--", "true"], {
      MOUNTBOX_BWRAP: join(dir, "nope"),
    });
    expect(r.code).toBe(125);
    expect(r.stderr).toMatch(/^mountbox: Cannot run the command: OS sandboxing is unavailable/);
    expect(r.stderr).not.toContain(dir);
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });

  test("finding 9: binary output passes through byte for byte", () => {
    const r = spawnSync(
      process.execPath,
      [
        CLI,
        "exec",
        "--root",
        join(dir, "root"),
        "--",
        "printf '\\xff\\xfe\\x80\\x00ok'; printf '\\xc3' >&2",
      ],
      { timeout: 20_000 },
    );
    expect(r.status).toBe(0);
    expect(r.stdout).toEqual(Buffer.from([0xff, 0xfe, 0x80, 0x00, 0x6f, 0x6b]));
    expect(r.stderr).toEqual(Buffer.from([0xc3]));
  });

  test("finding 9: stdout and stderr keep their order when they share a file", () => {
    const out = join(dir, "both.txt");
    const fd = openSync(out, "w");
    try {
      const r = spawnSync(
        process.execPath,
        [
          CLI,
          "exec",
          "--root",
          join(dir, "root"),
          "--",
          "for i in 1 2 3; do echo out$i; echo err$i >&2; done",
        ],
        { timeout: 20_000, stdio: ["ignore", fd, fd] },
      );
      expect(r.status).toBe(0);
    } finally {
      closeSync(fd);
    }
    expect(readFileSync(out, "utf8")).toBe("out1\nerr1\nout2\nerr2\nout3\nerr3\n");
  });

  test("review finding 5: the command gets pipes, never the caller's file or terminal", () => {
    const log = join(dir, "host-log.txt");
    writeFileSync(log, "earlier output\nSECRET=host-token-123\n", { mode: 0o600 });
    const out = openSync(log, "a");
    const err = join(dir, "host-err.txt");
    const errFd = openSync(err, "w");
    try {
      const r = spawnSync(
        process.execPath,
        [
          CLI,
          "exec",
          "--root",
          join(dir, "root"),
          "--",
          // Reopening its stdout/stderr through /proc: only the pipe is there.
          'readlink /proc/$$/fd/1 /proc/$$/fd/2 >&2; for f in 0 1 2; do [ -t $f ] && echo "tty $f" >&2; done; grep -a SECRET /proc/$$/fd/2 >&2 < /dev/null & sleep 0.2; kill $! 2>/dev/null; { echo overwritten > /proc/$$/fd/1; } 2>/dev/null || echo reopen-refused',
        ],
        { timeout: 20_000, stdio: ["ignore", out, errFd] },
      );
      expect(r.status).toBe(0);
    } finally {
      closeSync(out);
      closeSync(errFd);
    }
    expect(readFileSync(log, "utf8")).toBe(
      "earlier output\nSECRET=host-token-123\nreopen-refused\n",
    );
    const seen = readFileSync(err, "utf8");
    expect(seen).not.toContain("SECRET");
    expect(seen).not.toContain(dir);
    expect(seen).not.toContain("tty");
    expect(seen).toMatch(/^(pipe|socket):\[\d+\]\n(pipe|socket):\[\d+\]\n/);
  });

  test("review finding 4/5: a CLI stopped by a signal stops the command and removes its .git placeholder", async () => {
    const root = join(dir, "signalled");
    mkdirSync(root);
    const child = spawn(process.execPath, [CLI, "exec", "--root", root, "--", "sleep 20"], {
      stdio: "ignore",
    });
    // The placeholder exists while the command runs.
    for (let i = 0; i < 100 && !existsSync(join(root, ".git")); i++)
      await new Promise((r) => setTimeout(r, 50));
    expect(existsSync(join(root, ".git"))).toBe(true);
    const started = Date.now();
    child.kill("SIGTERM");
    const code = await new Promise<number | null>((r) => child.once("exit", (c) => r(c)));
    expect(code).toBe(128 + 15);
    expect(Date.now() - started).toBeLessThan(5000);
    expect(readdirSync(root)).toEqual([]);
  });

  test("finding 9: a command starting with '-' runs; options end at the first word that is not one", () => {
    const dash = cli(["exec", "--root", join(dir, "root"), "--", "-x"]);
    expect(dash.code).toBe(127);
    expect(dash.stderr).toMatch(/-x: command not found/);
    const words = cli(["exec", "--root", join(dir, "root"), "ls", "-a", "--", "a.txt"]);
    expect(words).toEqual({ code: 0, stdout: "a.txt\n", stderr: "" });
  });

  test("limit options reach the sandbox", () => {
    const r = cli([
      "exec",
      "--root",
      join(dir, "root"),
      "--tmp",
      "4",
      "--processes",
      "64",
      "--memory",
      "512",
      "--cpu",
      "30",
      "--",
      "ulimit -t -u -d; head -c 8M /dev/zero > /tmp/f 2>/dev/null || echo full",
    ]);
    expect(r.stdout.replace(/ +/g, " ")).toBe(
      "cpu time (seconds, -t) 30\nmax user processes (-u) 64\ndata seg size (kbytes, -d) 524288\nfull\n",
    );
    expect(cli(["exec", "--root", join(dir, "root"), "--tmp", "1.5", "--", "true"]).code).toBe(2);
  });

  test("a timeout exits 124", () => {
    const r = cli(["exec", "--root", join(dir, "root"), "--timeout", "0.3", "--", "sleep 10"]);
    expect(r.code).toBe(124);
    expect(r.stderr).toContain("stopped after 300 ms");
  });
});

describe("mountbox exec arguments", () => {
  test("--help", async () => {
    const r = await cliInProcess(["exec", "--help"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("Usage: mountbox exec --root DIR");
    expect(r.stdout).toContain("/workspace");
  });

  test("bad arguments: clear message, exit 2", async () => {
    expect(await cliInProcess(["exec", "--", "true"])).toMatchInlineSnapshot(`
      {
        "code": 2,
        "stderr": "mountbox: --root DIR is required
      Run 'mountbox exec --help' for usage.
      ",
        "stdout": "",
      }
    `);
    expect(await cliInProcess(["exec", "--root", dir])).toMatchInlineSnapshot(`
      {
        "code": 2,
        "stderr": "mountbox: no command given (put it after --)
      Run 'mountbox exec --help' for usage.
      ",
        "stdout": "",
      }
    `);
    expect(await cliInProcess(["exec", "--root", dir, "--bogus", "--", "true"])).toMatchObject({
      code: 2,
    });
    expect(
      await cliInProcess(["exec", "--root", dir, "--timeout", "soon", "--", "true"]),
    ).toMatchObject({
      code: 2,
    });
    expect(await cliInProcess(["frobnicate"])).toMatchInlineSnapshot(`
      {
        "code": 2,
        "stderr": "mountbox: unknown command 'frobnicate'. Commands: check, exec, init, mcp, run.
      Run 'mountbox --help' for usage.
      ",
        "stdout": "",
      }
    `);
    expect((await cliInProcess([])).code).toBe(2);
  });

  test("a root that does not exist is a usage error naming the folder the user gave", async () => {
    const r = await cliInProcess(["exec", "--root", join(dir, "missing"), "--", "true"]);
    expect(r.code).toBe(2);
    expect(r.stderr.replaceAll(dir, "<dir>")).toMatchInlineSnapshot(`
      "mountbox: Invalid configuration:
      ✖ the folder for '/' does not exist: '<dir>/missing' → at root
      "
    `);
  });
});
