/**
 * Per-file ordering of the operations that change a file (issue 26).
 *
 * Every agent's writes are served in the host process (agents' threads and
 * the AI SDK's parallel tool calls all end up here), so an in-process async
 * lock keyed by the file's real host path orders them: an edit's
 * read-modify-rename cannot interleave with another edit, write, move or
 * remove of the same file. The key is the real path, not the inode: an
 * atomic write replaces the inode every time, and a file that does not exist
 * yet has none. Changes from outside the process (a shell command, another
 * host) are not ordered by this lock; `editFile` detects them instead.
 */

/** The last holder (or waiter) of each locked key; absent when free. */
const tails = new Map<string, Promise<void>>();

/**
 * Runs `work` holding the locks of `keys` (real host paths), taken in sorted
 * order so two callers that share keys can never deadlock. A caller that
 * holds a key must not ask for it again: the lock is not re-entrant.
 */
export async function withFileLocks<T>(
  keys: readonly (string | undefined)[],
  work: () => Promise<T>,
): Promise<T> {
  const sorted = [...new Set(keys.filter((k): k is string => k !== undefined))].sort();
  const releases: (() => void)[] = [];
  try {
    for (const key of sorted) releases.push(await acquire(key));
    return await work();
  } finally {
    for (const release of releases.reverse()) release();
  }
}

/** Queues for `key`; resolves with the release function once it is this caller's turn. */
function acquire(key: string): Promise<() => void> {
  const before = tails.get(key) ?? Promise.resolve();
  let release: () => void = () => {};
  const mine = new Promise<void>((resolve) => {
    release = resolve;
  });
  const tail = before.then(() => mine);
  tails.set(key, tail);
  return before.then(() => () => {
    release();
    // The last in line leaves no entry behind: the map stays as small as
    // the number of files being changed right now.
    if (tails.get(key) === tail) tails.delete(key);
  });
}

/** @internal How many files are locked or waited for (tests: nothing leaks). */
export function lockedFileCount(): number {
  return tails.size;
}
