/**
 * What a model (or a user) is told about a confined command: the sandbox as
 * a shell tool's description, the notes added to a command's result, why OS
 * sandboxing is unavailable, and bubblewrap's own messages with host paths
 * replaced by their virtual places. Virtual paths only.
 */
import { formatPathList, OsSandboxUnavailableError } from "../errors/index.js";
import type { Policy } from "../sandbox/policy.js";
import { policyOf, type Sandbox } from "../sandbox/sandbox.js";
import { type BindPlan, toWorkspacePath, WORKSPACE } from "./bind-plan.js";
import type { Unavailability } from "./bwrap-binary.js";
import type { CheckedCommandOptions } from "./command-options.js";
import { describeLimitHits, type LimitHits } from "./limits.js";
import type { RawResult } from "./process.js";
import type { CommandResult } from "./run-command.js";
import {
  describeRefusedOnHost,
  describeSeatbeltSandbox,
  HOST_NETWORK_NOTE,
  HOST_WRITE_REFUSED,
} from "./seatbelt-notes.js";

/**
 * A text for a model (or a user) explaining where a sandbox's files are
 * inside a confined command, what may be written and whether the network is
 * on. Put it in a shell tool's description.
 */
export function describeCommandSandbox(sandbox: Sandbox, opts: { network?: boolean } = {}): string {
  const p = policyOf(sandbox);
  if (process.platform === "darwin") return describeSeatbeltSandbox(p, opts.network === true);
  const readable = p.readableRoots.map(toWorkspacePath);
  return [
    `Commands run with bash in an OS sandbox. The sandbox's files are under ${WORKSPACE}, the working directory: the sandbox path '/src/a.ts' is '${WORKSPACE}/src/a.ts' there.`,
    `Readable: ${formatPathList(readable)}.`,
    `Writable: ${describeWritable(p)}.`,
    "/tmp is private scratch space, discarded when the command ends. Nothing else is writable; paths outside these do not exist.",
    ...(p.secrets.entries.length === 0
      ? []
      : [
          `Secrets are withheld: files named like ${p.secrets.entries.join(", ")} (at any depth) cannot be opened, and such folders show empty; do not try to get around this.`,
        ]),
    `Network: ${opts.network === true ? "on" : "off"}. The environment is empty except PATH, HOME=/tmp, TMPDIR=/tmp and LANG.`,
  ].join("\n");
}

/** The writable places inside a command, with the read-only ones inside them. */
function describeWritable(p: Policy): string {
  const w = formatPathList(p.writableRoots.map(toWorkspacePath));
  const ro = p.readOnlyInside().map(toWorkspacePath);
  return ro.length > 0 ? `${w} (read-only inside: ${ro.join(", ")})` : w;
}

/** Why OS sandboxing is unavailable, and what to do, as a clause. */
export function describeUnavailability(why: Unavailability): string {
  const reasons: Record<Unavailability, string> = {
    missing: "bubblewrap (bwrap) was not found. Install it (e.g. `apt install bubblewrap`)",
    "too-old": "the installed bubblewrap is too old (0.6 or newer is needed)",
    untrusted:
      "the bubblewrap binary is not trusted (it must be an absolute path to a file owned by root or the current user, writable by no one else, in folders only they can change, and outside the sandbox's writable folders; set MOUNTBOX_BWRAP or bwrapPath to a system copy)",
    "no-namespaces":
      "bubblewrap cannot create the namespaces it needs here (user namespaces may be disabled, e.g. by kernel.unprivileged_userns_clone=0 or a container's seccomp policy)",
    "unsupported-platform": `there is no OS sandbox for this platform (${process.platform}, ${process.arch}); only Linux on x86_64 or arm64 with bubblewrap, and macOS with sandbox-exec, are supported`,
    "no-sandbox-exec":
      "macOS's sandbox-exec (/usr/bin/sandbox-exec) was not found, so no Seatbelt sandbox can be made",
  };
  return reasons[why];
}

/** The error `runCommand` throws when OS sandboxing is unavailable, saying why and what to do. */
export function makeUnavailableError(why: Unavailability): OsSandboxUnavailableError {
  return new OsSandboxUnavailableError(
    `Cannot run the command: OS sandboxing is unavailable: ${describeUnavailability(why)}. The command was not run. To run commands without OS confinement anyway, pass unsafeAllowUnconfined: true (not recommended).`,
  );
}

/** The note that opens the result of a command run without OS confinement. */
export function describeUnconfined(why: Unavailability): string {
  const what =
    why === "missing"
      ? "bubblewrap is missing"
      : why === "untrusted"
        ? "the bubblewrap binary is not trusted"
        : why === "no-sandbox-exec"
          ? "sandbox-exec is missing"
          : "OS sandboxing is unavailable";
  return `This command ran WITHOUT OS confinement (${what}; unsafeAllowUnconfined was set). File access was not restricted.`;
}

/** bubblewrap's own messages name host paths: show their virtual places instead. */
export function redactBwrapLines(stderr: string, plan: BindPlan): string {
  if (!stderr.includes("bwrap:")) return stderr;
  const binds = plan.steps
    .filter((s) => s.kind === "bind")
    .sort((a, b) => b.host.length - a.host.length);
  return stderr
    .split("\n")
    .map((line) => {
      if (!line.startsWith("bwrap:")) return line;
      let out = line;
      for (const s of binds) out = out.split(s.host).join(toWorkspacePath(s.virtual));
      return out;
    })
    .join("\n");
}

const WRITE_REFUSED = /Read-only file system|Permission denied|No such file or directory/;
const NETWORK_FAILED =
  /Could not resolve host|Temporary failure in name resolution|Name or service not known|Network is unreachable|Connection refused|getaddrinfo|ENOTFOUND|EAI_AGAIN|ENETUNREACH|ECONNREFUSED|Failed to connect|No address associated/i;

/**
 * The result of a command that ran, with notes for a model: which limit it
 * hit, the timeout or cancellation, cut output, and (confined) why a path
 * was refused or the network failed.
 */
export function buildCommandResult(
  raw: RawResult,
  policy: Policy,
  opts: CheckedCommandOptions,
  confined: boolean,
  hits?: LimitHits,
  layout: "workspace" | "host" = "workspace",
): CommandResult {
  const notes: string[] = [];
  if (confined && hits !== undefined)
    notes.push(...describeLimitHits(opts.limits, raw.exitCode, raw.stderr, hits));
  if (raw.timedOut)
    notes.push(
      `The command was stopped after ${opts.timeoutMs} ms (timeout); every process it started was killed.`,
    );
  if (raw.aborted) notes.push("The command was cancelled; every process it started was killed.");
  if (raw.truncated)
    notes.push(
      `Output was cut at ${opts.maxOutputBytes} bytes per stream. Redirect it to a file under ${layout === "host" ? "$TMPDIR" : "/tmp"} and read parts of it (head, tail, grep).`,
    );
  if (confined && layout === "host") {
    // macOS (Seatbelt): no /workspace, and refusals say EPERM.
    if (HOST_WRITE_REFUSED.test(raw.stderr)) notes.push(describeRefusedOnHost(policy));
    if (!opts.network && NETWORK_FAILED.test(raw.stderr)) notes.push(HOST_NETWORK_NOTE);
  } else if (confined && WRITE_REFUSED.test(raw.stderr)) {
    notes.push(
      `A path was refused or not found by the OS sandbox. The sandbox's files are under ${WORKSPACE} (the sandbox path '/x' is '${WORKSPACE}/x'). Writable: ${describeWritable(policy)}; /tmp is private scratch space. Everything else is read-only or absent.`,
    );
  }
  if (confined && layout === "workspace" && !opts.network && NETWORK_FAILED.test(raw.stderr)) {
    notes.push(
      "Network access is off for this command (it runs in an empty network namespace, the host's 127.0.0.1 included). Ask for network access if it is needed.",
    );
  }
  return {
    exitCode: raw.exitCode,
    stdout: raw.stdout,
    stderr: raw.stderr,
    timedOut: raw.timedOut,
    truncated: raw.truncated,
    notes,
    confined,
  };
}
