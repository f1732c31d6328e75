/**
 * The text of configuration files: YAML (syntax errors named with their
 * line and column) and a `.worker` file split into its YAML frontmatter and
 * its instructions.
 */
import { LineCounter, parseDocument } from "yaml";
import { configError } from "../errors/index.js";

/**
 * Parses YAML text. Syntax errors become a ConfigError naming the file and
 * the line and column (shifted by `lineOffset`, e.g. for frontmatter).
 */
export function parseYamlText(text: string, source: string, lineOffset = 0): unknown {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true });
  if (doc.errors.length > 0) {
    throw configError(
      doc.errors.map((e) => {
        const { line, col } = lineCounter.linePos(e.pos[0]);
        return {
          path: [],
          message: `YAML syntax error at line ${line + lineOffset}, column ${col}: ${e.message}`,
        };
      }),
      source,
    );
  }
  try {
    // maxAliasCount keeps an alias bomb from expanding into gigabytes.
    return doc.toJS({ maxAliasCount: 100 });
  } catch (err) {
    throw configError([{ path: [], message: `YAML error: ${(err as Error).message}` }], source);
  }
}

/** A `.worker` file split into its frontmatter and its instructions body. */
export interface WorkerFileParts {
  /** The YAML between the `---` lines. */
  frontmatter: string;
  /** Lines before the frontmatter's first line (for YAML error positions). */
  frontmatterLineOffset: number;
  /** The instructions, without surrounding blank lines. */
  body: string;
}

/**
 * Splits a `.worker` file: a `---` line, YAML frontmatter, a `---` line, then
 * markdown instructions. A file without an opening `---` is an error rather
 * than all-instructions: a forgotten `---` would otherwise silently drop the
 * worker's `sandbox` narrowing.
 */
export function splitWorkerFile(text: string, source: string): WorkerFileParts {
  const lines = text.replace(/^\uFEFF/, "").split(/\r?\n/);
  const isFence = (line: string | undefined) => line?.trimEnd() === "---";
  if (!isFence(lines[0])) {
    throw configError(
      [
        {
          path: [],
          message:
            "a .worker file starts with a '---' line, then YAML frontmatter, then a closing '---' line, then the instructions",
        },
      ],
      source,
    );
  }
  const close = lines.findIndex((line, i) => i > 0 && isFence(line));
  if (close < 0) {
    throw configError(
      [
        {
          path: [],
          message:
            "the frontmatter has no closing '---' line (put one between the YAML and the instructions)",
        },
      ],
      source,
    );
  }
  return {
    frontmatter: lines.slice(1, close).join("\n"),
    frontmatterLineOffset: 1,
    body: lines
      .slice(close + 1)
      .join("\n")
      .replace(/^(?:[ \t]*\n)+/, "")
      .trimEnd(),
  };
}
