#!/usr/bin/env node
/**
 * The `mountbox` command line. First command: `exec`, which runs a command
 * confined (by bubblewrap) to a sandbox given on the command line.
 *
 * Errors print their message only — never a stack, never a host path.
 */
import { readFileSync, realpathSync } from "node:fs";
import { constants as osConstants } from "node:os";
import { isatty } from "node:tty";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { escapeControl, SandboxError } from "../errors/index.js";
import { runMcp } from "../mcp/mcp-command.js";
import { runCommand } from "../os/run-command.js";
import { runCheck } from "./check-command.js";
import { type CliIo, UsageError } from "./cli-io.js";
import { runInit } from "./init-command.js";
import { runRun } from "./run-command.js";
import { SANDBOX_HELP, SANDBOX_OPTIONS, sandboxFromFlags } from "./sandbox-flags.js";

/** The installed package's version (from its package.json). */
function readVersion(): string {
  const file = new URL("../../../package.json", import.meta.url);
  return (JSON.parse(readFileSync(file, "utf8")) as { version: string }).version;
}

/** The commands, as the usage errors list them. */
const COMMANDS: readonly string[] = ["check", "exec", "init", "mcp", "run"];

/** Exit status for bad usage (as most Unix tools). */
export const EXIT_USAGE = 2;
/** Exit status when mountbox itself failed and the command did not run (as `docker run`). */
export const EXIT_FAILED = 125;
/** Exit status when the timeout stopped the command (as `timeout(1)`). */
export const EXIT_TIMEOUT = 124;

const MAIN_HELP = `Usage: mountbox <command> [options]

Commands:
  check   Validate a program folder and print each worker's effective permissions
  exec    Run a shell command confined to a sandbox (Linux, bubblewrap)
  init    Create a program folder: program.yaml, a code worker, an LLM worker, sample files
  mcp     Serve a sandbox's files to an MCP client over stdio (virtual paths)
  run     Run a program folder's worker, its agents each in their own thread or process

Run 'mountbox <command> --help' for a command's options;
'mountbox --version' prints the version.
`;

const EXEC_HELP = `Usage: mountbox exec --root DIR [options] [--] <command...>

Runs <command...> with bash inside an OS sandbox (bubblewrap). The sandbox's
virtual '/' (DIR) appears at /workspace, the working directory; a mount with
target /cache appears at /workspace/cache. System folders are read-only, /tmp
is private, and nothing else of the host is visible. Options end at the first
word that is not one (or at '--'). The command's output is passed through
byte for byte, and its exit code too.

Options:
${SANDBOX_HELP}
  --network                    Keep network access (default: none, not even loopback)
  --allow-unix-sockets         Let the command make unix sockets (default: only
                               socketpair; a socket could reach any host server
                               whose socket file is visible, as the host user)
  --env NAME=VALUE             Set an environment variable (repeatable); nothing
                               else is inherited except PATH, HOME=/tmp, TMPDIR, LANG
  --timeout SECONDS            Kill the command and all it started after this long
                               (default 600)
  --memory MB                  Memory per process (default 2048)
  --processes N                Processes and threads at once (default 256)
  --tmp MB                     Size of /tmp and of /dev/shm (default 512 each)
  --cpu SECONDS                CPU time per process (default 600)
  --ptys N                     Pseudo-terminals at once (default 16)
  --open-files N               Open files per process (default 1024)
  --unsafe-allow-unconfined    DANGEROUS: if bubblewrap is unavailable, run the
                               command anyway with no file-system confinement
  --allow-hard-linked-host-code
                               DANGEROUS: run even though mountbox's own files are
                               hard-linked to unknown places (a shared pnpm store)
                               on a file system a writable folder reaches
  -h, --help                   Show this help

Exit status: the command's own; ${EXIT_TIMEOUT} on timeout; ${EXIT_USAGE} on bad usage;
${EXIT_FAILED} if the command could not be run (e.g. bubblewrap is unavailable).
Environment: MOUNTBOX_BWRAP names the bubblewrap binary (default: the first of
/usr/bin/bwrap, /bin/bwrap, /usr/sbin/bwrap, /usr/local/bin/bwrap; never PATH).
`;

export type { CliIo } from "./cli-io.js";

const processIo: CliIo = {
  stdout: (t) => process.stdout.write(t),
  stderr: (t) => process.stderr.write(t),
  // A getter: process.stdin is made only when a command draws on the terminal.
  get terminal() {
    return isatty(0) && isatty(1) ? { stdin: process.stdin, stdout: process.stdout } : undefined;
  },
};

/**
 * Runs the CLI with `argv` (without `node` and the script) and returns the
 * exit status. Never throws.
 */
export async function runCli(argv: readonly string[], io: CliIo = processIo): Promise<number> {
  const [command, ...rest] = argv;
  try {
    if (command === undefined || command === "-h" || command === "--help") {
      (command === undefined ? io.stderr : io.stdout)(MAIN_HELP);
      return command === undefined ? EXIT_USAGE : 0;
    }
    if (command === "-v" || command === "--version") {
      io.stdout(`${readVersion()}\n`);
      return 0;
    }
    if (command === "exec") return await runExec(rest, io);
    if (command === "check") return await runCheck(rest, io);
    if (command === "init") return await runInit(rest, io);
    if (command === "run") return await runRun(rest, io);
    if (command === "mcp") return await runMcp(rest, io, readVersion());
    throw new UsageError(
      `unknown command '${command.slice(0, 40)}'. Commands: ${COMMANDS.join(", ")}.`,
    );
  } catch (err) {
    if (err instanceof UsageError) {
      io.stderr(
        `mountbox: ${err.message}\nRun 'mountbox ${command !== undefined && COMMANDS.includes(command) ? `${command} ` : ""}--help' for usage.\n`,
      );
      return EXIT_USAGE;
    }
    if (err instanceof SandboxError) {
      // Escaped line by line: a config error quotes the file it comes from.
      io.stderr(`mountbox: ${err.message.split("\n").map(escapeControl).join("\n")}\n`);
      return err.code === "invalid_config" ? EXIT_USAGE : EXIT_FAILED;
    }
    // Anything else may carry host paths in its message: name it only.
    const name = err instanceof Error ? err.name : "error";
    io.stderr(`mountbox: unexpected ${name}; the command was not run.\n`);
    return EXIT_FAILED;
  }
}

async function runExec(argv: readonly string[], io: CliIo): Promise<number> {
  let parsed: ReturnType<typeof parseExecArgs>;
  try {
    parsed = parseExecArgs(argv);
  } catch (err) {
    if (err instanceof UsageError) throw err;
    // parseArgs' own messages are about the arguments, never about files.
    throw new UsageError(err instanceof Error ? err.message : "bad arguments");
  }
  const { values, positionals } = parsed;
  if (values.help) {
    io.stdout(EXEC_HELP);
    return 0;
  }
  if (values.root === undefined || values.root === "")
    throw new UsageError("--root DIR is required");
  if (positionals.length === 0) throw new UsageError("no command given (put it after --)");
  const env: Record<string, string> = {};
  for (const e of values.env ?? []) {
    const eq = e.indexOf("=");
    if (eq <= 0) throw new UsageError(`--env expects NAME=VALUE, got '${e.slice(0, 40)}'`);
    env[e.slice(0, eq)] = e.slice(eq + 1);
  }
  let timeoutMs = 600_000;
  if (values.timeout !== undefined) {
    const s = Number(values.timeout);
    if (!Number.isFinite(s) || s <= 0 || s > 2_000_000)
      throw new UsageError("--timeout expects a positive number of seconds");
    timeoutMs = Math.max(1, Math.round(s * 1000));
  }
  const limits = {
    memoryMb: positiveInt(values.memory, "--memory"),
    processes: positiveInt(values.processes, "--processes"),
    tmpMb: positiveInt(values.tmp, "--tmp"),
    cpuSeconds: positiveInt(values.cpu, "--cpu"),
    ptys: positiveInt(values.ptys, "--ptys"),
    openFiles: positiveInt(values["open-files"], "--open-files"),
  };
  const sandbox = sandboxFromFlags(values);
  // One argument is passed to bash as is; several are joined with spaces, as
  // `ssh` and `docker exec sh -c` users expect.
  const command = positionals.join(" ");
  let result: Awaited<ReturnType<typeof runCommand>>;
  // Interrupted (Ctrl-C, the terminal closing, `kill`): stop the command
  // and let mountbox clean up (cgroups, `.git` placeholders) before exiting
  // with 128 + the signal's number, as a shell does.
  const stop = new AbortController();
  let stoppedBy: NodeJS.Signals | undefined;
  const onSignal = (sig: NodeJS.Signals): void => {
    stoppedBy ??= sig;
    stop.abort();
  };
  const signals: NodeJS.Signals[] = io === processIo ? ["SIGINT", "SIGTERM", "SIGHUP"] : [];
  for (const sig of signals) process.on(sig, onSignal);
  try {
    result = await runCommand(sandbox, command, {
      signal: io === processIo ? stop.signal : undefined,
      timeoutMs,
      network: values.network ?? false,
      allowUnixSockets: values["allow-unix-sockets"] ?? false,
      env,
      maxOutputBytes: 256 * 1024 * 1024,
      unsafeAllowUnconfined: values["unsafe-allow-unconfined"] ?? false,
      allowHardLinkedHostCode: values["allow-hard-linked-host-code"] ?? false,
      limits,
      // Writing to this process's own stdout and stderr: the command's
      // bytes and the order of its two streams arrive exactly.
      passThrough: io === processIo,
    });
  } catch (err) {
    // Stopped while the command was being set up (or torn down): the signal
    // is the outcome, whatever the setup threw on the way out (a race a
    // loaded CI machine hit: exit 125 instead of 143).
    if (stoppedBy !== undefined) return 128 + (osConstants.signals[stoppedBy] ?? 15);
    if (err instanceof TypeError) throw new UsageError(err.message.replace(/^runCommand: /, ""));
    throw err;
  } finally {
    for (const sig of signals) process.off(sig, onSignal);
  }
  if (stoppedBy !== undefined) return 128 + (osConstants.signals[stoppedBy] ?? 15);
  io.stdout(result.stdout);
  io.stderr(result.stderr);
  for (const note of result.notes) io.stderr(`mountbox: ${note}\n`);
  return result.timedOut ? EXIT_TIMEOUT : result.exitCode;
}

/** Options of `exec` that take a value (the word after them is not the command). */
const VALUE_OPTIONS = new Set([
  "--root",
  "--mount",
  "--env",
  "--timeout",
  "--memory",
  "--processes",
  "--tmp",
  "--cpu",
  "--ptys",
  "--open-files",
]);

/**
 * Parses `exec`'s options up to the first word that is not an option (or
 * `--`); everything from there on is the command, even words starting with
 * '-' (as `env`, `ssh` and `docker run` do).
 */
function parseExecArgs(argv: readonly string[]) {
  let end = 0;
  let rest: string[] = [];
  while (end < argv.length) {
    const a = argv[end]!;
    if (a === "--") {
      rest = argv.slice(end + 1);
      break;
    }
    if (!a.startsWith("-") || a === "-") {
      rest = argv.slice(end);
      break;
    }
    end += VALUE_OPTIONS.has(a) ? 2 : 1;
  }
  const parsed = parseArgs({
    args: argv.slice(0, end),
    allowPositionals: false,
    strict: true,
    options: {
      ...SANDBOX_OPTIONS,
      network: { type: "boolean" },
      env: { type: "string", multiple: true },
      timeout: { type: "string" },
      memory: { type: "string" },
      processes: { type: "string" },
      tmp: { type: "string" },
      cpu: { type: "string" },
      ptys: { type: "string" },
      "open-files": { type: "string" },
      "allow-unix-sockets": { type: "boolean" },
      "unsafe-allow-unconfined": { type: "boolean" },
      "allow-hard-linked-host-code": { type: "boolean" },
      help: { type: "boolean", short: "h" },
    },
  });
  return { values: parsed.values, positionals: rest };
}

function positiveInt(value: string | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(n) || n <= 0)
    throw new UsageError(`${name} expects a positive whole number`);
  return n;
}

/** True when this file is the process's entry point (not imported). */
function isEntryPoint(): boolean {
  const entry = process.argv[1];
  if (entry === undefined) return false;
  try {
    return realpathSync(entry) === realpathSync(fileURLToPath(import.meta.url));
  } catch {
    return false;
  }
}

if (isEntryPoint()) {
  const code = await runCli(process.argv.slice(2));
  process.exitCode = code;
}
