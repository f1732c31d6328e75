/**
 * Repositories a command made or changed below the top of a writable bind
 * (issue 19, review finding B). Git run inside such a folder runs what its
 * config and hooks say — and so does git at the top once the host commits
 * it: `git add -A` records a nested repository as a gitlink, and the next
 * `git status` at the top recurses into it and runs its `core.fsmonitor`.
 *
 * mountbox cannot stop a command from making one (a name at any depth
 * cannot be held by a bind), and it does not remove or rewrite one: a
 * repository an agent cloned or scaffolded is often wanted work. It looks
 * after each command and says so in the result's `notes`, so the host (and
 * the model) knows before committing.
 *
 * The look is a walk of the writable folder binds, breadth first (shallow
 * places first), asynchronous (never blocking the host), bounded by
 * {@link MAX_ENTRIES} directory entries per command (about 0.1 s per 1 000
 * folders walked on a busy 2-core machine); it does not descend
 * into `.git` folders, `node_modules` or guarded places. A `.git` counts as made or changed
 * by the command when its own change time, or that of its `config` or
 * `hooks`, is not older than the command's start (a change time cannot be
 * set back by a command: `touch -d` sets it to now). Virtual paths only.
 */
import { type Dir, type Dirent, lstatSync, opendirSync } from "node:fs";
import { startPace, yieldIfDue } from "../sandbox/pace.js";
import type { BindPlan } from "./bind-plan.js";

/** How many directory entries one command's look reads at most. */
export const MAX_ENTRIES = 20_000;
/** Change times this close before the start still count (file times use a coarse clock). */
const CLOCK_SLACK_MS = 2_000;
/** How many repositories a note names at most. */
const MAX_NAMED = 10;

/** What the look found. */
export interface NestedRepos {
  /** Virtual paths of folders holding a `.git` made or changed since the start. */
  found: string[];
  /** True if the entry budget ran out before every folder was looked at. */
  incomplete: boolean;
}

/**
 * Looks for `.git` entries below the top of the plan's writable folder
 * binds made or changed since `startMs` (the time the command was started).
 */
export async function findNestedRepos(plan: BindPlan, startMs: number): Promise<NestedRepos> {
  const since = startMs - CLOCK_SLACK_MS;
  const skip = new Set(
    plan.steps.filter((s) => s.kind === "bind" && !s.writable).map((s) => s.host),
  );
  const roots = plan.steps.filter(
    (s) => s.kind === "bind" && s.writable && !s.file && s.pillar !== true,
  );
  const out: NestedRepos = { found: [], incomplete: false };
  const queue: { host: string; virtual: string; depth: number }[] = [];
  const walked = new Set<string>();
  for (const r of roots) {
    if (walked.has(r.host)) continue;
    walked.add(r.host);
    queue.push({ host: r.host, virtual: r.virtual, depth: 0 });
  }
  let budget = MAX_ENTRIES;
  // Synchronous calls in slices of a few ms: one thread-pool round trip per
  // folder cost more than the look itself (issue 25).
  const pace = startPace();
  while (queue.length > 0) {
    await yieldIfDue(pace);
    const at = queue.shift()!;
    let dir: Dir;
    try {
      dir = opendirSync(at.host);
    } catch {
      // removed meanwhile, or unreadable: nothing more to see there
      continue;
    }
    try {
      // Entry by entry, within the budget and paced: a folder a command
      // filled with millions of entries must not stall the host (review).
      for (let e: Dirent | null = readQuietly(dir); e !== null; e = readQuietly(dir)) {
        if (--budget < 0) {
          out.incomplete = true;
          return out;
        }
        if (budget % 256 === 0) await yieldIfDue(pace);
        const host = at.host === "/" ? `/${e.name}` : `${at.host}/${e.name}`;
        if (e.name === ".git") {
          if (at.depth > 0 && !skip.has(host) && isChangedSince(host, since))
            out.found.push(at.virtual);
          continue;
        }
        // Installed packages are not the project's work (and git ignores them
        // where they are ignored): walking them would spend the budget on
        // every command in a workspace with dependencies.
        if (e.name === "node_modules") continue;
        if (e.isDirectory() && !skip.has(host) && !walked.has(host)) {
          const virtual = at.virtual === "/" ? `/${e.name}` : `${at.virtual}/${e.name}`;
          queue.push({ host, virtual, depth: at.depth + 1 });
        }
      }
    } finally {
      dir.closeSync();
    }
  }
  return out;
}

/** The folder's next entry, or null at its end or when it cannot be read further. */
function readQuietly(dir: Dir): Dirent | null {
  try {
    return dir.readSync();
  } catch {
    return null;
  }
}

function isChangedSince(dotGit: string, since: number): boolean {
  for (const p of [dotGit, `${dotGit}/config`, `${dotGit}/hooks`]) {
    // absent (a gitfile has neither): undefined
    const st = lstatSync(p, { throwIfNoEntry: false });
    if (st !== undefined && st.ctimeMs >= since) return true;
  }
  return false;
}

/** The note for a result, or `undefined` if there is nothing to say. */
export function describeNestedRepos(r: NestedRepos): string | undefined {
  const parts: string[] = [];
  if (r.found.length > 0) {
    const named = r.found.slice(0, MAX_NAMED).map((v) => `'${v}'`);
    const more = r.found.length > MAX_NAMED ? ` and ${r.found.length - MAX_NAMED} more` : "";
    parts.push(
      `The command made or changed a git repository below the top of a writable folder: ${named.join(", ")}${more}. Git run there runs what its config and hooks say, as the host user — and so does git at the top once it is committed there (\`git add -A\` records it as a submodule). Before committing what the command left, check it (\`git diff --cached --raw\` shows it with mode 160000) and run git with \`-c core.fsmonitor=false -c core.hooksPath=/dev/null -c submodule.recurse=false\`, or remove the folder's .git if it is not wanted.`,
    );
  }
  if (r.incomplete)
    parts.push(
      `The check for git repositories made by the command stopped after ${MAX_ENTRIES} folder entries; folders beyond them were not looked at.`,
    );
  return parts.length === 0 ? undefined : parts.join(" ");
}
