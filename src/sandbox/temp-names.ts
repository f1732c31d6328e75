/**
 * mountbox's own temp files (issue 26): how they are named, that nobody sees
 * them, and who removes the ones a killed host left behind.
 *
 * An atomic write goes through `.mountbox-<pid>-<16 hex>.tmp` in the target's
 * folder (`<pid>` is the writing host's process id; versions before issue 26
 * wrote `.mountbox-<16 hex>.tmp`). Such names are reserved: listings and
 * searches never show them, and the API refuses to create one. A listing
 * that meets one removes it when it is stale: untouched for
 * {@link STALE_TEMP_MS} and its writer process gone (or, for the old form
 * with no pid, untouched for {@link STALE_LEGACY_TEMP_MS}).
 */
import { randomBytes } from "node:crypto";
import { lstatSync, unlinkSync } from "node:fs";
import { invalidPath } from "../errors/index.js";

/** A temp name as any mountbox version writes it; group 1 is the writer's pid. */
const TEMP_NAME = /^\.mountbox-(?:([1-9]\d{0,9})-)?[0-9a-f]{16}\.tmp$/;
/** The same, as one component of a virtual path. */
const TEMP_COMPONENT = /(?:^|\/)\.mountbox-(?:[1-9]\d{0,9}-)?[0-9a-f]{16}\.tmp(?:\/|$)/;

/**
 * A temp file untouched this long whose writer process is gone is left over.
 * Long enough that a temp file of a host in another PID namespace (a
 * container sharing the folder), whose pid means nothing here, is not
 * removed while its write is still running: a write keeps its file's mtime
 * fresh.
 */
export const STALE_TEMP_MS = 10 * 60_000;
/** The same for the old form, whose writer cannot be asked: an hour. */
export const STALE_LEGACY_TEMP_MS = 60 * 60_000;

/** A fresh temp file name for this process (fixed-length, so any target name still fits). */
export function makeTempName(): string {
  return `.mountbox-${process.pid}-${randomBytes(8).toString("hex")}.tmp`;
}

/** True if `name` (one path component) is a mountbox temp file's name. */
export function isTempName(name: string): boolean {
  return name.startsWith(".mountbox-") && TEMP_NAME.test(name);
}

/**
 * Refuses a virtual path that would create an entry with a reserved temp
 * name: a listing would never show it, and a host could remove it as left over.
 * @throws InvalidPathError
 */
export function refuseTempName(v: string): void {
  if (v.includes("/.mountbox-") && TEMP_COMPONENT.test(v)) {
    throw invalidPath(
      v,
      "names of the form '.mountbox-….tmp' are reserved for mountbox's temporary files",
      "Choose another name.",
    );
  }
}

/**
 * Removes the temp file at real path `real` if it is left over (see the
 * module comment); never throws. Returns true if it was removed.
 */
export function removeIfStale(real: string, name: string, now = Date.now()): boolean {
  const m = TEMP_NAME.exec(name);
  if (!m) return false;
  try {
    const st = lstatSync(real, { throwIfNoEntry: false });
    if (!st?.isFile()) return false;
    const age = now - st.mtimeMs;
    const pid = m[1] === undefined ? undefined : Number(m[1]);
    if (pid === undefined ? age < STALE_LEGACY_TEMP_MS : age < STALE_TEMP_MS || isAlive(pid))
      return false;
    unlinkSync(real);
    return true;
  } catch {
    return false; // gone already, or not ours to remove: it stays hidden
  }
}

/** True if a process with this pid exists here (EPERM: it exists, owned by someone else). */
export function isAlive(pid: number): boolean {
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}
