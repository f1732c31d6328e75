/**
 * Secrets under a shell command (DESIGN §10): a bind shows a whole host
 * folder, so the files and folders in it whose names match the sandbox's
 * `secrets` list are covered for the command — a file by `/dev/null`
 * (read-only: it reads as empty), a folder by an empty read-only tmpfs.
 * Each is a mount point in the command's namespace, so the command cannot
 * rename, remove or hard-link it either (`EBUSY`, `EXDEV`).
 *
 * Finding them means walking every folder the command sees, before each
 * command: breadth first, without following links (a link's target is
 * shown, or not, under its own name), skipping `node_modules` and `.git`
 * (installed packages and git's own files: walking them on every command
 * would cost seconds; see docs/shell.md), at most
 * {@link MAX_SECRET_WALK_ENTRIES} entries. A folder's listing is kept
 * between commands while its device, inode, change and modification times
 * stay the same (and it was not changed in the last seconds: a file
 * system's clock is coarse), so an unchanged tree costs one `lstat` per
 * folder.
 *
 * What the walk saw can change before the mounts are made (another
 * command moves a folder holding a secret where the walk had already
 * been): once bubblewrap has made the mounts and before the command
 * starts, the walk is made again, and a secret the masks do not cover
 * stops the command (see `launch.ts`). A secret made after that is the
 * command's own doing, or too late to hide.
 */
import { type BigIntStats, type Dirent, lstatSync, readdirSync } from "node:fs";
import { IoError } from "../errors/index.js";
import { startPace, yieldIfDue } from "../sandbox/pace.js";
import type { Policy } from "../sandbox/policy.js";
import { joinVirtual } from "../sandbox/virtual-path.js";
import type { BindPlan, BindStep } from "./bind-plan.js";
import { isPlaceholder } from "./guard-settle.js";
import { findEnclosingStep, sortStepsShallowFirst, splitBelow } from "./plan-steps.js";

/** Most folder entries one walk looks at (cached ones included). */
export const MAX_SECRET_WALK_ENTRIES = 200_000;
/** Folder names the walk does not enter. */
export const SECRET_WALK_SKIPS: ReadonlySet<string> = new Set(["node_modules", ".git"]);
/** A folder changed this recently is listed again next time (coarse file system clocks). */
const SETTLE_MS = 2_000;
/** Most folders whose listings are kept. */
const MAX_CACHED = 100_000;

/** What a secret place is: a folder gets a tmpfs, anything else `/dev/null`. */
export type SecretKind = "dir" | "file";

/** One folder's listing, with the identity it was read at. */
interface Listing {
  dev: bigint;
  ino: bigint;
  mtimeNs: bigint;
  ctimeNs: bigint;
  /** Each entry's name and kind (a link is never entered nor masked). */
  entries: { name: string; kind: SecretKind | "link" }[];
}

const listings = new Map<string, Listing>();

/**
 * Secrets the walks have found, by host path, with their inode. Each is a
 * mount point for the command that sees it, so it cannot be moved, but a
 * folder above it can: `mv config deep/node_modules` carries `config/.env`
 * into a folder the walk skips, and the next command would read it there.
 * So a walk first checks that each secret found before is still where it
 * was; if one is not, that walk enters `node_modules` and `.git` too (once:
 * it finds the secret's new place by its inode), and every later walk
 * enters the skipped folders only on the way to a secret it knows of.
 * Kept in this process only: a secret moved there under an earlier
 * process is not found (docs/shell.md).
 */
const knownSecrets = new Map<string, bigint>();
/** Most secrets remembered (a bound on memory; past it, new ones are not). */
const MAX_KNOWN = 20_000;

/**
 * The secret places a command would see through `plan`, by virtual path.
 * Places where the plan already has a step (a mask, a bind) are left to
 * that step, except a guard (a protected name such as `.npmrc` held
 * read-only, see `protected-entries.ts`) on a secret that is there: unless
 * `recheck`, it is listed, to be masked instead (a placeholder mountbox
 * made for another command is left to its guard: it is empty, and that
 * command removes it when the last user is done).
 * @throws IoError when the folders hold more entries than one walk may look at
 */
export async function findSecretPlaces(
  policy: Policy,
  plan: BindPlan,
  recheck = false,
): Promise<Map<string, SecretKind>> {
  const found = new Map<string, SecretKind>();
  const secrets = policy.secrets;
  if (secrets.entries.length === 0) return found;
  const planned = new Map(plan.steps.map((s) => [s.virtual, s]));
  const roots = plan.steps.filter((s) => s.kind === "bind" && !s.file && s.pillar !== true);
  const pace = startPace();
  const moved = checkKnownMoved();
  let budget = MAX_SECRET_WALK_ENTRIES;
  // `narrow`: inside a skipped folder, entered only on the way to a known secret.
  const queue: { host: string; virtual: string; narrow: boolean }[] = roots.map((s) => ({
    host: s.host,
    virtual: s.virtual,
    narrow: false,
  }));
  while (queue.length > 0) {
    await yieldIfDue(pace);
    const { host, virtual, narrow } = queue.shift()!;
    const listing = listFolder(host);
    if (listing === undefined) continue; // gone or unreadable: nothing to show either
    budget -= listing.entries.length;
    if (budget < 0) throw tooManyEntries(virtual);
    for (const e of listing.entries) {
      const v = joinVirtual(virtual, e.name);
      const here = host === "/" ? `/${e.name}` : `${host}/${e.name}`;
      const step = planned.get(v);
      // A placeholder this process made for another command (an empty
      // `.npmrc` held for it) holds nothing: no secret.
      const secret = e.kind !== "link" && secrets.matchesName(e.name) && !isPlaceholder(here);
      if (step !== undefined) {
        // Its own step (walked as a root if it is a bind); a guard on a
        // secret of the user's is masked instead.
        if (secret && step.placeholder === true && !recheck) found.set(v, e.kind as SecretKind);
        continue;
      }
      if (secret) {
        found.set(v, e.kind as SecretKind);
        // Inside a skipped folder, only the one that moved there is kept
        // track of (packages ship `*.pem` fixtures: remembering those
        // would make every walk enter node_modules).
        rememberSecret(here, narrow ? moved : undefined);
        continue;
      }
      if (e.kind !== "dir") continue;
      if (!narrow && !SECRET_WALK_SKIPS.has(e.name)) queue.push({ host: here, virtual: v, narrow });
      else if (moved.size > 0 || holdsKnown(here))
        queue.push({ host: here, virtual: v, narrow: true });
    }
  }
  return found;
}

/**
 * Adds a mask for each secret place to `plan` (with its mount point in the
 * bind that shows it), and drops what the plan would mount inside a masked
 * folder.
 */
export function addSecretMasks(plan: BindPlan, places: ReadonlyMap<string, SecretKind>): void {
  if (places.size === 0) return;
  const inside = (v: string): boolean => {
    for (let i = v.lastIndexOf("/"); i > 0; i = v.lastIndexOf("/", i - 1))
      if (places.get(v.slice(0, i)) === "dir") return true;
    return false;
  };
  plan.steps = plan.steps.filter((s) => !inside(s.virtual));
  plan.mountPoints = plan.mountPoints.filter((mp) => !inside(mp.virtual));
  for (const [virtual, kind] of places) {
    if (inside(virtual)) continue;
    const mask: BindStep = {
      kind: "mask",
      virtual,
      host: "",
      writable: false,
      file: kind === "file",
    };
    // A guard there (a protected name on a secret): the mask replaces it,
    // at the mount point the guard already has.
    const guard = plan.steps.findIndex((s) => s.virtual === virtual);
    if (guard >= 0) {
      plan.steps[guard] = mask;
      continue;
    }
    const above = findEnclosingStep(plan.steps, virtual);
    if (above?.kind !== "bind") continue; // inside a mask: hidden already
    plan.steps.push(mask);
    plan.mountPoints.push({
      base: above.host,
      rest: splitBelow(above, virtual),
      virtual,
      create: false,
    });
  }
  sortStepsShallowFirst(plan.steps);
}

/**
 * Walks again (see the module comment) and tells whether every secret the
 * command can see is masked: `true` if so.
 */
export async function checkSecretsMasked(
  policy: Policy,
  plan: BindPlan,
  masked: ReadonlyMap<string, SecretKind>,
): Promise<boolean> {
  try {
    const now = await findSecretPlaces(policy, plan, true);
    for (const v of now.keys()) if (!masked.has(v)) return false;
    return true;
  } catch {
    return false;
  }
}

/**
 * The inodes of secrets found before that are gone from their places
 * (moved with a folder above them, or removed): while there are any, the
 * walk enters skipped folders too. Forgets those that are gone.
 */
function checkKnownMoved(): Set<bigint> {
  const moved = new Set<bigint>();
  for (const [host, ino] of knownSecrets) {
    let now: bigint | undefined;
    try {
      now = lstatSync(host, { bigint: true }).ino;
    } catch {
      now = undefined;
    }
    if (now !== ino) {
      moved.add(ino);
      knownSecrets.delete(host);
    }
  }
  return moved;
}

/**
 * Remembers a secret found at `host` (see {@link knownSecrets}); with
 * `only`, only if it is one of those inodes (a secret that moved).
 */
function rememberSecret(host: string, only?: ReadonlySet<bigint>): void {
  if (knownSecrets.size >= MAX_KNOWN || only?.size === 0) return;
  try {
    const ino = lstatSync(host, { bigint: true }).ino;
    if (only === undefined || only.has(ino)) knownSecrets.set(host, ino);
  } catch {
    // gone already: the next walk finds it where it went, or nowhere
  }
}

/** True if a known secret lies below the (skipped) folder `host`. */
function holdsKnown(host: string): boolean {
  const prefix = `${host}/`;
  for (const k of knownSecrets.keys()) if (k.startsWith(prefix)) return true;
  return false;
}

/** The listing of the folder at `host` (cached while unchanged), or undefined. */
function listFolder(host: string): Listing | undefined {
  let st: BigIntStats;
  try {
    st = lstatSync(host, { bigint: true });
  } catch {
    return undefined;
  }
  if (!st.isDirectory()) return undefined;
  const known = listings.get(host);
  if (
    known !== undefined &&
    known.dev === st.dev &&
    known.ino === st.ino &&
    known.mtimeNs === st.mtimeNs &&
    known.ctimeNs === st.ctimeNs
  )
    return known;
  let names: Dirent[];
  try {
    names = readdirSync(host, { withFileTypes: true });
  } catch {
    return undefined;
  }
  const listing: Listing = {
    dev: st.dev,
    ino: st.ino,
    mtimeNs: st.mtimeNs,
    ctimeNs: st.ctimeNs,
    entries: names.map((d) => ({
      name: d.name,
      kind: d.isSymbolicLink() ? "link" : d.isDirectory() ? "dir" : "file",
    })),
  };
  const changed = Number((st.mtimeNs > st.ctimeNs ? st.mtimeNs : st.ctimeNs) / 1_000_000n);
  if (Date.now() - changed > SETTLE_MS) {
    if (listings.size >= MAX_CACHED) listings.clear();
    listings.set(host, listing);
  } else listings.delete(host);
  return listing;
}

function tooManyEntries(virtual: string): IoError {
  return new IoError(
    `Cannot run the command: the folders it would see hold more than ${MAX_SECRET_WALK_ENTRIES} entries (outside node_modules and .git), too many to look for secrets in before each command (reached at '${virtual}'). The command was not run. Run it in a narrower sandbox (derive or restrict one to the folders it needs), or, if nothing there is secret, set the sandbox's 'secrets' list to [].`,
    virtual,
  );
}
