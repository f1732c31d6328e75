/**
 * macOS Seatbelt profiles, tested by their text (this project's machines
 * run Linux: `sandbox-exec` is never executed here). Inline snapshots show
 * what a sandbox becomes; a reader of the profile (test/helpers/sbpl.ts)
 * decides accesses as Seatbelt would (last matching rule wins) and is held
 * against the in-process policy on random layouts; the glob → regex
 * conversion of secrets is held against the sandbox's own glob matcher.
 */
import { mkdirSync, mkdtempSync, realpathSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, afterEach, beforeEach, describe, expect, test } from "vitest";
import { createSandbox, OsSandboxUnavailableError, type Sandbox } from "../src/index.js";
import { buildCommandResult, makeUnavailableError } from "../src/os/command-notes.js";
import { checkCommandOptions } from "../src/os/command-options.js";
import { checkSecretPattern, convertNameGlob } from "../src/os/seatbelt-glob.js";
import { describeRefusedOnHost, describeSeatbeltSandbox } from "../src/os/seatbelt-notes.js";
import { buildSeatbeltProfile, type SeatbeltOptions } from "../src/os/seatbelt-profile.js";
import { checkSeatbelt, runSeatbelt } from "../src/os/seatbelt-run.js";
import { foldPathRegex } from "../src/os/seatbelt-text.js";
import { compileGlob } from "../src/sandbox/glob.js";
import { policyOf } from "../src/sandbox/sandbox.js";
import { DEFAULT_SECRETS } from "../src/sandbox/secrets.js";
import { isWithin } from "../src/sandbox/virtual-path.js";
import { decide, listStrings, parseProfile } from "./helpers/sbpl.js";

const TEMP = "/private/var/folders/zz/T/mountbox-AbC123";
let dir: string;

beforeEach(() => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), "mountbox-sb-")));
  for (const d of ["root/src/lib", "root/.git/hooks", "root/vendor", "root/cache", "cache", "out"])
    mkdirSync(join(dir, d), { recursive: true });
  writeFileSync(join(dir, "root/src/a.ts"), "a");
});

afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

function profileOf(sb: Sandbox, opts: Partial<SeatbeltOptions> = {}): string {
  const text = buildSeatbeltProfile(policyOf(sb), { tempDir: TEMP, ...opts });
  return text.replaceAll(foldPathRegex(dir), "<TMP>").replaceAll(dir, "<tmp>");
}

/** The lines from the first starting with `from` up to (not including) the first starting with `to`. */
function section(text: string, from: string, to = ";; No hard links"): string {
  const lines = text.split("\n");
  const start = lines.findIndex((l) => l.startsWith(from));
  const end = lines.findIndex((l, i) => i > start && l.startsWith(to));
  return lines.slice(start, end < 0 ? undefined : end).join("\n");
}

const AREAS = ";; The sandbox's areas";

describe("buildSeatbeltProfile", () => {
  test("root only: the whole profile", () => {
    const sb = createSandbox({ root: join(dir, "root") });
    expect(profileOf(sb)).toMatchInlineSnapshot(`
      "(version 1)
      (deny default)
      ;; Processes: fork, and see or signal only this sandbox's own.
      (allow process-fork)
      (allow process-info* (target same-sandbox))
      (allow signal (target same-sandbox))
      (allow sysctl-read)
      (allow mach-lookup (global-name "com.apple.system.opendirectoryd.libinfo"))
      (allow mach-lookup (global-name "com.apple.system.opendirectoryd.membership"))
      (allow mach-lookup (global-name "com.apple.system.notification_center"))
      (allow mach-lookup (global-name "com.apple.system.logger"))
      (allow mach-lookup (global-name "com.apple.logd"))
      (allow mach-lookup (global-name "com.apple.bsd.dirhelper"))
      (allow ipc-posix-shm)
      (allow ipc-posix-sem)
      ;; System folders, read-only.
      (allow file-read* process-exec (subpath "/usr"))
      (allow file-read* process-exec (subpath "/bin"))
      (allow file-read* process-exec (subpath "/sbin"))
      (allow file-read* process-exec (subpath "/System"))
      (allow file-read* process-exec (subpath "/Library"))
      (allow file-read* process-exec (subpath "/opt/homebrew"))
      (allow file-read* process-exec (subpath "/private/var/select"))
      (allow file-read* process-exec (subpath "/private/var/db/timezone"))
      (allow file-read* process-exec (subpath "/private/var/db/dyld"))
      (allow file-read* process-exec (subpath "/private/etc/ssl"))
      (allow file-read* process-exec (subpath "/Applications/Xcode.app/Contents/Developer"))
      (allow file-read* (literal "/private/etc/passwd"))
      (allow file-read* (literal "/private/etc/group"))
      (allow file-read* (literal "/private/etc/hosts"))
      (allow file-read* (literal "/private/etc/services"))
      (allow file-read* (literal "/private/etc/protocols"))
      (allow file-read* (literal "/private/etc/shells"))
      (allow file-read* (literal "/private/etc/localtime"))
      (allow file-read* (literal "/private/var/run/resolv.conf"))
      (allow file-read* (literal "/private/var/db/xcode_select_link"))
      (deny file-read* process-exec (regex "^/[lL][iI][bB][rR][aA][rR][yY]/[kK][eE][yY][cC][hH][aA][iI][nN][sS](/|$)"))
      (deny file-read* process-exec (regex "^/[uU][sS][rR]/[lL][oO][cC][aA][lL]/[vV][aA][rR](/|$)"))
      (deny file-read* process-exec (regex "^/[oO][pP][tT]/[hH][oO][mM][eE][bB][rR][eE][wW]/[vV][aA][rR](/|$)"))
      ;; Devices.
      (allow file-read* file-ioctl (literal "/dev/null"))
      (allow file-read* file-ioctl (literal "/dev/zero"))
      (allow file-read* file-ioctl (literal "/dev/random"))
      (allow file-read* file-ioctl (literal "/dev/urandom"))
      (allow file-write-data (literal "/dev/null"))
      (allow file-write-data (literal "/dev/zero"))
      (allow file-read* file-write-data (subpath "/dev/fd"))
      ;; The sandbox's areas, at their real host paths (later rules win).
      (allow file-read* process-exec (subpath "<tmp>/root"))
      (allow file-write* (subpath "<tmp>/root"))
      ;; Private scratch folder (HOME and TMPDIR), removed after the command.
      (allow file-read* process-exec file-write* (subpath "/private/var/folders/zz/T/mountbox-AbC123"))
      ;; The folders above: their attributes only (pwd, realpath).
      (allow file-read-metadata (literal "/"))
      (allow file-read-metadata (literal "/private"))
      (allow file-read-metadata (literal "/private/var"))
      (allow file-read-metadata (literal "/private/var/folders"))
      (allow file-read-metadata (literal "/private/var/folders/zz"))
      (allow file-read-metadata (literal "/private/var/folders/zz/T"))
      (allow file-read-metadata (literal "/tmp"))
      (allow file-read-metadata (literal "<tmp>"))
      ;; Protected entries: never written; the folders above them never renamed or removed.
      (deny file-write* (regex "^<TMP>/[rR][oO][oO][tT](/.*)?/(\\\\.[bB][aA][sS][hH]_[lL][oO][gG][iI][nN]|\\\\.[bB][aA][sS][hH]_[lL][oO][gG][oO][uU][tT]|\\\\.[bB][aA][sS][hH]_[pP][rR][oO][fF][iI][lL][eE]|\\\\.[bB][aA][sS][hH][rR][cC]|\\\\.[cC][lL][aA][uU][dD][eE]|\\\\.[eE][nN][vV][rR][cC]|\\\\.[gG][iI][tT]|\\\\.[gG][iI][tT][cC][oO][nN][fF][iI][gG]|\\\\.[gG][iI][tT][mM][oO][dD][uU][lL][eE][sS]|\\\\.[hH][uU][sS][kK][yY]|\\\\.[iI][dD][eE][aA]|\\\\.[mM][cC][pP]\\\\.[jJ][sS][oO][nN]|\\\\.[nN][pP][mM][rR][cC]|\\\\.[pP][nN][pP][mM][fF][iI][lL][eE]\\\\.[cC][jJ][sS]|\\\\.[pP][rR][oO][fF][iI][lL][eE]|\\\\.[vV][sS][cC][oO][dD][eE]|\\\\.[yY][aA][rR][nN][rR][cC]|\\\\.[yY][aA][rR][nN][rR][cC]\\\\.[yY][mM][lL]|\\\\.[zZ][lL][oO][gG][iI][nN]|\\\\.[zZ][lL][oO][gG][oO][uU][tT]|\\\\.[zZ][pP][rR][oO][fF][iI][lL][eE]|\\\\.[zZ][sS][hH][eE][nN][vV]|\\\\.[zZ][sS][hH][rR][cC])(/|$)"))
      (deny file-write-unlink (regex "^<TMP>/[rR][oO][oO][tT]$"))
      ;; No hard links (a second, writable name for a read-only file) and no clones.
      (deny file-link)
      (deny file-clone)
      ;; Network: off, unix sockets included.
      "
    `);
  });

  test("root with read-only and writable mounts: shadowed folders denied, read-only ones write-denied", () => {
    const sb = createSandbox({
      root: join(dir, "root"),
      mounts: [
        { source: join(dir, "cache"), target: "/cache", readonly: true },
        { source: join(dir, "out"), target: "/out" },
        // A second place: the root's own folder, mounted read-only.
        { source: join(dir, "root/vendor"), target: "/vendor", readonly: true },
      ],
    });
    expect(section(profileOf(sb), AREAS, ";; Private")).toMatchInlineSnapshot(`
      ";; The sandbox's areas, at their real host paths (later rules win).
      (allow file-read* process-exec (subpath "<tmp>/cache"))
      (allow file-read* process-exec (subpath "<tmp>/out"))
      (allow file-write* (subpath "<tmp>/out"))
      (allow file-read* process-exec (subpath "<tmp>/root"))
      (allow file-write* (subpath "<tmp>/root"))
      (deny file-read* process-exec (regex "^<TMP>/[rR][oO][oO][tT]/[cC][aA][cC][hH][eE](/|$)"))
      (deny file-write* (regex "^<TMP>/[rR][oO][oO][tT]/[cC][aA][cC][hH][eE](/|$)"))
      (deny file-read* process-exec (regex "^<TMP>/[rR][oO][oO][tT]/[oO][uU][tT](/|$)"))
      (deny file-write* (regex "^<TMP>/[rR][oO][oO][tT]/[oO][uU][tT](/|$)"))
      (deny file-write* (regex "^<TMP>/[rR][oO][oO][tT]/[vV][eE][nN][dD][oO][rR](/|$)"))"
    `);
    // `/out` is writable: its own `.git` and its top are held too.
    expect(section(profileOf(sb), ";; Protected")).toMatchInlineSnapshot(`
      ";; Protected entries: never written; the folders above them never renamed or removed.
      (deny file-write* (regex "^<TMP>/[oO][uU][tT](/.*)?/(\\\\.[bB][aA][sS][hH]_[lL][oO][gG][iI][nN]|\\\\.[bB][aA][sS][hH]_[lL][oO][gG][oO][uU][tT]|\\\\.[bB][aA][sS][hH]_[pP][rR][oO][fF][iI][lL][eE]|\\\\.[bB][aA][sS][hH][rR][cC]|\\\\.[cC][lL][aA][uU][dD][eE]|\\\\.[eE][nN][vV][rR][cC]|\\\\.[gG][iI][tT]|\\\\.[gG][iI][tT][cC][oO][nN][fF][iI][gG]|\\\\.[gG][iI][tT][mM][oO][dD][uU][lL][eE][sS]|\\\\.[hH][uU][sS][kK][yY]|\\\\.[iI][dD][eE][aA]|\\\\.[mM][cC][pP]\\\\.[jJ][sS][oO][nN]|\\\\.[nN][pP][mM][rR][cC]|\\\\.[pP][nN][pP][mM][fF][iI][lL][eE]\\\\.[cC][jJ][sS]|\\\\.[pP][rR][oO][fF][iI][lL][eE]|\\\\.[vV][sS][cC][oO][dD][eE]|\\\\.[yY][aA][rR][nN][rR][cC]|\\\\.[yY][aA][rR][nN][rR][cC]\\\\.[yY][mM][lL]|\\\\.[zZ][lL][oO][gG][iI][nN]|\\\\.[zZ][lL][oO][gG][oO][uU][tT]|\\\\.[zZ][pP][rR][oO][fF][iI][lL][eE]|\\\\.[zZ][sS][hH][eE][nN][vV]|\\\\.[zZ][sS][hH][rR][cC])(/|$)"))
      (deny file-write* (regex "^<TMP>/[rR][oO][oO][tT](/.*)?/(\\\\.[bB][aA][sS][hH]_[lL][oO][gG][iI][nN]|\\\\.[bB][aA][sS][hH]_[lL][oO][gG][oO][uU][tT]|\\\\.[bB][aA][sS][hH]_[pP][rR][oO][fF][iI][lL][eE]|\\\\.[bB][aA][sS][hH][rR][cC]|\\\\.[cC][lL][aA][uU][dD][eE]|\\\\.[eE][nN][vV][rR][cC]|\\\\.[gG][iI][tT]|\\\\.[gG][iI][tT][cC][oO][nN][fF][iI][gG]|\\\\.[gG][iI][tT][mM][oO][dD][uU][lL][eE][sS]|\\\\.[hH][uU][sS][kK][yY]|\\\\.[iI][dD][eE][aA]|\\\\.[mM][cC][pP]\\\\.[jJ][sS][oO][nN]|\\\\.[nN][pP][mM][rR][cC]|\\\\.[pP][nN][pP][mM][fF][iI][lL][eE]\\\\.[cC][jJ][sS]|\\\\.[pP][rR][oO][fF][iI][lL][eE]|\\\\.[vV][sS][cC][oO][dD][eE]|\\\\.[yY][aA][rR][nN][rR][cC]|\\\\.[yY][aA][rR][nN][rR][cC]\\\\.[yY][mM][lL]|\\\\.[zZ][lL][oO][gG][iI][nN]|\\\\.[zZ][lL][oO][gG][oO][uU][tT]|\\\\.[zZ][pP][rR][oO][fF][iI][lL][eE]|\\\\.[zZ][sS][hH][eE][nN][vV]|\\\\.[zZ][sS][hH][rR][cC])(/|$)"))
      (deny file-write-unlink (regex "^<TMP>/[oO][uU][tT]$"))
      (deny file-write-unlink (regex "^<TMP>/[rR][oO][oO][tT]$"))"
    `);
  });

  test("a derived child: only its narrowed areas, a file area as a literal", () => {
    const sb = createSandbox({
      root: join(dir, "root"),
      mounts: [{ source: join(dir, "cache"), target: "/cache", readonly: true }],
    });
    const child = sb.derive({ allowRead: ["/src", "/cache", "/vendor"], allowWrite: ["/src/lib"] });
    expect(section(profileOf(child), AREAS)).toMatchInlineSnapshot(`
      ";; The sandbox's areas, at their real host paths (later rules win).
      (allow file-read* process-exec (subpath "<tmp>/cache"))
      (allow file-read* process-exec (subpath "<tmp>/root/src"))
      (allow file-read* process-exec (subpath "<tmp>/root/vendor"))
      (allow file-write* (subpath "<tmp>/root/src/lib"))
      ;; Private scratch folder (HOME and TMPDIR), removed after the command.
      (allow file-read* process-exec file-write* (subpath "/private/var/folders/zz/T/mountbox-AbC123"))
      ;; The folders above: their attributes only (pwd, realpath).
      (allow file-read-metadata (literal "/"))
      (allow file-read-metadata (literal "/private"))
      (allow file-read-metadata (literal "/private/var"))
      (allow file-read-metadata (literal "/private/var/folders"))
      (allow file-read-metadata (literal "/private/var/folders/zz"))
      (allow file-read-metadata (literal "/private/var/folders/zz/T"))
      (allow file-read-metadata (literal "/tmp"))
      (allow file-read-metadata (literal "<tmp>"))
      (allow file-read-metadata (literal "<tmp>/root"))
      (allow file-read-metadata (literal "<tmp>/root/src"))
      ;; Protected entries: never written; the folders above them never renamed or removed.
      (deny file-write* (regex "^<TMP>/[rR][oO][oO][tT]/[sS][rR][cC]/[lL][iI][bB](/.*)?/(\\\\.[bB][aA][sS][hH]_[lL][oO][gG][iI][nN]|\\\\.[bB][aA][sS][hH]_[lL][oO][gG][oO][uU][tT]|\\\\.[bB][aA][sS][hH]_[pP][rR][oO][fF][iI][lL][eE]|\\\\.[bB][aA][sS][hH][rR][cC]|\\\\.[cC][lL][aA][uU][dD][eE]|\\\\.[eE][nN][vV][rR][cC]|\\\\.[gG][iI][tT]|\\\\.[gG][iI][tT][cC][oO][nN][fF][iI][gG]|\\\\.[gG][iI][tT][mM][oO][dD][uU][lL][eE][sS]|\\\\.[hH][uU][sS][kK][yY]|\\\\.[iI][dD][eE][aA]|\\\\.[mM][cC][pP]\\\\.[jJ][sS][oO][nN]|\\\\.[nN][pP][mM][rR][cC]|\\\\.[pP][nN][pP][mM][fF][iI][lL][eE]\\\\.[cC][jJ][sS]|\\\\.[pP][rR][oO][fF][iI][lL][eE]|\\\\.[vV][sS][cC][oO][dD][eE]|\\\\.[yY][aA][rR][nN][rR][cC]|\\\\.[yY][aA][rR][nN][rR][cC]\\\\.[yY][mM][lL]|\\\\.[zZ][lL][oO][gG][iI][nN]|\\\\.[zZ][lL][oO][gG][oO][uU][tT]|\\\\.[zZ][pP][rR][oO][fF][iI][lL][eE]|\\\\.[zZ][sS][hH][eE][nN][vV]|\\\\.[zZ][sS][hH][rR][cC])(/|$)"))
      (deny file-write-unlink (regex "^<TMP>/[rR][oO][oO][tT]/[sS][rR][cC]/[lL][iI][bB]$"))"
    `);
    const grandchild = child.derive({ allowRead: ["/src/a.ts"], readonly: true });
    expect(section(profileOf(grandchild), AREAS, ";; Private")).toMatchInlineSnapshot(`
      ";; The sandbox's areas, at their real host paths (later rules win).
      (allow file-read* process-exec (literal "<tmp>/root/src/a.ts"))"
    `);
    expect(profileOf(grandchild)).not.toContain('(allow file-write* (subpath "<tmp>');
  });

  test("protected entries: names at any depth, absolute paths and guards, with the folders above held", () => {
    mkdirSync(join(dir, "root/app/bin"), { recursive: true });
    const sb = createSandbox({
      root: join(dir, "root"),
      protected: [".git", ".Husky", "/app/bin/host.mjs", "/workers"],
    });
    const text = profileOf(sb, { guards: [join(dir, "root/tools/hooks"), "/elsewhere/x"] });
    expect(section(text, ";; Protected")).toMatchInlineSnapshot(`
      ";; Protected entries: never written; the folders above them never renamed or removed.
      (deny file-write* (regex "^<TMP>/[rR][oO][oO][tT](/.*)?/(\\\\.[hH][uU][sS][kK][yY]|\\\\.[gG][iI][tT])(/|$)"))
      (deny file-write* (regex "^<TMP>/[rR][oO][oO][tT]/[aA][pP][pP]/[bB][iI][nN]/[hH][oO][sS][tT]\\\\.[mM][jJ][sS](/|$)"))
      (deny file-write* (regex "^<TMP>/[rR][oO][oO][tT]/[tT][oO][oO][lL][sS]/[hH][oO][oO][kK][sS](/|$)"))
      (deny file-write* (regex "^<TMP>/[rR][oO][oO][tT]/[wW][oO][rR][kK][eE][rR][sS](/|$)"))
      (deny file-write-unlink (regex "^<TMP>/[rR][oO][oO][tT]$"))
      (deny file-write-unlink (regex "^<TMP>/[rR][oO][oO][tT]/[aA][pP][pP]$"))
      (deny file-write-unlink (regex "^<TMP>/[rR][oO][oO][tT]/[aA][pP][pP]/[bB][iI][nN]$"))
      (deny file-write-unlink (regex "^<TMP>/[rR][oO][oO][tT]/[tT][oO][oO][lL][sS]$"))"
    `);
    // A read-only sandbox has nothing to protect.
    const ro = sb.derive({ readonly: true, inherit: true });
    expect(profileOf(ro)).not.toContain(";; Protected");
  });

  test("secrets: the default list (what runCommand passes: the policy's own) compiles, one deny per entry and area", () => {
    const sb = createSandbox({ root: join(dir, "root") });
    const entries = policyOf(sb).secrets.entries;
    expect(entries).toEqual(DEFAULT_SECRETS);
    const text = profileOf(sb, { secrets: entries });
    expect(section(text, ";; Secrets").split("\n").length - 1).toBe(DEFAULT_SECRETS.length);
    const rules = parseProfile(
      buildSeatbeltProfile(policyOf(sb), { tempDir: TEMP, secrets: entries }),
    );
    expect(decide(rules, "file-read-data", join(dir, "root", "a", ".env"))).toBe(false);
    expect(decide(rules, "file-read-data", join(dir, "root", "a", "env.txt"))).toBe(true);
  });

  test("secrets: names at any depth of every readable folder; a mount at a secret name denied whole", () => {
    mkdirSync(join(dir, "keys"));
    const sb = createSandbox({
      root: join(dir, "root"),
      mounts: [
        { source: join(dir, "cache"), target: "/cache", readonly: true },
        { source: join(dir, "keys"), target: "/home/.ssh", readonly: true },
      ],
    });
    const text = profileOf(sb, {
      secrets: [".env", ".env.*", "*.pem", "id_[re]*", ".ssh/", "{x,y}.key"],
    });
    expect(section(text, ";; Secrets")).toMatchInlineSnapshot(`
      ";; Secrets: never read, written, renamed or run.
      (deny file-read* file-write* process-exec (regex "^<TMP>/[cC][aA][cC][hH][eE]/(.*/)?\\\\.[eE][nN][vV](/|$)"))
      (deny file-read* file-write* process-exec (regex "^<TMP>/[cC][aA][cC][hH][eE]/(.*/)?\\\\.[eE][nN][vV]\\\\.[^/]*(/|$)"))
      (deny file-read* file-write* process-exec (regex "^<TMP>/[cC][aA][cC][hH][eE]/(.*/)?[^/]*\\\\.[pP][eE][mM](/|$)"))
      (deny file-read* file-write* process-exec (regex "^<TMP>/[cC][aA][cC][hH][eE]/(.*/)?[iI][dD]_[ERer][^/]*(/|$)"))
      (deny file-read* file-write* process-exec (regex "^<TMP>/[cC][aA][cC][hH][eE]/(.*/)?\\\\.[sS][sS][hH](/|$)"))
      (deny file-read* file-write* process-exec (regex "^<TMP>/[cC][aA][cC][hH][eE]/(.*/)?([xX]\\\\.[kK][eE][yY]|[yY]\\\\.[kK][eE][yY])(/|$)"))
      (deny file-read* file-write* process-exec (regex "^<TMP>/[rR][oO][oO][tT]/(.*/)?\\\\.[eE][nN][vV](/|$)"))
      (deny file-read* file-write* process-exec (regex "^<TMP>/[rR][oO][oO][tT]/(.*/)?\\\\.[eE][nN][vV]\\\\.[^/]*(/|$)"))
      (deny file-read* file-write* process-exec (regex "^<TMP>/[rR][oO][oO][tT]/(.*/)?[^/]*\\\\.[pP][eE][mM](/|$)"))
      (deny file-read* file-write* process-exec (regex "^<TMP>/[rR][oO][oO][tT]/(.*/)?[iI][dD]_[ERer][^/]*(/|$)"))
      (deny file-read* file-write* process-exec (regex "^<TMP>/[rR][oO][oO][tT]/(.*/)?\\\\.[sS][sS][hH](/|$)"))
      (deny file-read* file-write* process-exec (regex "^<TMP>/[rR][oO][oO][tT]/(.*/)?([xX]\\\\.[kK][eE][yY]|[yY]\\\\.[kK][eE][yY])(/|$)"))"
    `);
    // What the rules decide, read as Seatbelt would.
    const rules = parseProfile(
      buildSeatbeltProfile(policyOf(sb), { tempDir: TEMP, secrets: [".env", "*.pem", ".ssh/"] }),
    );
    const read = (rel: string): boolean => decide(rules, "file-read-data", join(dir, rel));
    expect(read("root/src/a.ts")).toBe(true);
    expect(read("root/.env")).toBe(false);
    expect(read("root/src/lib/.ENV")).toBe(false);
    expect(read("root/src/.env.example")).toBe(true);
    expect(read("root/deep/x/server.PEM/inner")).toBe(false);
    expect(read("root/.ssh/id_rsa")).toBe(false);
    expect(read("keys/id_rsa")).toBe(false);
    expect(read("root/.sshx/a")).toBe(true);
    expect(decide(rules, "file-write-unlink", join(dir, "root/.env"))).toBe(false);
  });

  test("network off and on, with and without unix sockets", () => {
    const sb = createSandbox({ root: join(dir, "root") });
    const net = (network: boolean, allowUnixSockets: boolean): string =>
      section(profileOf(sb, { network, allowUnixSockets }), ";; Network");
    expect(net(false, false)).toMatchInlineSnapshot(`
      ";; Network: off, unix sockets included.
      "
    `);
    expect(net(false, true)).toMatchInlineSnapshot(`
      ";; Network: off; unix sockets allowed.
      (allow system-socket (socket-domain AF_UNIX))
      (allow network-bind (local unix-socket))
      (allow network-outbound (remote unix-socket))
      "
    `);
    expect(net(true, false)).toMatchInlineSnapshot(`
      ";; Network: on.
      (allow network*)
      (allow mach-lookup (global-name "com.apple.trustd.agent"))
      (allow mach-lookup (global-name "com.apple.SecurityServer"))
      (allow system-socket (socket-domain AF_UNIX))
      (deny network-bind (local unix-socket))
      (deny network-outbound (remote unix-socket))
      (allow network-outbound (remote unix-socket (path-literal "/private/var/run/mDNSResponder")))
      "
    `);
    expect(net(true, true)).toMatchInlineSnapshot(`
      ";; Network: on.
      (allow network*)
      (allow mach-lookup (global-name "com.apple.trustd.agent"))
      (allow mach-lookup (global-name "com.apple.SecurityServer"))
      (allow system-socket (socket-domain AF_UNIX))
      (allow network-bind (local unix-socket))
      (allow network-outbound (remote unix-socket))
      "
    `);
    expect(profileOf(sb)).not.toMatch(/network\*|network-outbound/);
  });
});

describe("hostile host names", () => {
  const NAMES = ['q"uote', "back\\slash", "pa(ren)s [x] {y} $.^*+?|", "ünï-NFC", "e\u0301-NFD"];

  test("quoted, escaped and folded so that every string reads back as the host path", () => {
    for (const n of NAMES) mkdirSync(join(dir, "root", n), { recursive: true });
    const sb = createSandbox({
      root: join(dir, "root"),
      mounts: NAMES.map((n, i) => ({
        source: join(dir, "root", n),
        target: `/m${i}`,
        readonly: i % 2 === 0,
      })),
    });
    const text = profileOf(sb);
    expect(section(text, AREAS, ";; Private")).toMatchInlineSnapshot(`
      ";; The sandbox's areas, at their real host paths (later rules win).
      (allow file-read* process-exec (subpath "<tmp>/root"))
      (allow file-write* (subpath "<tmp>/root"))
      (deny file-write* (regex "^<TMP>/[rR][oO][oO][tT]/([eE]́-[nN][fF][dD]|é-[nN][fF][dD])(/|$)"))
      (deny file-read* process-exec (regex "^<TMP>/[rR][oO][oO][tT]/[mM]0(/|$)"))
      (deny file-write* (regex "^<TMP>/[rR][oO][oO][tT]/[mM]0(/|$)"))
      (deny file-read* process-exec (regex "^<TMP>/[rR][oO][oO][tT]/[mM]1(/|$)"))
      (deny file-write* (regex "^<TMP>/[rR][oO][oO][tT]/[mM]1(/|$)"))
      (deny file-read* process-exec (regex "^<TMP>/[rR][oO][oO][tT]/[mM]2(/|$)"))
      (deny file-write* (regex "^<TMP>/[rR][oO][oO][tT]/[mM]2(/|$)"))
      (deny file-read* process-exec (regex "^<TMP>/[rR][oO][oO][tT]/[mM]3(/|$)"))
      (deny file-write* (regex "^<TMP>/[rR][oO][oO][tT]/[mM]3(/|$)"))
      (deny file-read* process-exec (regex "^<TMP>/[rR][oO][oO][tT]/[mM]4(/|$)"))
      (deny file-write* (regex "^<TMP>/[rR][oO][oO][tT]/[mM]4(/|$)"))
      (deny file-write* (regex "^<TMP>/[rR][oO][oO][tT]/[pP][aA]\\\\([rR][eE][nN]\\\\)[sS] \\\\[[xX]] \\\\{[yY]\\\\} \\\\$\\\\.\\\\^\\\\*\\\\+\\\\?\\\\|(/|$)"))
      (deny file-write* (regex "^<TMP>/[rR][oO][oO][tT]/[qQ]\\"[uU][oO][tT][eE](/|$)"))"
    `);
    // Every string reads back: allow rules name the exact host path, deny
    // regexes match it (and its other case and normalization) and nothing beside it.
    const rules = parseProfile(buildSeatbeltProfile(policyOf(sb), { tempDir: TEMP }));
    const strings = text.split("\n").flatMap(listStrings);
    NAMES.forEach((n, i) => {
      const host = join(dir, "root", n);
      expect(decide(rules, "file-read-data", `${host}/f`)).toBe(true);
      expect(decide(rules, "file-write-create", `${host}x/f`)).toBe(true);
      const readOnly = i % 2 === 0;
      expect(strings.includes(`^<TMP>/${foldPathRegex(`/root/${n}`).slice(1)}(/|$)`)).toBe(
        readOnly,
      );
      for (const spelling of [
        host,
        host.toUpperCase(),
        host.normalize("NFD"),
        host.normalize("NFC"),
      ])
        if (spelling.startsWith(dir) || readOnly)
          expect(decide(rules, "file-write-create", `${spelling}/f`), spelling).toBe(!readOnly);
    });
  });

  test("NUL and line breaks are refused, never written", () => {
    const sb = createSandbox({ root: join(dir, "root") });
    const p = policyOf(sb);
    for (const bad of ["/private/tmp/a\nb", "/private/tmp/a\rb", "/private/tmp/a\0b"])
      expect(() => buildSeatbeltProfile(p, { tempDir: bad })).toThrow(OsSandboxUnavailableError);
    expect(() => buildSeatbeltProfile(p, { tempDir: TEMP, guards: [`${dir}/root/x\ny`] })).toThrow(
      OsSandboxUnavailableError,
    );
    expect(() => buildSeatbeltProfile(p, { tempDir: "/x\ny" })).toThrowErrorMatchingInlineSnapshot(
      `[OsSandboxUnavailableError: Cannot run the command: a name among the sandbox's host folders (or a secret pattern) contains NUL or a line break, which a Seatbelt profile cannot hold. The command was not run. Rename that folder on the host, or run the command on Linux.]`,
    );
    // A host folder whose name has a line break: the whole profile is refused.
    mkdirSync(join(dir, "line\nbreak"));
    const withBreak = createSandbox({
      root: join(dir, "root"),
      mounts: [{ source: join(dir, "line\nbreak"), target: "/lb", readonly: true }],
    });
    expect(() => buildSeatbeltProfile(policyOf(withBreak), { tempDir: TEMP })).toThrow(
      OsSandboxUnavailableError,
    );
  });
});

describe("secret name globs as regexes", () => {
  test("patterns and what they become", () => {
    const shown = Object.fromEntries(
      [
        "*.pem",
        ".env.*",
        "id_rsa*",
        "**",
        "a?b",
        "[a-c]x",
        "[!a-c]",
        "[]a]",
        "[^-]",
        "[[:digit:]_]",
        "{a,b{c,d}}",
        "\\*lit",
        "x[",
        "[[:punct:]]",
        "[z-a]",
        "[a-a]b",
        "[\\\\^]",
      ].map((p) => [p, convertNameGlob(p, false)]),
    );
    expect(shown).toMatchInlineSnapshot(`
      {
        "**": "[^/]*",
        "*.pem": "[^/]*\\.pem",
        ".env.*": "\\.env\\.[^/]*",
        "[!a-c]": "[^/a-c]",
        "[[:digit:]_]": "[0-9_]",
        "[[:punct:]]": "([!-,.:-@_\`{-~^\\\\[-]|])",
        "[\\\\^]": "([\\\\]|\\^)",
        "[]a]": "([a]|])",
        "[^-]": "[^/-]",
        "[a-a]b": "[a]b",
        "[a-c]x": "[a-c]x",
        "[z-a]": undefined,
        "\\*lit": "\\*lit",
        "a?b": "a[^/]b",
        "id_rsa*": "id_rsa[^/]*",
        "x[": "x\\[",
        "{a,b{c,d}}": "(a|bc|bd)",
      }
    `);
  });

  test("what a profile cannot hold is refused with a message", () => {
    const refusal = (p: string): string => {
      try {
        convertNameGlob(p, false);
        return "accepted";
      } catch (err) {
        return (err as Error).message;
      }
    };
    expect(
      ["a/b", ".", "", "[é]", "[!]]", "[[:space:]]", "a\tb"].map(refusal),
    ).toMatchInlineSnapshot(`
      [
        "secrets: an entry is a name matched at any depth ('.env', '*.key', '.ssh/'), not a path: no '/' except one at the end for a folder",
        "secrets: an entry is a name matched at any depth ('.env', '*.key', '.ssh/'), not a path: no '/' except one at the end for a folder",
        "secrets: each entry must be a name glob of 1 to 1000 characters, such as '.env', '*.pem' or '.aws/'",
        "secrets: a [...] class can only hold printable ASCII characters in a Seatbelt profile; write other characters outside the class",
        "secrets: ']' inside a negated class cannot be written in a Seatbelt profile; use a positive class or list the names",
        "secrets: [:space:] needs control characters, which a Seatbelt profile cannot hold; list the characters instead",
        "secrets: an entry cannot contain control characters",
      ]
    `);
    expect(checkSecretPattern(".aws/")).toEqual({ glob: ".aws", folder: true });
  });

  // Characters that mean something to globs or regexes, and some that do not.
  const PATTERN_CHARS = [
    "a",
    "b",
    "B",
    "-",
    ".",
    "*",
    "?",
    "[",
    "]",
    "!",
    "^",
    "\\",
    "{",
    "}",
    ",",
    ":",
    "$",
    "(",
    "|",
    "é",
  ];
  const POSIX = [
    "[:alpha:]",
    "[:digit:]",
    "[:punct:]",
    "[:upper:]",
    "[:word:]",
    "[:nope:]",
    "[:toString:]",
  ];
  const pattern = fc
    .array(fc.oneof(fc.constantFrom(...PATTERN_CHARS), fc.constantFrom(...POSIX)), {
      minLength: 1,
      maxLength: 10,
    })
    .map((parts) => parts.join(""));
  const NAME_CHARS = [
    "a",
    "b",
    "B",
    "A",
    "-",
    ".",
    "*",
    "?",
    "[",
    "]",
    "!",
    "^",
    "\\",
    "{",
    "}",
    ",",
    ":",
    "$",
    "(",
    "|",
    "0",
    "_",
    " ",
    "é",
    "\u{1f600}",
  ];
  const name = fc
    .array(fc.constantFrom(...NAME_CHARS), { minLength: 1, maxLength: 8 })
    .map((cs) => cs.join(""));

  /** The regex of `p`, or undefined when it is refused (only as documented). */
  function tryConvert(p: string, fold: boolean): { re: RegExp | null } | undefined {
    try {
      const re = convertNameGlob(p, fold);
      return { re: re === undefined ? null : new RegExp(`^${re}$`) };
    } catch (err) {
      expect((err as Error).message).toMatch(/^secrets: |^pattern '/);
      return undefined;
    }
  }

  test("match exactly what the sandbox's glob matcher matches, on random names", () => {
    fc.assert(
      fc.property(pattern, fc.array(name, { minLength: 1, maxLength: 20 }), (p, names) => {
        const converted = tryConvert(p, false);
        fc.pre(converted !== undefined);
        const glob = compileGlob(p);
        for (const n of names)
          expect(converted!.re?.test(n) ?? false, `${p} on ${n}`).toBe(glob(n));
      }),
      { numRuns: 2000 },
    );
  });

  test("folded, they match what the matcher matches on any ASCII case of the name", () => {
    const ascii = name.filter((n) => /^[\x20-\x7e]*$/.test(n));
    fc.assert(
      fc.property(pattern, fc.array(ascii, { minLength: 1, maxLength: 20 }), (p, names) => {
        const folded = tryConvert(p, true);
        fc.pre(folded !== undefined);
        const exact = convertNameGlob(p, false);
        const insensitive = exact === undefined ? null : new RegExp(`^${exact}$`, "i");
        for (const n of names)
          expect(folded!.re?.test(n) ?? false, `${p} on ${n}`).toBe(insensitive?.test(n) ?? false);
      }),
      { numRuns: 1000 },
    );
  });
});

describe("the profile decides as the policy does (random layouts)", () => {
  const base = realpathSync(mkdtempSync(join(tmpdir(), "mountbox-sbp-")));
  const DIRS = ["r", "r/a", "r/a/b", "r/.git", "r/c", "s", "s/d", "s/.git", "t"];
  const FILES = ["r/f.txt", "r/a/g.txt", "r/a/b/h.txt", "r/.git/config", "s/d/i.txt", "t/j.txt"];
  for (const d of DIRS) mkdirSync(join(base, d), { recursive: true });
  for (const f of FILES) writeFileSync(join(base, f), "x");
  afterAll(() => rmSync(base, { recursive: true, force: true }));
  /** Every host path of the tree, and a new name in every folder. */
  const PROBES = [...DIRS, ...FILES, ...DIRS.map((d) => `${d}/new`)].map((p) => join(base, p));

  const mount = fc.record({
    source: fc.constantFrom("s", "s/d", "r/a", "r/c", "r/a/b", "t"),
    target: fc.constantFrom("/m", "/a", "/c", "/a/m", "/m/n", "/c/x", "/t"),
    readonly: fc.boolean(),
  });
  const VIRTUAL = [
    "/",
    "/a",
    "/a/b",
    "/a/g.txt",
    "/c",
    "/f.txt",
    "/m",
    "/m/d",
    "/m/n",
    "/t",
    "/c/x",
    "/a/m",
    "/.git",
  ];
  const layout = fc.record({
    mounts: fc.array(mount, { maxLength: 3 }),
    readonlyRoot: fc.boolean(),
    derive: fc.option(
      fc.record({
        allowRead: fc.subarray(VIRTUAL, { maxLength: 4 }),
        allowWrite: fc.subarray(VIRTUAL, { maxLength: 3 }),
      }),
    ),
  });

  function build(l: {
    mounts: { source: string; target: string; readonly: boolean }[];
    readonlyRoot: boolean;
    derive: { allowRead: string[]; allowWrite: string[] } | null;
  }): Sandbox | undefined {
    try {
      const sb = createSandbox({
        root: join(base, "r"),
        readonly: l.readonlyRoot,
        mounts: l.mounts.map((m) => ({ ...m, source: join(base, m.source) })),
      });
      if (l.derive === null) return sb;
      return sb.derive({
        allowRead: [...l.derive.allowRead, ...l.derive.allowWrite],
        allowWrite: l.derive.allowWrite,
      });
    } catch {
      return undefined;
    }
  }

  /**
   * The in-process answer: `host` may be read (written) if some virtual
   * path, in any mount whose source holds it, resolves to it for that access.
   */
  function reaches(sb: Sandbox, host: string, access: "read" | "write"): boolean {
    const p = policyOf(sb);
    return p.table.mounts.some((m) => {
      if (host !== m.source && !host.startsWith(`${m.source}/`)) return false;
      const rest = host.slice(m.source.length);
      const v = m.target === "/" ? rest || "/" : m.target + rest;
      try {
        return p.resolveVirtual(v, access, false).real === host;
      } catch {
        return false;
      }
    });
  }

  test("at every host path of the tree, read and write are what the sandbox permits", () => {
    fc.assert(
      fc.property(layout, (l) => {
        const sb = build(l);
        fc.pre(sb !== undefined);
        const rules = parseProfile(buildSeatbeltProfile(policyOf(sb!), { tempDir: TEMP }));
        for (const h of PROBES) {
          expect(decide(rules, "file-read-data", h), `read ${h}`).toBe(reaches(sb!, h, "read"));
          expect(decide(rules, "file-write-create", h), `write ${h}`).toBe(
            reaches(sb!, h, "write"),
          );
        }
        // Every writable area is in an allow-write rule; no read-only area is writable.
        const p = policyOf(sb!);
        for (const v of p.writableRoots) {
          let real: string;
          try {
            real = p.resolveVirtual(v, "write", false).real;
          } catch {
            continue; // its folder is another area's (a source mounted twice)
          }
          expect(decide(rules, "file-write-create", real)).toBe(true);
          expect(
            rules.some(
              (r) =>
                r.allow &&
                r.ops.includes("file-write*") &&
                r.filters.some((f) =>
                  f.kind === "subpath" ? isWithin(real, f.arg) : f.arg === real,
                ),
            ),
          ).toBe(true);
        }
        for (const v of p.readableRoots) {
          if (p.deny(v, "write", false) === undefined) continue;
          let real: string;
          try {
            real = p.resolveVirtual(v, "read", false).real;
          } catch {
            continue; // its folder is another area's (a source mounted twice)
          }
          // (Unless another area shows the same folder writable: a second place.)
          if (reaches(sb!, real, "write")) continue;
          expect(decide(rules, "file-write-create", real), `read-only ${v}`).toBe(false);
          expect(
            rules.some(
              (r) =>
                r.allow && r.ops.includes("file-write*") && r.filters.some((f) => f.arg === real),
            ),
          ).toBe(false);
        }
      }),
      { numRuns: 300 },
    );
  });
});

describe("macOS around the profile", () => {
  test("runSeatbelt checks the host before it starts sandbox-exec (absent here)", async () => {
    const sb = createSandbox({
      root: join(dir, "root"),
      mounts: [{ source: join(dir, "cache"), target: "/cache", readonly: true }],
    });
    const opts = checkCommandOptions({ timeoutMs: 5_000 });
    // Everything up to the start ran: plan, checks, profile; then the spawn fails.
    await expect(
      runSeatbelt(policyOf(sb), "true", opts),
    ).rejects.toThrowErrorMatchingInlineSnapshot(
      `[IoError: Cannot run the command: the shell could not be started (ENOENT).]`,
    );
    // A mount source replaced since the sandbox was made: refused before anything starts.
    renameSync(join(dir, "cache"), join(dir, "cache-old"));
    mkdirSync(join(dir, "cache"));
    await expect(
      runSeatbelt(policyOf(sb), "true", opts),
    ).rejects.toThrowErrorMatchingInlineSnapshot(
      `[IoError: Cannot run the command: the folder mounted at '/cache' was moved or replaced since the sandbox was created; its path now leads to a different folder (or none). Create the sandbox again to use what is there now.]`,
    );
  });

  test("notes of a command on macOS: refusals say EPERM, the network is off, no /workspace", () => {
    const sb = createSandbox({ root: join(dir, "root") }).derive({
      allowRead: ["/"],
      allowWrite: ["/src"],
    });
    const raw = {
      exitCode: 1,
      stdout: "",
      stderr: "touch: x: Operation not permitted\ncurl: (6) Could not resolve host: example.com\n",
      timedOut: false,
      aborted: false,
      truncated: true,
    };
    const opts = checkCommandOptions({ maxOutputBytes: 100 });
    const r = buildCommandResult(raw, policyOf(sb), opts, true, undefined, "host");
    expect(r.notes.map((n) => n.replaceAll(dir, "<tmp>"))).toMatchInlineSnapshot(`
      [
        "Output was cut at 100 bytes per stream. Redirect it to a file under $TMPDIR and read parts of it (head, tail, grep).",
        "A path was refused or not found by the OS sandbox (macOS). Commands see the host's folders, not the sandbox paths. The working directory is the sandbox path '/': use relative paths (the sandbox path '/src/a.ts' is 'src/a.ts' there). Writable: /src (sandbox paths); $TMPDIR is private scratch space. Everything else is read-only or refused.",
        "Network access is off for this command (the OS sandbox refuses every connection, the host's 127.0.0.1 included). Ask for network access if it is needed.",
      ]
    `);
  });

  test("sandbox-exec is looked for at its fixed path only", () => {
    expect(checkSeatbelt()).toBe("no-sandbox-exec"); // this is Linux
    expect(makeUnavailableError("no-sandbox-exec").message).toMatchInlineSnapshot(
      `"Cannot run the command: OS sandboxing is unavailable: macOS's sandbox-exec (/usr/bin/sandbox-exec) was not found, so no Seatbelt sandbox can be made. The command was not run. To run commands without OS confinement anyway, pass unsafeAllowUnconfined: true (not recommended)."`,
    );
  });

  test("what a model is told: host folders, relative paths, the areas elsewhere", () => {
    const sb = createSandbox({
      root: join(dir, "root"),
      mounts: [
        { source: join(dir, "cache"), target: "/cache", readonly: true },
        { source: join(dir, "root/vendor"), target: "/lib", readonly: true },
      ],
    });
    const child = sb.derive({ allowRead: ["/", "/cache"], allowWrite: ["/src"] });
    expect(
      describeSeatbeltSandbox(policyOf(child), false).replaceAll(dir, "<tmp>"),
    ).toMatchInlineSnapshot(`
      "Commands run with sh in an OS sandbox (macOS Seatbelt). They see the host's folders at their own paths, not the sandbox paths.
      The working directory is the sandbox path '/': use relative paths (the sandbox path '/src/a.ts' is 'src/a.ts' there). The sandbox path '/cache' is the folder '<tmp>/cache'. The sandbox path '/lib' is 'vendor' there.
      Readable: /. Writable: /src (sandbox paths).
      $TMPDIR (also $HOME) is private scratch space, removed when the command ends. Nothing else is writable; other paths are refused.
      Network: off. The environment is empty except PATH, HOME, TMPDIR and LANG."
    `);
    const narrow = sb.derive({ allowRead: ["/src", "/cache", "/lib"] });
    expect(describeRefusedOnHost(policyOf(narrow)).replaceAll(dir, "<tmp>")).toMatchInlineSnapshot(
      `"A path was refused or not found by the OS sandbox (macOS). Commands see the host's folders, not the sandbox paths. The working directory is the sandbox path '/cache': use relative paths (the sandbox path '/cache/a.txt' is 'a.txt' there). The sandbox path '/lib' is the folder '<tmp>/root/vendor'. The sandbox path '/src' is the folder '<tmp>/root/src'. Writable: none (sandbox paths); $TMPDIR is private scratch space. Everything else is read-only or refused."`,
    );
  });
});
