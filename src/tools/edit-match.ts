/**
 * Tolerant matching for `edit_file`, as the MCP reference server does it:
 * exact text first, then with line endings normalised, then line by line
 * ignoring leading and trailing whitespace. Unlike the reference server, a
 * match found more than once is refused at every stage.
 *
 * The result is a list of *exact* edits on the file as it is (each `oldText`
 * occurring exactly once at its turn), so the sandbox can apply them with its
 * own verified write and diff: if the file changed since it was read, the
 * sandbox refuses instead of editing the wrong text.
 */
import { editFailed } from "../errors/index.js";
import type { FileEdit } from "../sandbox/types.js";

/** How an edit's `oldText` was found. */
export type MatchKind = "exact" | "line_endings" | "whitespace";

/** The exact edits to apply, and how each was found. */
export interface ResolvedEdits {
  edits: FileEdit[];
  kinds: MatchKind[];
}

/** Widening steps before falling back to the whole text as context. */
const MAX_WIDEN_STEPS = 64;

/**
 * Finds each edit's unique match in `content` (in order, each on the text the
 * previous ones produced) and returns exact edits.
 * @throws EditFailedError naming the edit whose text was not found, or found more than once
 */
export function resolveEdits(path: string, content: string, edits: FileEdit[]): ResolvedEdits {
  const crlf = usesCrlf(content);
  let text = content;
  const out: FileEdit[] = [];
  const kinds: MatchKind[] = [];
  edits.forEach((edit, i) => {
    if (edit.oldText === "") throw editFailed(path, i, "", 2);
    const found = findUnique(text, edit.oldText, edit.newText);
    if (typeof found === "number") throw editFailed(path, i, edit.oldText, found);
    let replacement = crlf ? found.newText.replace(/\r?\n/g, "\r\n") : found.newText;
    let { start, end } = found;
    // The exact text must occur once in the file as a whole: widen it by
    // whole lines of context until it does.
    for (let step = 0; countUpTo2(text, text.slice(start, end)) > 1; step++) {
      const s = step >= MAX_WIDEN_STEPS || start <= 1 ? 0 : text.lastIndexOf("\n", start - 2) + 1;
      const nl = text.indexOf("\n", end);
      const e = step >= MAX_WIDEN_STEPS || nl < 0 ? text.length : nl + 1;
      replacement = text.slice(s, start) + replacement + text.slice(end, e);
      start = s;
      end = e;
    }
    out.push({ oldText: text.slice(start, end), newText: replacement });
    kinds.push(found.kind);
    text = text.slice(0, start) + replacement + text.slice(end);
  });
  return { edits: out, kinds };
}

interface Found {
  start: number;
  end: number;
  newText: string;
  kind: MatchKind;
}

/** The unique match of `oldText` in `text`, or how often it was found (0 or ≥ 2). */
function findUnique(text: string, oldText: string, newText: string): Found | number {
  const exact = countUpTo2(text, oldText);
  if (exact === 1) {
    const start = text.indexOf(oldText);
    return { start, end: start + oldText.length, newText, kind: "exact" };
  }
  if (exact > 1) return countAll(text, oldText);

  const norm = normalizeEol(text);
  const oldNorm = oldText.replace(/\r\n/g, "\n");
  const newNorm = newText.replace(/\r\n/g, "\n");
  if (norm.text !== text || oldNorm !== oldText) {
    const n = countUpTo2(norm.text, oldNorm);
    if (n > 1) return countAll(norm.text, oldNorm);
    if (n === 1) {
      const p = norm.text.indexOf(oldNorm);
      const start = norm.map[p] as number;
      const end = norm.map[p + oldNorm.length] as number;
      return { start, end, newText: newNorm, kind: "line_endings" };
    }
  }
  return findByLines(norm, oldNorm, newNorm);
}

/** Line-by-line match ignoring each line's leading and trailing whitespace. */
function findByLines(norm: Normalized, oldNorm: string, newNorm: string): Found | number {
  const oldLines = oldNorm.split("\n");
  const withEol = oldNorm.endsWith("\n");
  if (withEol) oldLines.pop();
  const wanted = oldLines.map((l) => l.trim());
  if (wanted.every((l) => l === "")) return 0;
  const lines = norm.text.split("\n");
  const starts: number[] = [];
  for (let i = 0, at = 0; i < lines.length; i++) {
    starts.push(at);
    at += (lines[i] as string).length + 1;
  }
  let hit = -1;
  let hits = 0;
  for (let i = 0; i + wanted.length <= lines.length; i++) {
    let same = true;
    for (let j = 0; j < wanted.length && same; j++) same = lines[i + j]?.trim() === wanted[j];
    if (!same) continue;
    hits++;
    hit = i;
  }
  if (hits !== 1) return hits;
  const last = hit + wanted.length - 1;
  const lastLine = lines[last] as string;
  let endNorm = (starts[last] as number) + lastLine.length;
  if (withEol && last < lines.length - 1) endNorm += 1;
  const fileIndent = leadingSpace(lines[hit] as string);
  const modelIndent = leadingSpace(oldLines[0] as string);
  const reindented = newNorm
    .split("\n")
    .map((l) =>
      l.trim() !== "" && l.startsWith(modelIndent) ? fileIndent + l.slice(modelIndent.length) : l,
    )
    .join("\n");
  return {
    start: norm.map[starts[hit] as number] as number,
    end: norm.map[endNorm] as number,
    newText: reindented,
    kind: "whitespace",
  };
}

function leadingSpace(line: string): string {
  return /^[ \t]*/.exec(line)?.[0] ?? "";
}

interface Normalized {
  /** The text with every CRLF as LF. */
  text: string;
  /** Index in the original text of each index of `text` (and of its end). */
  map: number[];
}

/**
 * `text` with CRLF as LF, and where each character came from: the LF of a
 * CRLF maps to its CR, so a match that starts or ends at a line break
 * covers the whole break in the original.
 */
function normalizeEol(text: string): Normalized {
  if (!text.includes("\r\n")) {
    return { text, map: Array.from({ length: text.length + 1 }, (_, i) => i) };
  }
  const map: number[] = [];
  let out = "";
  for (let i = 0; i < text.length; i++) {
    if (text[i] === "\r" && text[i + 1] === "\n") {
      map.push(i);
      out += "\n";
      i++;
    } else {
      map.push(i);
      out += text[i];
    }
  }
  map.push(text.length);
  return { text: out, map };
}

/** True if most line breaks in `text` are CRLF. */
function usesCrlf(text: string): boolean {
  let crlf = 0;
  let lf = 0;
  for (let i = text.indexOf("\n"); i >= 0; i = text.indexOf("\n", i + 1)) {
    if (i > 0 && text[i - 1] === "\r") crlf++;
    else lf++;
  }
  return crlf > lf;
}

/** How often `needle` occurs in `text` (overlaps included, as the sandbox counts). */
function countAll(text: string, needle: string): number {
  let n = 0;
  for (let i = text.indexOf(needle); i >= 0; i = text.indexOf(needle, i + 1)) n++;
  return n;
}

/** How often `needle` occurs in `text`, counting no further than 2. */
function countUpTo2(text: string, needle: string): number {
  const first = text.indexOf(needle);
  if (first < 0) return 0;
  return text.indexOf(needle, first + 1) < 0 ? 1 : 2;
}
