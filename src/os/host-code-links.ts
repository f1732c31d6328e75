/**
 * Hard links to the host's code (issue 18, second review): a package
 * manager that hard-links installed files to a shared store (pnpm's default
 * on one file system, `cp -al`, hard-linking installers) makes the host's
 * `node_modules/x/dist/worker.js` and a file in some other project the same
 * inode. A confined command that appends to that other project's copy, in a
 * folder it may write, changes what the host runs next. Writes in-process
 * and through the port are safe: they write a temporary file and rename it,
 * which breaks the link. A command cannot make new links to host code it
 * sees read-only (a link across mounts fails with EXDEV), so the danger is
 * links that exist already.
 *
 * Finding them all would mean walking every writable folder; instead the
 * host's own code is walked once per process (the real folders on its
 * resolution chain, within a budget), and every file with more than one
 * link whose links are not all accounted for (its own places in the host's
 * code, and the pnpm store's copy, which is host code too) marks its file
 * system. A command whose writable binds reach such a file system (the
 * bind's own, or one mounted below it) is refused unless the caller opts out.
 */
import { createHash } from "node:crypto";
import { lstatSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { OsSandboxUnavailableError } from "../errors/index.js";
import { findHostCode, PACKAGE_STORE } from "../sandbox/host-code.js";
import { isWithin } from "../sandbox/virtual-path.js";
import type { BindPlan } from "./bind-plan.js";

/** Most entries walked per process; past it every host code file system is suspect. */
const MAX_ENTRIES = 400_000;

interface Linked {
  /** `dev:ino`. */
  key: string;
  nlink: number;
  dev: number;
  /** Distinct places found in the host's code. */
  paths: Set<string>;
  /** One of them, to hash for the store lookup. */
  sample: string;
  /** The link count and number of places the last verdict was made with. */
  checked?: { nlink: number; places: number; ok: boolean };
}

interface Index {
  /** Folders walked (by real path) and directories seen (`dev:ino`). */
  walked: Set<string>;
  dirs: Set<string>;
  linked: Map<string, Linked>;
  /** Devices of every folder walked: all suspect if the budget ran out. */
  devices: Set<number>;
  entries: number;
  overBudget: boolean;
  /** pnpm stores named by the host's `node_modules/.modules.yaml`. */
  stores: Set<string>;
}

let index: Index | undefined;

/**
 * The devices on which a file of the host's code may have a link outside
 * the host's code. Walks what has not been walked yet (the first call does
 * the work; later ones only what the host loaded since).
 */
export function findLinkedHostDevices(): Set<number> {
  index ??= {
    walked: new Set(),
    dirs: new Set(),
    linked: new Map(),
    devices: new Set(),
    entries: 0,
    overBudget: false,
    stores: new Set(),
  };
  const ix = index;
  const code = findHostCode();
  const folders = code.filter((c) => c.folder).map((c) => c.host);
  const storeFolders = new Set(code.filter((c) => c.what === PACKAGE_STORE).map((c) => c.host));
  for (const f of folders) {
    if (ix.walked.has(f)) continue;
    ix.walked.add(f);
    // The store is not walked (shared, perhaps huge): only looked up by hash.
    if (storeFolders.has(f)) ix.stores.add(f);
    else walk(ix, f);
  }
  for (const c of code) {
    if (c.folder || ix.walked.has(c.host) || folders.some((f) => isWithin(c.host, f))) continue;
    ix.walked.add(c.host);
    noteFile(ix, c.host);
  }
  const out = new Set<number>();
  if (ix.overBudget) for (const d of ix.devices) out.add(d);
  // One unaccounted link marks its device: the others there need no look
  // (thousands of lstats per command when a whole store is hard-linked).
  for (const l of ix.linked.values()) if (!out.has(l.dev) && !checkLinks(ix, l)) out.add(l.dev);
  return out;
}

/**
 * {@link accountedFor}, remembered while the file's link count and the
 * places found stay the same (another project installing from the same
 * store later raises the count: re-checked on every command, one `lstat`).
 */
function checkLinks(ix: Index, l: Linked): boolean {
  const s = lstatSync(l.sample, { throwIfNoEntry: false });
  // Gone or replaced (a reinstall): what it links to is no longer known.
  const nlink = s && `${s.dev}:${s.ino}` === l.key ? s.nlink : Number.POSITIVE_INFINITY;
  const c = l.checked;
  if (c && c.nlink === nlink && c.places === l.paths.size) return c.ok;
  l.nlink = nlink;
  const ok = Number.isFinite(nlink) && accountedFor(ix, l);
  l.checked = { nlink, places: l.paths.size, ok };
  return ok;
}

/** True when every link of `l` is a place of the host's code. */
function accountedFor(ix: Index, l: Linked): boolean {
  let known = l.paths.size;
  if (known >= l.nlink) return true;
  if (known + 1 === l.nlink && ix.stores.size > 0) {
    // The store's copy (pnpm names it by the sha512 of the content).
    let hex: string;
    try {
      hex = createHash("sha512").update(readFileSync(l.sample)).digest("hex");
    } catch {
      return false;
    }
    const self = lstatSync(l.sample, { throwIfNoEntry: false });
    for (const store of ix.stores) {
      for (const name of [hex.slice(2), `${hex.slice(2)}-exec`]) {
        const s = lstatSync(join(store, "files", hex.slice(0, 2), name), { throwIfNoEntry: false });
        if (s && self && s.dev === self.dev && s.ino === self.ino) known++;
      }
    }
  }
  return known >= l.nlink;
}

function noteFile(ix: Index, p: string, given?: import("node:fs").Stats): void {
  const s = given ?? lstatSync(p, { throwIfNoEntry: false });
  if (!s?.isFile() || s.nlink < 2) return;
  const key = `${s.dev}:${s.ino}`;
  let l = ix.linked.get(key);
  if (!l) {
    l = { key, nlink: s.nlink, dev: s.dev, paths: new Set(), sample: p };
    ix.linked.set(key, l);
  }
  l.paths.add(p);
}

/** Walks `root` without following links; a directory seen twice (a bind-mount alias) once. */
function walk(ix: Index, root: string): void {
  const stack = [root];
  while (stack.length > 0) {
    const dir = stack.pop()!;
    let st: import("node:fs").Stats | undefined;
    try {
      st = lstatSync(dir, { throwIfNoEntry: false });
    } catch {
      continue;
    }
    if (!st?.isDirectory()) {
      if (st && dir === root) noteFile(ix, dir, st);
      continue;
    }
    const key = `${st.dev}:${st.ino}`;
    if (ix.dirs.has(key)) continue;
    ix.dirs.add(key);
    ix.devices.add(st.dev);
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      continue;
    }
    for (const name of names) {
      if (++ix.entries > MAX_ENTRIES) {
        ix.overBudget = true;
        return;
      }
      const p = join(dir, name);
      let s: import("node:fs").Stats | undefined;
      try {
        s = lstatSync(p, { throwIfNoEntry: false });
      } catch {
        continue;
      }
      if (s?.isDirectory()) stack.push(p);
      else if (s) noteFile(ix, p, s);
    }
  }
}

/**
 * The devices a writable bind of `host` reaches: its own and those of the
 * mounts below it (a recursive bind carries them along).
 */
export function devicesUnder(host: string, mountPoints: readonly string[]): Set<number> {
  const out = new Set<number>();
  const own = statSync(host, { throwIfNoEntry: false });
  if (own) out.add(own.dev);
  for (const mp of mountPoints) {
    if (mp === host || !isWithin(mp, host)) continue;
    const s = statSync(mp, { throwIfNoEntry: false });
    if (s) out.add(s.dev);
  }
  return out;
}

/** This process's mount points, from `/proc/self/mountinfo` (octal escapes decoded). */
export function readMountPoints(): string[] {
  let text: string;
  try {
    text = readFileSync("/proc/self/mountinfo", "utf8");
  } catch {
    return [];
  }
  const out: string[] = [];
  for (const line of text.split("\n")) {
    const field = line.split(" ")[4];
    if (field)
      out.push(
        field.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8))),
      );
  }
  return out;
}

/**
 * The first writable bind that reaches a file system where the host's code
 * has links outside it, or undefined.
 */
export function findLinkedWritable(writable: readonly string[]): string | undefined {
  if (writable.length === 0) return undefined;
  const suspect = findLinkedHostDevices();
  if (suspect.size === 0) return undefined;
  const mounts = readMountPoints();
  for (const w of writable) {
    for (const d of devicesUnder(w, mounts)) if (suspect.has(d)) return w;
  }
  return undefined;
}

/**
 * Refuses a command whose writable binds reach a file system where the
 * host's code has hard links the host does not know of.
 * @throws OsSandboxUnavailableError naming the writable area (virtual path)
 */
export function refuseLinkedHostCode(plan: BindPlan): void {
  const steps = plan.steps.filter((s) => s.kind === "bind" && s.writable);
  const hit = findLinkedWritable(steps.map((s) => s.host));
  if (hit === undefined) return;
  const v = steps.find((s) => s.host === hit)?.virtual ?? "/";
  throw new OsSandboxUnavailableError(
    `Cannot run the command: files of the host's own code are hard-linked to places the host does not know of (a package store shared with another project, as pnpm does by default, or a copy made with hard links), on the same file system as the writable folder '${v}'. A command could change such a file in place through a link there, and with it what the host runs. The command was not run. Install the host's packages by copy (pnpm: 'package-import-method=copy' in .npmrc, or a store of its own), keep writable folders on another file system, or, if no writable folder can hold such a link, pass allowHardLinkedHostCode: true.`,
  );
}
