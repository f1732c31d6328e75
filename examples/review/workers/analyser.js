// examples/review/workers/analyser.js — reviews one file: line count, TODOs,
// console.log calls, the `any` type and long functions. It may only read that file.
import { defineWorker, PathNotWritableError } from "mountbox/worker";

/** A function longer than this many lines is worth flagging. */
const LONG_FUNCTION_LINES = 30;

const TODO = /\/\/\s*(?:TODO|FIXME)\b:?\s*(.*)/;
const CONSOLE_LOG = /\bconsole\.log\(/;
const ANY = /:\s*any\b|\bas any\b|<any>|\bany\[\]/;
const FUNCTION_START = [
  /^\s*(?:export\s+)?(?:async\s+)?function\s+(\w+)/,
  /^\s*(?:export\s+)?const\s+(\w+)\s*=\s*(?:async\s*)?(?:\([^)]*\)|\w+)\s*(?::[^=]+)?=>/,
  /^\s+(?:(?:public|private|protected|static|async|get|set)\s+)*(\w+)\s*\([^)]*\)\s*(?::\s*[^{]+)?\{\s*$/,
];
const NOT_A_FUNCTION = new Set(["if", "for", "while", "switch", "catch", "return"]);

export default defineWorker(async (input, ctx) => {
  const { file } = input;
  const text = await ctx.sandbox.readFile(file);
  const lines = text.split("\n");
  if (lines.at(-1) === "") lines.pop();

  const findings = [];
  lines.forEach((line, i) => {
    const todo = TODO.exec(line);
    if (todo) findings.push({ line: i + 1, kind: "TODO", text: todo[1] });
    if (CONSOLE_LOG.test(line))
      findings.push({ line: i + 1, kind: "console.log", text: line.trim() });
    if (ANY.test(line)) findings.push({ line: i + 1, kind: "any", text: line.trim() });
  });
  for (const fn of findLongFunctions(lines))
    findings.push({ line: fn.line, kind: "long function", text: `${fn.name}: ${fn.length} lines` });
  findings.sort((a, b) => a.line - b.line);

  // Leftover console.log calls look easy to fix, so the analyser tries to fix them
  // in place. Its sandbox is read-only (program.yaml): the host refuses the write.
  let fix;
  const logs = findings.filter((f) => f.kind === "console.log");
  if (logs.length > 0) {
    const fixed = lines.filter((line) => !CONSOLE_LOG.test(line));
    fix = { tried: `remove ${logs.length} console.log line${logs.length === 1 ? "" : "s"}` };
    try {
      await ctx.sandbox.writeFile(file, `${fixed.join("\n")}\n`);
      fix.done = true;
    } catch (e) {
      if (!(e instanceof PathNotWritableError)) throw e;
      ctx.log(`could not fix ${file}: ${e.code}`);
      fix.refused = e.code; // "path_not_writable"
    }
  }
  return { file, lines: lines.length, findings, ...(fix ? { fix } : {}) };
});

/** Functions (by a rough brace count, enough for this codebase) longer than the limit. */
function findLongFunctions(lines) {
  const found = [];
  for (let start = 0; start < lines.length; start++) {
    const name = FUNCTION_START.map((re) => re.exec(lines[start])?.[1]).find(Boolean);
    if (name === undefined || NOT_A_FUNCTION.has(name)) continue;
    let depth = 0;
    let opened = false;
    for (let end = start; end < lines.length; end++) {
      for (const ch of lines[end]) {
        if (ch === "{") {
          depth++;
          opened = true;
        } else if (ch === "}") depth--;
      }
      if (opened && depth <= 0) {
        const length = end - start + 1;
        if (length > LONG_FUNCTION_LINES) found.push({ name, line: start + 1, length });
        break;
      }
    }
  }
  return found;
}
