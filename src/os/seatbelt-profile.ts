/**
 * The Seatbelt (SBPL) profile of one command on macOS: the counterpart of
 * the bubblewrap sandbox (DESIGN §8), as text for `sandbox-exec -p`.
 *
 * Deny by default; then, each later rule winning over earlier ones: the
 * process rules, the system folders read-only, the sandbox's areas (see
 * `seatbelt-areas.ts`), a private scratch folder, the folders above the
 * areas (attributes only), protected entries write-denied with their
 * ancestors held in place, secrets denied, no hard links, and the network
 * per flag. Pure: the same policy and options give the same text, so the
 * tests read it (it is not executed on this project's machines, which run
 * Linux).
 */
import type { Policy } from "../sandbox/policy.js";
import { isWithin } from "../sandbox/virtual-path.js";
import { listOutermost, planSeatbeltAreas } from "./seatbelt-areas.js";
import { compileSecretNames, listSecretRules } from "./seatbelt-secrets.js";
import {
  escapeRegexText,
  foldedLiteral,
  foldedSubpath,
  foldPathRegex,
  literal,
  quoteSbpl,
  subpath,
} from "./seatbelt-text.js";

/** Options of {@link buildSeatbeltProfile}. */
export interface SeatbeltOptions {
  /** Real path of the command's private scratch folder (its HOME and TMPDIR). */
  tempDir: string;
  /** Allow the network. Default false. */
  network?: boolean;
  /** Allow unix sockets (create, bind, connect to any path). Default false. */
  allowUnixSockets?: boolean;
  /**
   * Name globs (`.env`, `*.pem`, `.aws/`) matched at any depth of every
   * readable area: never read, written, renamed or run. Default none.
   */
  secrets?: readonly string[];
  /**
   * More host paths a command must not write, nor rename the folders
   * above (what the host's git runs from, as the bind plan finds it).
   */
  guards?: readonly string[];
}

/** Read-only system places (subtrees): a shell, common tools, their libraries. */
export const SYSTEM_SUBPATHS = [
  "/usr",
  "/bin",
  "/sbin",
  "/System",
  "/Library",
  // Homebrew's prefix on Apple silicon (on Intel it is /usr/local).
  "/opt/homebrew",
  // Where /bin/sh finds the shell it runs.
  "/private/var/select",
  "/private/var/db/timezone",
  "/private/var/db/dyld",
  "/private/etc/ssl",
  // The developer tools that /usr/bin/git and friends start.
  "/Applications/Xcode.app/Contents/Developer",
];

/**
 * Single read-only system files: the few `/etc` entries (as on Linux: not
 * all of `/etc`) that name resolution, users and time zones need.
 */
export const SYSTEM_LITERALS = [
  "/private/etc/passwd",
  "/private/etc/group",
  "/private/etc/hosts",
  "/private/etc/services",
  "/private/etc/protocols",
  "/private/etc/shells",
  "/private/etc/localtime",
  "/private/var/run/resolv.conf",
  "/private/var/db/xcode_select_link",
];

/** Inside the system places, never readable: keys, and services' data. */
export const SYSTEM_DENIED = ["/Library/Keychains", "/usr/local/var", "/opt/homebrew/var"];

/** Mach services a shell's tools look up (users and groups, notifications, logging, temp folders). */
const MACH_SERVICES = [
  "com.apple.system.opendirectoryd.libinfo",
  "com.apple.system.opendirectoryd.membership",
  "com.apple.system.notification_center",
  "com.apple.system.logger",
  "com.apple.logd",
  "com.apple.bsd.dirhelper",
];

/** With the network: certificate checks for TLS. */
const NETWORK_MACH_SERVICES = ["com.apple.trustd.agent", "com.apple.SecurityServer"];

const DEVICES = ["/dev/null", "/dev/zero", "/dev/random", "/dev/urandom"];

const READ = "file-read* process-exec";
const WRITE = "file-write*";

/**
 * The profile text for `policy` (see the module comment).
 * @throws OsSandboxUnavailableError if a host path holds NUL or a line break
 * @throws TypeError for a secret pattern a profile cannot hold (see `seatbelt-glob.ts`)
 */
export function buildSeatbeltProfile(policy: Policy, opts: SeatbeltOptions): string {
  const secrets = compileSecretNames(opts.secrets ?? []);
  const areas = planSeatbeltAreas(policy);
  const out = ["(version 1)", "(deny default)"];
  out.push(";; Processes: fork, and see or signal only this sandbox's own.");
  out.push("(allow process-fork)", "(allow process-info* (target same-sandbox))");
  out.push("(allow signal (target same-sandbox))", "(allow sysctl-read)");
  for (const name of MACH_SERVICES)
    out.push(`(allow mach-lookup (global-name ${quoteSbpl(name)}))`);
  out.push("(allow ipc-posix-shm)", "(allow ipc-posix-sem)");
  out.push(";; System folders, read-only.");
  for (const p of SYSTEM_SUBPATHS) out.push(`(allow ${READ} ${subpath(p)})`);
  for (const p of SYSTEM_LITERALS) out.push(`(allow file-read* ${literal(p)})`);
  for (const p of SYSTEM_DENIED) out.push(`(deny ${READ} ${foldedSubpath(p)})`);
  out.push(";; Devices.");
  for (const p of DEVICES) out.push(`(allow file-read* file-ioctl ${literal(p)})`);
  out.push(
    `(allow file-write-data ${literal("/dev/null")})`,
    `(allow file-write-data ${literal("/dev/zero")})`,
  );
  out.push(`(allow file-read* file-write-data ${subpath("/dev/fd")})`);

  out.push(";; The sandbox's areas, at their real host paths (later rules win).");
  for (const rule of areas.rules) {
    const at = rule.scope === "subpath" ? subpath(rule.host) : literal(rule.host);
    const denied = rule.scope === "subpath" ? foldedSubpath(rule.host) : foldedLiteral(rule.host);
    if (rule.read !== undefined)
      out.push(rule.read ? `(allow ${READ} ${at})` : `(deny ${READ} ${denied})`);
    if (rule.write !== undefined)
      out.push(rule.write ? `(allow ${WRITE} ${at})` : `(deny ${WRITE} ${denied})`);
  }
  out.push(";; Private scratch folder (HOME and TMPDIR), removed after the command.");
  out.push(`(allow ${READ} ${WRITE} ${subpath(opts.tempDir)})`);
  out.push(";; The folders above: their attributes only (pwd, realpath).");
  for (const p of listAncestors([...areas.readable, opts.tempDir]))
    out.push(`(allow file-read-metadata ${literal(p)})`);

  out.push(...buildProtectedRules(policy, areas.writable, opts.guards ?? []));
  out.push(...listSecretRules(policy, areas.readable, secrets));
  out.push(";; No hard links (a second, writable name for a read-only file) and no clones.");
  out.push("(deny file-link)", "(deny file-clone)");
  out.push(...buildNetworkRules(opts.network === true, opts.allowUnixSockets === true));
  return `${out.join("\n")}\n`;
}

/**
 * Protected entries inside writable places: never written (a name at any
 * depth, an absolute path, a guard of the bind plan), and the folders
 * above each, up to the top of the writable place, never renamed or
 * removed (which would carry the entry away, as the Linux sandbox's
 * pillars prevent).
 */
function buildProtectedRules(
  policy: Policy,
  writable: readonly string[],
  extra: readonly string[],
): string[] {
  const inWritable = (p: string): boolean => writable.some((w) => isWithin(p, w));
  const tops = listOutermost(writable);
  const names = listProtectedNames(policy);
  const guards = new Set<string>();
  for (const p of policy.table.protectedEntries) {
    if (!p.startsWith("/") || p === "/") continue;
    const m = policy.table.lookup(p);
    if (m !== undefined) guards.add(policy.table.toHost(m, p));
  }
  for (const g of extra) guards.add(g);
  const held = [...guards].filter(inWritable).sort();
  const above = new Set<string>();
  for (const g of [...held, ...tops.flatMap((w) => names.map((n) => joinHost(w, n)))])
    for (let a = parentOf(g); a !== undefined && inWritable(a); a = parentOf(a)) above.add(a);
  if (tops.length === 0) return [];
  const out = [
    ";; Protected entries: never written; the folders above them never renamed or removed.",
  ];
  if (names.length > 0) {
    const alternatives = [...new Set(names.map((n) => escapeRegexText(n, true)))];
    const name = alternatives.length === 1 ? alternatives[0]! : `(${alternatives.join("|")})`;
    for (const w of tops)
      out.push(`(deny ${WRITE} (regex ${quoteSbpl(`^${foldPathRegex(w)}(/.*)?/${name}(/|$)`)}))`);
  }
  for (const g of held) out.push(`(deny ${WRITE} ${foldedSubpath(g)})`);
  for (const a of [...above].sort()) out.push(`(deny file-write-unlink ${foldedLiteral(a)})`);
  return out;
}

/**
 * Protected names as the host's tools read them: as given, lower-cased
 * (matched regardless of ASCII case anyway), in NFC and NFD.
 */
function listProtectedNames(policy: Policy): string[] {
  const names = new Set<string>();
  for (const p of policy.table.protectedEntries) {
    if (p.startsWith("/") || p === "." || p === ".." || p.includes("/")) continue;
    for (const n of [p, p.toLowerCase()]) {
      names.add(n.normalize("NFC"));
      names.add(n.normalize("NFD"));
    }
  }
  return [...names].sort();
}

/** Network rules: everything or nothing, and unix sockets per flag. */
function buildNetworkRules(network: boolean, unixSockets: boolean): string[] {
  const sockets = [
    "(allow system-socket (socket-domain AF_UNIX))",
    "(allow network-bind (local unix-socket))",
    "(allow network-outbound (remote unix-socket))",
  ];
  if (!network)
    return unixSockets
      ? [";; Network: off; unix sockets allowed.", ...sockets]
      : [";; Network: off, unix sockets included."];
  const out = [";; Network: on.", "(allow network*)"];
  for (const name of NETWORK_MACH_SERVICES)
    out.push(`(allow mach-lookup (global-name ${quoteSbpl(name)}))`);
  if (unixSockets) return [...out, ...sockets];
  // Name resolution is a unix socket to mDNSResponder on macOS; no other.
  return [
    ...out,
    "(allow system-socket (socket-domain AF_UNIX))",
    "(deny network-bind (local unix-socket))",
    "(deny network-outbound (remote unix-socket))",
    `(allow network-outbound (remote unix-socket (path-literal ${quoteSbpl("/private/var/run/mDNSResponder")})))`,
  ];
}

/** Every folder strictly above the given paths, sorted, `/` included. */
function listAncestors(paths: readonly string[]): string[] {
  const out = new Set<string>();
  for (const p of paths) for (let a = parentOf(p); a !== undefined; a = parentOf(a)) out.add(a);
  return [...out].sort();
}

function parentOf(p: string): string | undefined {
  if (p === "/") return undefined;
  const i = p.lastIndexOf("/");
  return i <= 0 ? "/" : p.slice(0, i);
}

function joinHost(dir: string, name: string): string {
  return dir === "/" ? `/${name}` : `${dir}/${name}`;
}
