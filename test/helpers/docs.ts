/**
 * The documentation as users read it: README.md at the repository's root and
 * one page per topic under docs/. Tests that check what the documentation
 * shows (examples verbatim, their output, links) read it through here.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/** The repository's root folder. */
export const REPO_ROOT = fileURLToPath(new URL("../..", import.meta.url));

/** The README, relative to the repository root. */
export const READ_ME = "README.md";

/** README.md and every docs/*.md page, as paths relative to the repository root. */
export function listDocFiles(): string[] {
  const pages = readdirSync(join(REPO_ROOT, "docs"))
    .filter((name) => name.endsWith(".md"))
    .sort()
    .map((name) => `docs/${name}`);
  return [READ_ME, ...pages];
}

/** Reads one documentation file (a path relative to the repository root). */
export function readDocFile(file: string): string {
  return readFileSync(join(REPO_ROOT, file), "utf8");
}

/**
 * Returns the text of README.md and of every docs page, one after another:
 * an example shown on any page, and the output shown right after it, is found
 * in this text.
 */
export function readAllDocs(): string {
  return listDocFiles()
    .map((file) => readDocFile(file))
    .join("\n");
}
