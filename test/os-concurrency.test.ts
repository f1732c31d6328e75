/**
 * Issue 19, finding 9: concurrent `runCommand` calls on one sandbox and its
 * derived children. Each setup used to freeze the other overlapping
 * commands, setups included, so they froze each other and never returned
 * (not even at their timeout), and a host killed meanwhile left frozen
 * processes behind. Run in a child host process, so that a hang fails the
 * test instead of the suite; real bubblewrap, real cgroups (as root, like
 * CI), and as nobody.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmdirSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, afterEach, beforeEach, expect, test } from "vitest";
import { describeWithBwrap, IS_ROOT } from "./helpers/bwrap.js";
import { AS_NOBODY, removeNobodyStage, stageForNobody } from "./helpers/nobody.js";

const FIXTURE = resolve(import.meta.dirname, "fixtures/os/concurrent.mjs");
const DIST = resolve(import.meta.dirname, "../dist/src/index.js");
const CGROUP_ROOT = "/sys/fs/cgroup";

let dir: string;
let marker: string;
const hosts: number[] = [];

beforeEach(() => {
  if (!existsSync(DIST)) throw new Error("build first: npm run build");
  dir = realpathSync(mkdtempSync(join(tmpdir(), "mountbox-cc-")));
  mkdirSync(join(dir, "root/out"), { recursive: true });
  marker = `mbx-cc-${randomUUID()}`;
});

afterEach(async () => {
  // Whatever a failed run left: thawed, killed and removed (our hosts' only).
  const left = hosts.splice(0).flatMap(hostCgroups);
  for (const cg of left) thawAndKill(cg);
  await settle(
    () => left.filter((cg) => !tryRmdir(cg)),
    (l) => l.length === 0,
  );
  rmSync(dir, { recursive: true, force: true });
});
afterAll(removeNobodyStage);

function tryRmdir(cg: string): boolean {
  try {
    rmdirSync(cg);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "ENOENT";
  }
}

/** Every cgroup folder made for host process `pid`'s commands, in any hierarchy. */
function hostCgroups(pid: number): string[] {
  const out: string[] = [];
  const walk = (d: string, depth: number): void => {
    let names: string[];
    try {
      names = readdirSync(d);
    } catch {
      return;
    }
    for (const n of names) {
      const p = join(d, n);
      if (n.startsWith(`mountbox-${pid}-`)) out.push(p);
      else if (depth < 4 && !n.includes(".") && existsSync(join(p, "cgroup.procs")))
        walk(p, depth + 1);
    }
  };
  walk(CGROUP_ROOT, 0);
  return out;
}

/** Frozen or being frozen (the requested state, not only the reached one). */
function isFrozen(cg: string): boolean {
  const v1 = join(cg, "freezer.state");
  if (existsSync(v1)) return readFileSync(v1, "utf8").trim() !== "THAWED";
  const v2 = join(cg, "cgroup.freeze");
  return existsSync(v2) && readFileSync(v2, "utf8").trim() === "1";
}

function procsOf(cg: string): string[] {
  try {
    return readFileSync(join(cg, "cgroup.procs"), "utf8").split("\n").filter(Boolean);
  } catch {
    return [];
  }
}

function thawAndKill(cg: string): void {
  for (const [f, v] of [
    ["freezer.state", "THAWED"],
    ["cgroup.freeze", "0"],
  ] as const)
    if (existsSync(join(cg, f))) writeFileSync(join(cg, f), v);
  for (const p of procsOf(cg)) {
    try {
      process.kill(Number(p), "SIGKILL");
    } catch {
      // gone
    }
  }
}

/** Processes whose command line carries this test's marker (the commands, their bubblewrap). */
function markedProcesses(): number[] {
  const out: number[] = [];
  for (const n of readdirSync("/proc")) {
    if (!/^\d+$/.test(n)) continue;
    try {
      if (readFileSync(`/proc/${n}/cmdline`, "utf8").includes(marker)) out.push(Number(n));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/** Waits (polling) until `check` holds or about 10 s pass; returns its last value. */
async function settle<T>(check: () => T, ok: (v: T) => boolean): Promise<T> {
  let v = check();
  for (let i = 0; i < 200 && !ok(v); i++) {
    await new Promise((r) => setTimeout(r, 50));
    v = check();
  }
  return v;
}

function startHost(args: string[], asNobody = false): ChildProcess {
  const rest = [join(dir, "root"), marker, ...args];
  // nobody may not be able to read the repository: it runs a staged copy.
  const staged = asNobody ? stageForNobody() : undefined;
  const child = staged
    ? spawn("setpriv", [...AS_NOBODY, staged.node, staged.fixture("os/concurrent.mjs"), ...rest], {
        env: { ...process.env, HOME: "/tmp" },
      })
    : spawn(process.execPath, [FIXTURE, ...rest]);
  if (child.pid !== undefined) hosts.push(child.pid);
  return child;
}

/** Runs the host to its end (killed after 60 s: a hang fails here); its output lines. */
function runHost(
  rounds: number,
  asNobody = false,
): Promise<{ lines: string[]; code: number | null }> {
  return new Promise((done) => {
    const child = startHost([String(rounds)], asNobody);
    let out = "";
    child.stdout?.on("data", (b: Buffer) => {
      out += b.toString("utf8");
    });
    const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
    child.once("exit", (code) => {
      clearTimeout(timer);
      done({ lines: out.split("\n").filter(Boolean), code });
    });
  });
}

function expectAllRan(lines: string[], rounds: number): void {
  expect(lines).toHaveLength(rounds);
  for (const line of lines)
    expect(JSON.parse(line)).toEqual(
      Array.from({ length: 8 }, () => ({ exitCode: 0, stdout: "ok\n", timedOut: false })),
    );
}

describeWithBwrap("finding 9: concurrent commands on one sandbox and its children", () => {
  test("8 at once, three rounds, on a sandbox and two derived children: all return, nothing left", async () => {
    const { lines, code } = await runHost(3);
    expect(code).toBe(0);
    expectAllRan(lines, 3);
    expect(readFileSync(join(dir, "root/out/f7"), "utf8")).toBe("2\n");
    expect(markedProcesses()).toEqual([]);
    expect(hostCgroups(hosts[0]!)).toEqual([]);
  }, 90_000);

  test.runIf(IS_ROOT)(
    "the host killed while a setup has others frozen: nothing is left frozen or running; the next host sweeps its cgroups",
    async () => {
      const child = startHost(["0", "hang"]);
      const reached = await new Promise<boolean>((done) => {
        let out = "";
        child.stdout?.on("data", (b: Buffer) => {
          out += b.toString("utf8");
          if (out.includes("frozen\n")) done(true);
        });
        child.once("exit", () => done(false));
      });
      expect(reached).toBe(true);
      const pid = child.pid!;
      // At this moment other commands of that host are frozen.
      expect(hostCgroups(pid).some(isFrozen)).toBe(true);
      child.kill("SIGKILL");
      const left = await settle(markedProcesses, (p) => p.length === 0);
      expect(left).toEqual([]);
      const cgroups = await settle(
        () => hostCgroups(pid).filter((cg) => isFrozen(cg) || procsOf(cg).length > 0),
        (c) => c.length === 0,
      );
      expect(cgroups).toEqual([]);
      // The next host removes the empty cgroups the killed one left.
      const { lines, code } = await runHost(1);
      expect(code).toBe(0);
      expectAllRan(lines, 1);
      expect(hostCgroups(pid)).toEqual([]);
    },
    90_000,
  );

  test.runIf(IS_ROOT)(
    "as nobody too",
    async () => {
      chmodSync(dir, 0o755);
      for (const p of [
        dir,
        ...readdirSync(dir, { recursive: true }).map((n) => join(dir, String(n))),
      ])
        chownSync(p, 65534, 65534);
      const { lines, code } = await runHost(2, true);
      expect(code).toBe(0);
      expectAllRan(lines, 2);
      expect(markedProcesses()).toEqual([]);
    },
    90_000,
  );
});
