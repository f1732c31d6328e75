/**
 * What one derive() or restrict() call learns on disk about its entries,
 * shared between them so nested entries are not walked twice.
 *
 * Each entry costs a realpath (glibc: one readlink per level) and a type
 * check (a file entry is an exact area). `derive({ allowRead: "/a/b",
 * allowWrite: "/a/b/c" })` walked `/a/b` twice and stat'ed both. The probe
 * instead learns, from an entry's realpath (when it is the path itself) or
 * its lstat, whether its last name is a link; where it is not,
 *   realpath(P/name) = realpath(P) + "/name"
 * holds, so the real place of the entry's folder is known too (and that it
 * is a folder), and an entry whose folder is known needs one lstat instead
 * of a realpath.
 *
 * The probe lives for one call only (never across calls: a folder renamed or
 * a link swapped between two derives is always seen). Inside the call it
 * answers as if the later entries had been looked at when the earlier ones
 * were; a race with the call can yield no more than one just after it, since
 * a child's areas are virtual paths intersected with its parent's, and every
 * I/O resolves again.
 */
import { existsSync, lstatSync, type Stats, statSync } from "node:fs";
import type { RealpathMemo } from "./real-path.js";

/** What is at a host path, as far as the area needs it. */
type Kind = "file" | "dir" | "other";

interface Fact {
  /** Where the host path really leads (it exists). */
  real: string;
  /** What is there, links followed. */
  kind: Kind;
}

function kindOf(st: Stats): Kind {
  return st.isFile() ? "file" : st.isDirectory() ? "dir" : "other";
}

function lstatQuietly(p: string): Stats | undefined {
  try {
    return lstatSync(p, { throwIfNoEntry: false });
  } catch {
    return undefined;
  }
}

/** The folder part of a host path, or `undefined` at the top. */
function folderOf(p: string): string | undefined {
  const i = p.lastIndexOf("/");
  if (i < 0 || p.length === 1) return undefined;
  return i === 0 ? "/" : p.slice(0, i);
}

/** Shared disk facts of one derive() or restrict() call. */
export class EntryProbe {
  /** Realpath results of this call, handed to `Policy.resolveVirtual`. */
  readonly memo: RealpathMemo = new Map();
  readonly #facts = new Map<string, Fact>();

  /**
   * Before an entry is resolved: where an earlier entry already found its
   * host path (or its folder, plus one lstat here), puts the real path in
   * the memo so the resolve needs no realpath.
   */
  prepare(host: string): void {
    if (this.#facts.size === 0 || this.memo.has(host)) return;
    const known = this.#facts.get(host);
    if (known !== undefined) {
      this.memo.set(host, { real: known.real, hops: 0, absent: false });
      return;
    }
    const folder = folderOf(host);
    const up = folder === undefined ? undefined : this.#facts.get(folder);
    if (up === undefined || up.kind !== "dir") return;
    const name = host.slice(folder!.length === 1 ? 1 : folder!.length + 1);
    const st = lstatQuietly(host);
    if (st === undefined || st.isSymbolicLink()) return; // the resolve walks it
    const real = up.real === "/" ? `/${name}` : `${up.real}/${name}`;
    this.#facts.set(host, { real, kind: kindOf(st) });
    this.memo.set(host, { real, hops: 0, absent: false });
  }

  /**
   * After an entry resolved to `real`: true if it is a file (an exact area).
   * Links are followed, as `stat(real)` would; a missing entry is no file.
   */
  isFile(host: string, real: string): boolean {
    const known = this.#facts.get(host);
    if (known !== undefined) return known.kind === "file";
    // realpath gave the path back: no name on it is a link (a link's real
    // path is never the link itself), so a folder needs no lstat: `host/`
    // exists only if it is one (no Stats object made either).
    if (real === host && existsSync(`${host}/`)) {
      this.#learn(host, real, "dir");
      return false;
    }
    const st = lstatQuietly(host);
    if (st !== undefined && !st.isSymbolicLink()) {
      this.#learn(host, real, kindOf(st));
      return st.isFile();
    }
    try {
      return statSync(real, { throwIfNoEntry: false })?.isFile() ?? false;
    } catch {
      return false;
    }
  }

  /** Records `host` (not a link, leading to `real`) and, through it, its folder. */
  #learn(host: string, real: string, kind: Kind): void {
    const folder = folderOf(host);
    if (folder === undefined) return;
    const name = host.slice(folder.length === 1 ? 1 : folder.length + 1);
    // realpath(folder/name) = realpath(folder)/name when `name` is no link;
    // anything else (a race) is not learned from.
    if (name === "" || !real.endsWith(`/${name}`)) return;
    this.#facts.set(host, { real, kind });
    const realFolder = real.length === name.length + 1 ? "/" : real.slice(0, -name.length - 1);
    if (!this.#facts.has(folder)) this.#facts.set(folder, { real: realFolder, kind: "dir" });
  }
}
