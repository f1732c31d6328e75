/**
 * editFile: exact-text edits applied with a read-modify-rename that loses
 * nothing (issue 26).
 *
 * - Edits, writes, moves and removes of one file are ordered by the host's
 *   per-file lock (file-lock.ts): in one host process an edit always reads
 *   the file as the previous change left it.
 * - A change from outside the process (a shell command, another program)
 *   between the read and the rename is seen: just before the rename the file
 *   must still be the one read, unchanged (device, inode, size, and
 *   timestamps to the nanosecond). If it is not, the file is read again and
 *   the edits applied again; after {@link EDIT_ATTEMPTS} tries, or when the
 *   edits no longer apply to the new text, the edit is refused with
 *   `edit_failed` saying the file changed. Nothing is written then.
 */
import {
  EditFailedError,
  editFailed,
  editFileChanged,
  editTooMuchWork,
  ioError,
} from "../errors/index.js";
import { withFileLocks } from "./file-lock.js";
import { type FileIdentity, readVerified } from "./io-read.js";
import { FileChangedError, writeAtomic } from "./io-write.js";
import type { Policy } from "./policy.js";
import { refuseTempName } from "./temp-names.js";
import { diffTexts } from "./unified-diff.js";

// ignoreBOM: a byte-order mark stays part of the text, so the edited file
// keeps it (decoding it away wrote the file back without it).
const decoder = new TextDecoder("utf-8", { ignoreBOM: true });

/** Reads of a changing file before an edit gives up. */
export const EDIT_ATTEMPTS = 3;

/**
 * Most work one editFile call may do, in characters scanned: each edit scans
 * (and rebuilds) the whole text as it stands, about 1 ns per character on a
 * 2-core machine, so this keeps the edits to ~10-15 ms of the host's event
 * loop, leaving room for the diff after them (bounded on its own, ~20-30 ms
 * on a large file) under the ~50 ms a request may hold it.
 */
export const EDIT_WORK_BUDGET = 10_000_000;

type Edit = { oldText: string; newText: string };

/**
 * Applies exact-text edits in order. Each `oldText` must occur exactly once
 * in the text as it stands after the previous edits. Nothing is written
 * unless every edit applies; `dryRun` only returns the diff. The work is
 * bounded by {@link EDIT_WORK_BUDGET}: more edits × characters are refused
 * (before any is applied) with a message saying how to split them. See the
 * module comment for what happens when the file changes meanwhile.
 */
export async function editFile(
  policy: Policy,
  path: string,
  edits: Edit[],
  dryRun: boolean,
): Promise<{ diff: string }> {
  const r = policy.resolve(path, "write");
  if (!Array.isArray(edits) || edits.length === 0) {
    throw ioError("edit", r.virtual, "edits must be a non-empty array of { oldText, newText }");
  }
  refuseTempName(r.virtual);
  return withFileLocks([r.real], async () => {
    for (let attempt = 1; ; attempt++) {
      const { bytes, identity } = await readVerified(policy, path);
      const before = decoder.decode(bytes);
      const after = applyEdits(r.virtual, before, edits);
      if (after instanceof EditFailedError) {
        // The text the edits were written for is gone because someone else
        // changed the file under this edit: say so.
        throw attempt > 1 ? editFileChanged(r.virtual, after.message) : after;
      }
      const diff = diffTexts(r.virtual, before, after);
      if (dryRun) return { diff };
      if (await writeIfUnchanged(policy, r.virtual, r.real, after, identity)) return { diff };
      if (attempt >= EDIT_ATTEMPTS) throw editFileChanged(r.virtual, undefined, attempt);
    }
  });
}

/** Writes `after` unless the file is no longer the one read; false if it was not written. */
async function writeIfUnchanged(
  policy: Policy,
  v: string,
  real: string,
  after: string,
  read: FileIdentity,
): Promise<boolean> {
  try {
    await writeAtomic(policy, v, real, Buffer.from(after, "utf8"), read);
    return true;
  } catch (err) {
    if (err instanceof FileChangedError) return false;
    throw err;
  }
}

/**
 * The text after every edit, in order, or the `edit_failed` error of the
 * first edit whose text is not found exactly once; throws the work refusal
 * and malformed edits.
 */
function applyEdits(v: string, before: string, edits: Edit[]): string | EditFailedError {
  const refuse = (chars: number) =>
    editTooMuchWork(
      v,
      edits.length,
      chars,
      EDIT_WORK_BUDGET,
      Math.floor(EDIT_WORK_BUDGET / Math.max(chars, 1)),
    );
  // Up front on the text as read; then as the text grows with the edits.
  if (edits.length * Math.max(before.length, 1) > EDIT_WORK_BUDGET) throw refuse(before.length);
  let after = before;
  let work = 0;
  for (const [i, e] of edits.entries()) {
    if (typeof e?.oldText !== "string" || typeof e?.newText !== "string") {
      throw ioError("edit", v, `edit #${i + 1} needs string oldText and newText`);
    }
    if (e.oldText === "") throw editFailed(v, i, e.oldText, 2);
    work += Math.max(after.length, 1);
    if (work > EDIT_WORK_BUDGET) throw refuse(after.length);
    const first = after.indexOf(e.oldText);
    if (first < 0) return editFailed(v, i, e.oldText, 0);
    if (after.indexOf(e.oldText, first + 1) >= 0) {
      return editFailed(v, i, e.oldText, countOccurrences(after, e.oldText, first));
    }
    after = after.slice(0, first) + e.newText + after.slice(first + e.oldText.length);
  }
  return after;
}

function countOccurrences(text: string, needle: string, first: number): number {
  let count = 0;
  for (let i = first; i >= 0; i = text.indexOf(needle, i + 1)) count++;
  return count;
}
