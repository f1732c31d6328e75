/**
 * What the host's git, run at the top of a repository, executes from besides
 * the top `.git`: the git folders of submodules (a `git status` at the top
 * runs `git status` in every checked-out submodule, with that submodule's
 * own `core.fsmonitor`), `.gitmodules`, and a `core.hooksPath` inside the
 * work tree (husky's `.husky/`). A confined command must not be able to
 * plant any of them, so the bind plan holds them read-only (or, if absent,
 * with a placeholder) wherever they lie inside a writable folder bind.
 *
 * Everything here is read on the host side, from the repository's own
 * (protected) git folder: the index says which paths are submodules
 * (gitlinks), the config says where hooks are. Nothing is executed, and
 * nothing is read that could block the host (see `git-read.ts`): a FIFO, a
 * link, an oversized file or a submodule's git folder outside the
 * repository's own (one a command could have chosen) makes the whole
 * answer `unreadable`, and the command does not run.
 */
import { basename, dirname, isAbsolute, resolve } from "node:path";
import { isWithin } from "../sandbox/virtual-path.js";
import { INDEX_CAP, readGitFile, readGitText, SMALL_CAP } from "./git-read.js";
import { readKind } from "./host-lookup.js";

/** How deep submodules of submodules are followed. */
const MAX_DEPTH = 8;
/** How many repositories (the top and its submodules) are read at most. */
const MAX_REPOS = 256;

/** Places git executes from, inside `inside` (host paths), or why they cannot be told. */
export interface GitPlaces {
  /** Host paths strictly inside `inside` that must not be writable by a command. */
  places: string[];
  /**
   * True if a git folder's index or config could not be read as git writes
   * it, or a submodule's git folder lies outside the repository's own
   * (fail closed).
   */
  unreadable: boolean;
}

/**
 * The places git executes from that lie strictly inside the host folder
 * `inside` (a writable folder bind), for the repository whose work tree
 * holds `inside` (found by walking up, as git does) and its submodules,
 * recursively. The top `.git` itself is not listed (the `protected` list
 * holds it).
 */
export function findGitPlaces(inside: string): GitPlaces {
  const out: GitPlaces = { places: [], unreadable: false };
  const top = findWorkTreeTop(inside);
  if (top === undefined) return out;
  const gitDir = resolveGitDir(`${top}/.git`);
  if (gitDir === "bad") return { places: [], unreadable: true };
  if (gitDir === undefined) return out;
  // The repository's own git folders (and those of the submodules found):
  // a submodule's git folder must lie in one (where `git submodule` puts
  // it) or be its own `.git` folder.
  const common = readGitText(`${gitDir}/commondir`);
  if (common === undefined) return { places: [], unreadable: true };
  const own = [gitDir, ...(common.trim() === "" ? [] : [resolve(gitDir, common.trim())])];
  const seen = new Set<string>();
  const add = (p: string): void => {
    if (p !== inside && isWithin(p, inside) && !seen.has(p)) {
      seen.add(p);
      out.places.push(p);
    }
  };
  const queue: { top: string; gitDir: string; depth: number }[] = [{ top, gitDir, depth: 0 }];
  const visited = new Set<string>();
  while (queue.length > 0 && visited.size < MAX_REPOS) {
    const repo = queue.shift()!;
    if (visited.has(repo.gitDir)) continue;
    visited.add(repo.gitDir);
    const config = readGitConfig(repo.gitDir);
    if (config === undefined) {
      out.unreadable = true;
      continue;
    }
    const hooks = readHooksPath(config);
    if (hooks !== undefined && !hooks.startsWith("~")) {
      const at = isAbsolute(hooks) ? resolve(hooks) : resolve(repo.top, hooks);
      // husky (v9) sets `.husky/_`, whose hooks run `.husky/<hook>`: the
      // folder above is what git ends up executing from.
      add(basename(at) === "_" && /[/\\]_[/\\]?$/.test(hooks) ? dirname(at) : at);
    }
    const links = readGitlinks(repo.gitDir, /objectformat\s*=\s*sha256/i.test(config) ? 32 : 20);
    if (links === undefined) {
      out.unreadable = true;
      continue;
    }
    if (links.length > 0 || readKind(`${repo.top}/.gitmodules`) !== undefined)
      add(`${repo.top}/.gitmodules`);
    for (const link of links) {
      const sub = resolve(repo.top, link);
      if (!isWithin(sub, repo.top)) continue;
      add(`${sub}/.git`);
      const subGitDir = resolveGitDir(`${sub}/.git`);
      if (subGitDir === "bad") {
        out.unreadable = true;
        continue;
      }
      if (subGitDir === undefined || repo.depth >= MAX_DEPTH) continue;
      // A gitfile naming a folder elsewhere (perhaps one a command made,
      // with a FIFO for its index) is not followed: the index vouches for
      // the path, not for where its gitfile leads.
      if (subGitDir !== `${sub}/.git` && !own.some((o) => isWithin(subGitDir, o))) {
        out.unreadable = true;
        continue;
      }
      // Vouched for: its own submodules' git folders may lie inside it
      // (a non-absorbed submodule keeps them in `sub/.git/modules`).
      own.push(subGitDir);
      queue.push({ top: sub, gitDir: subGitDir, depth: repo.depth + 1 });
    }
  }
  return out;
}

/** The nearest folder at or above `from` holding a `.git` (as git's discovery finds it). */
function findWorkTreeTop(from: string): string | undefined {
  let at = from;
  for (;;) {
    if (readKind(at === "/" ? "/.git" : `${at}/.git`) !== undefined) return at;
    const up = dirname(at);
    if (up === at) return undefined;
    at = up;
  }
}

/**
 * The git folder a `.git` folder or gitfile (`gitdir: …`) stands for;
 * `"bad"` if the gitfile is no regular file (a FIFO, say) or too large.
 */
function resolveGitDir(dotGit: string): string | "bad" | undefined {
  const kind = readKind(dotGit);
  if (kind === "dir") return dotGit;
  if (kind !== "file") return undefined;
  const r = readGitFile(dotGit, SMALL_CAP);
  if (r === "missing") return undefined;
  if (r === "bad") return "bad";
  const m = /^gitdir:\s*(.+?)\s*$/m.exec(r.bytes.toString("utf8", 0, 4096));
  return m === null ? undefined : resolve(dirname(dotGit), m[1]!);
}

/**
 * The repository's config text (its own, then the common folder's for a
 * linked work tree); `undefined` if one is not a regular file.
 */
function readGitConfig(gitDir: string): string | undefined {
  const own = readGitText(`${gitDir}/config`);
  const common = readGitText(`${gitDir}/commondir`);
  if (own === undefined || common === undefined) return undefined;
  if (common.trim() === "") return own;
  const shared = readGitText(`${resolve(gitDir, common.trim())}/config`);
  return shared === undefined ? undefined : `${own}\n${shared}`;
}

/** `core.hooksPath` of a config text (the last one wins, as in git). */
function readHooksPath(config: string): string | undefined {
  let section = "";
  let found: string | undefined;
  for (const raw of config.split("\n")) {
    const line = raw.trim();
    const head = /^\[\s*([A-Za-z0-9.-]+)(?:\s+"[^"]*")?\s*\]/.exec(line);
    if (head !== null) section = head[1]!.toLowerCase();
    const body = head === null ? line : line.slice(head[0].length).trim();
    const kv = /^hookspath\s*=\s*(.*)$/i.exec(body);
    if (section === "core" && kv !== null) found = kv[1]!.replace(/^"(.*)"$/, "$1").trim();
  }
  return found === "" ? undefined : found;
}

/**
 * Paths of the gitlinks (submodules) in the git folder's index, with the
 * shared index of a split index; `[]` if there is no index, `undefined` if
 * it cannot be read as git writes it.
 */
function readGitlinks(gitDir: string, hashBytes: number): string[] | undefined {
  const index = readGitFile(`${gitDir}/index`, INDEX_CAP);
  if (index === "missing") return [];
  if (index === "bad") return undefined;
  const main = parseIndex(index.bytes, hashBytes);
  if (main === undefined) return undefined;
  if (main.shared === undefined) return main.links;
  const shared = readGitFile(`${gitDir}/sharedindex.${main.shared}`, INDEX_CAP);
  if (shared === "missing" || shared === "bad") return undefined;
  const base = parseIndex(shared.bytes, hashBytes);
  return base === undefined ? undefined : [...main.links, ...base.links];
}

/** Gitlink paths of one index file (format versions 2–4), and its shared index, if split. */
function parseIndex(
  buf: Buffer,
  hashBytes: number,
): { links: string[]; shared: string | undefined } | undefined {
  if (buf.length < 12 || buf.toString("latin1", 0, 4) !== "DIRC") return undefined;
  const version = buf.readUInt32BE(4);
  if (version < 2 || version > 4) return undefined;
  const count = buf.readUInt32BE(8);
  const end = buf.length - hashBytes;
  const links: string[] = [];
  let at = 12;
  let previous: Buffer = Buffer.alloc(0);
  for (let i = 0; i < count; i++) {
    const start = at;
    if (at + 40 + hashBytes + 2 > end) return undefined;
    const mode = buf.readUInt32BE(at + 24);
    at += 40 + hashBytes;
    const flags = buf.readUInt16BE(at);
    at += 2;
    if (flags & 0x4000) {
      if (version < 3) return undefined;
      at += 2;
    }
    let name: Buffer;
    if (version === 4) {
      // Prefix compression: drop N bytes of the previous path, add a suffix.
      let drop = 0;
      let byte: number;
      let first = true;
      do {
        if (at >= end) return undefined;
        byte = buf[at++]!;
        drop = first ? byte & 0x7f : ((drop + 1) << 7) | (byte & 0x7f);
        first = false;
      } while (byte & 0x80);
      const nul = buf.indexOf(0, at);
      if (nul < 0 || nul >= end || drop > previous.length) return undefined;
      name = Buffer.concat([previous.subarray(0, previous.length - drop), buf.subarray(at, nul)]);
      at = nul + 1;
    } else {
      const nul = buf.indexOf(0, at);
      if (nul < 0 || nul >= end) return undefined;
      name = buf.subarray(at, nul);
      // Entries are padded with 1–8 NULs to a multiple of 8 bytes.
      at = start + Math.ceil((nul + 1 - start) / 8) * 8;
    }
    previous = name;
    if ((mode & 0o170000) === 0o160000) links.push(name.toString("utf8"));
  }
  let shared: string | undefined;
  while (at + 8 <= end) {
    const sig = buf.toString("latin1", at, at + 4);
    const size = buf.readUInt32BE(at + 4);
    if (at + 8 + size > end) return undefined;
    if (sig === "link" && size >= hashBytes) {
      const hex = buf.toString("hex", at + 8, at + 8 + hashBytes);
      if (!/^0+$/.test(hex)) shared = hex;
    }
    at += 8 + size;
  }
  return { links, shared };
}
