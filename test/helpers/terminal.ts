/**
 * A real terminal for tests: a command run in its own tmux server (a
 * private socket), whose screen can be read as text (or with its colours),
 * whose raw output is recorded byte for byte from the first byte on, and
 * which takes keys as a person types them.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { describe, test } from "vitest";
import { REQUIRE_BWRAP } from "./bwrap.js";

let sessions = 0;

/** A command running in a tmux pane. */
export interface Terminal {
  /** The screen as plain text, lines right-trimmed. */
  screen(): string;
  /** The screen with its colours and attributes (SGR escapes). */
  screenWithColors(): string;
  /** Everything the command wrote, as raw bytes decoded as UTF-8. */
  output(): string;
  /** Types keys (tmux key names: `o`, `Right`, `Enter`, `C-c`). */
  keys(...keys: string[]): void;
  /** Waits until the screen holds `text` (or `match` returns true); throws after `ms`. */
  waitFor(text: string | ((screen: string) => boolean), ms?: number): Promise<string>;
  /** Waits for the command's exit status. */
  exitCode(ms?: number): Promise<number>;
  /** The pid of the pane's shell (the command runs under it). */
  panePid(): number;
  /** Ends the tmux server and whatever still runs in it. */
  close(): void;
}

/** True when tmux can run here. */
export function hasTmux(): boolean {
  try {
    execFileSync("tmux", ["-V"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

/**
 * Runs `argv` in `cwd` in a new `cols`×`rows` terminal. The environment is
 * this process's, without `CI` (the CLI draws no live view under CI) and
 * with `env` added. Files for the run go into `dir`.
 */
export function startTerminal(
  argv: string[],
  opts: { cwd: string; dir: string; cols?: number; rows?: number; env?: Record<string, string> },
): Terminal {
  const n = ++sessions;
  const socket = `mountbox-test-${process.pid}-${n}`;
  const raw = join(opts.dir, `term-${n}.raw`);
  const exit = join(opts.dir, `term-${n}.exit`);
  const go = join(opts.dir, `term-${n}.go`);
  const script = join(opts.dir, `term-${n}.sh`);
  const quote = (s: string) => `'${s.replaceAll("'", "'\\''")}'`;
  const envs = Object.entries(opts.env ?? {}).map(([k, v]) => `${k}=${quote(v)}`);
  // The command waits until the recording is on, so no byte is missed; the
  // pane stays (sleeping) after it ends, so its last screen can be read.
  writeFileSync(
    script,
    [
      `while [ ! -e ${quote(go)} ]; do sleep 0.02; done`,
      `cd ${quote(opts.cwd)}`,
      `env -u CI ${envs.join(" ")} ${argv.map(quote).join(" ")}`,
      `echo $? > ${quote(exit)}`,
      "exec sleep 600",
      "",
    ].join("\n"),
  );
  const tmux = (...args: string[]) =>
    execFileSync("tmux", ["-L", socket, "-f", "/dev/null", ...args], { encoding: "utf8" });
  tmux(
    "new-session",
    "-d",
    "-s",
    "t",
    "-x",
    String(opts.cols ?? 120),
    "-y",
    String(opts.rows ?? 32),
    `sh ${quote(script)}`,
  );
  tmux("pipe-pane", "-t", "t", "-o", `cat >> ${quote(raw)}`);
  writeFileSync(go, "");
  const t: Terminal = {
    screen: () =>
      tmux("capture-pane", "-p", "-t", "t")
        .split("\n")
        .map((l) => l.trimEnd())
        .join("\n"),
    screenWithColors: () => tmux("capture-pane", "-p", "-e", "-t", "t"),
    output: () => (existsSync(raw) ? readFileSync(raw, "utf8") : ""),
    keys: (...keys) => {
      for (const k of keys) tmux("send-keys", "-t", "t", k);
    },
    async waitFor(text, ms = 20_000) {
      const match = typeof text === "string" ? (s: string) => s.includes(text) : text;
      const end = Date.now() + ms;
      for (;;) {
        const s = t.screen();
        if (match(s)) return s;
        if (Date.now() > end)
          throw new Error(`the screen never showed ${String(text)}; it shows:\n${s}`);
        await sleep(50);
      }
    },
    async exitCode(ms = 30_000) {
      const end = Date.now() + ms;
      while (!existsSync(exit) || readFileSync(exit, "utf8").trim() === "") {
        if (Date.now() > end) throw new Error(`no exit after ${ms} ms; the screen:\n${t.screen()}`);
        await sleep(50);
      }
      // pipe-pane copies asynchronously: let the last bytes land.
      await sleep(200);
      return Number(readFileSync(exit, "utf8").trim());
    },
    panePid: () => Number(tmux("display-message", "-p", "-t", "t", "#{pane_pid}").trim()),
    close: () => {
      try {
        tmux("kill-server");
      } catch {
        // already gone
      }
    },
  };
  return t;
}

/**
 * `describe` for tests that drive a real terminal. Without tmux the suite
 * is skipped with one visible line, except where bubblewrap is required
 * too (CI): there a missing tmux fails.
 */
export function describeWithTmux(name: string, body: () => void): void {
  if (hasTmux()) describe(name, body);
  else if (REQUIRE_BWRAP)
    describe(name, () => {
      test("tmux is installed", () => {
        throw new Error("tmux not found (CI requires it): apt-get install tmux");
      });
    });
  else {
    console.warn(`[skipped] ${name}: tmux not found; install it (apt-get install tmux)`);
    describe.skipIf(true)(name, body);
  }
}
