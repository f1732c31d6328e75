/**
 * The documentation holds together: a short README that leads to one page
 * per topic under docs/, and no relative link that leads nowhere.
 */
import { existsSync } from "node:fs";
import { dirname, join, normalize } from "node:path";
import { describe, expect, it } from "vitest";
import { listDocFiles, READ_ME, REPO_ROOT, readDocFile } from "./helpers/docs.js";

/** Removes fenced code blocks and inline code spans, where `[x](y)` is not a link. */
function stripCode(markdown: string): string {
  return markdown.replace(/^(`{3,})[^\n]*\n[\s\S]*?^\1[ \t]*$/gm, "").replace(/`[^`\n]*`/g, "");
}

/** Returns the relative link targets of a markdown file, anchors removed (`#x` alone: none). */
function listRelativeLinks(markdown: string): string[] {
  const targets: string[] = [];
  for (const [, target] of stripCode(markdown).matchAll(/\]\(([^)\s]+)\)/g)) {
    if (target === undefined || /^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
    const path = target.split("#")[0] ?? "";
    if (path !== "") targets.push(path);
  }
  return targets;
}

describe("README and docs/", () => {
  const readme = readDocFile(READ_ME);

  it("README.md has at most 420 lines", () => {
    expect(readme.trimEnd().split("\n").length).toBeLessThanOrEqual(420);
  });

  it("README.md shows both set-up commands", () => {
    expect(readme).toContain("npm install && npm start");
    expect(readme).toContain("npm install && npm test");
  });

  it.each(listDocFiles())("every relative link in %s points to a file that exists", (file) => {
    const missing = listRelativeLinks(readDocFile(file))
      .map((target) => normalize(join(dirname(file), target)))
      .filter((path) => !existsSync(join(REPO_ROOT, path)));
    expect(missing).toEqual([]);
  });

  it("README.md links to every docs page", () => {
    const linked = new Set(listRelativeLinks(readme).map((target) => normalize(target)));
    const pages = listDocFiles().filter((file) => file !== READ_ME);
    expect(pages.length).toBeGreaterThan(0);
    expect(pages.filter((page) => !linked.has(page))).toEqual([]);
  });
});
