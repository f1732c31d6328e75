/**
 * Unified diffs of an edit, in bounded time.
 *
 * jsdiff's Myers diff is O((N + M) · D) in time and keeps every path it
 * explored: a 16k-line replacement held the host's event loop for 32 s. Here
 * it gets a hard edit-length and time bound; when it gives up, the diff is
 * one hunk that replaces everything between the common leading and trailing
 * lines (linear time and space). Both are valid unified diffs of the same
 * change: the fallback is only less minimal.
 */
import { createTwoFilesPatch, FILE_HEADERS_ONLY, formatPatch } from "diff";

/** Context lines around a change, as `diff -u`. */
const CONTEXT = 3;
/** Most edits (added plus removed lines) jsdiff may look for. */
const MAX_EDIT_LENGTH = 2000;
/** Time jsdiff may take before the single-hunk fallback is used, in ms. */
const DIFF_TIMEOUT_MS = 20;
const NO_NEWLINE = "\\ No newline at end of file";

/**
 * The unified diff (file headers only, 3 lines of context) that turns
 * `before` into `after`, both named `name`. Bounded work: at most about
 * {@link DIFF_TIMEOUT_MS} ms of searching, then linear.
 */
export function diffTexts(name: string, before: string, after: string): string {
  const fine = createTwoFilesPatch(name, name, before, after, undefined, undefined, {
    context: CONTEXT,
    headerOptions: FILE_HEADERS_ONLY,
    maxEditLength: MAX_EDIT_LENGTH,
    timeout: DIFF_TIMEOUT_MS,
  });
  return fine ?? replaceMiddle(name, before, after);
}

/** Lines with their endings (`\n`, or none for a last line without one). */
function splitLines(text: string): string[] {
  return text.match(/[^\n]*\n|[^\n]+$/g) ?? [];
}

/**
 * One hunk replacing every line between the common prefix and the common
 * suffix. Only called when the texts differ.
 */
export function replaceMiddle(name: string, before: string, after: string): string {
  const a = splitLines(before);
  const b = splitLines(after);
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (
    tail < a.length - head &&
    tail < b.length - head &&
    a[a.length - 1 - tail] === b[b.length - 1 - tail]
  )
    tail++;
  const from = Math.max(0, head - CONTEXT);
  const trailing = Math.min(tail, CONTEXT);
  const lines: string[] = [];
  const push = (mark: string, line: string): void => {
    if (line.endsWith("\n")) lines.push(mark + line.slice(0, -1));
    else lines.push(mark + line, NO_NEWLINE);
  };
  for (let i = from; i < head; i++) push(" ", a[i]!);
  for (let i = head; i < a.length - tail; i++) push("-", a[i]!);
  for (let i = head; i < b.length - tail; i++) push("+", b[i]!);
  for (let i = a.length - tail; i < a.length - tail + trailing; i++) push(" ", a[i]!);
  const context = head - from + trailing;
  const oldLines = a.length - tail - head + context;
  const newLines = b.length - tail - head + context;
  return formatPatch(
    {
      oldFileName: name,
      newFileName: name,
      oldHeader: undefined,
      newHeader: undefined,
      hunks: [{ oldStart: from + 1, oldLines, newStart: from + 1, newLines, lines }],
    },
    FILE_HEADERS_ONLY,
  );
}
