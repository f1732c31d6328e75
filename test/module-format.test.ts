/**
 * Telling an ES module from a CommonJS one (workers/module-format.ts): what
 * the thread's hook flips to ES module, and what createHost refuses before
 * Node 22.15. A CommonJS file must never be flipped: it would lose
 * `require` and `module.exports`.
 */
import { describe, expect, it } from "vitest";
import { usesModuleSyntax } from "../workers/module-format.js";

const STRIPS = ["strip", "transform"].includes(
  String((process.features as { typescript?: unknown }).typescript),
);

describe("usesModuleSyntax", () => {
  it.each([
    ["an import statement", 'import { a } from "./a.js";\n'],
    ["a bare import", 'import "./side.js";\n'],
    ["export default", "export default 1;\n"],
    ["a named export", "export const a = 1;\n"],
    ["import.meta", "console.log(import.meta.url);\n"],
    ["top-level await", "await Promise.resolve();\n"],
  ])("%s is ES module syntax", (_, source) => {
    expect(usesModuleSyntax(source)).toBe(true);
  });

  it.each([
    ["module.exports", 'const a = require("./a.js");\nmodule.exports = a;\n'],
    ["exports.x", "exports.x = 1;\n"],
    ["a dynamic import()", 'module.exports = () => import("./a.js");\n'],
    [
      "module syntax inside a string",
      "module.exports = \"import { a } from 'a'; export default 1\";\n",
    ],
    ["await inside an async function", "module.exports = async () => { await 1; };\n"],
    ["a syntax error of another kind", "module.exports = {;\n"],
  ])("%s is not", (_, source) => {
    expect(usesModuleSyntax(source)).toBe(false);
  });

  it("strips TypeScript's types first, where Node can", () => {
    const esm = 'import type { A } from "./a.js";\nexport const n: number = 1;\n';
    // Without Node's stripper a .ts file is never flipped (createHost refuses .ts there).
    expect(usesModuleSyntax(esm, true)).toBe(STRIPS);
    expect(usesModuleSyntax("const n: number = 1;\nmodule.exports = n;\n", true)).toBe(false);
  });
});
