// examples/review/workers/reporter.js — writes the reviews as one markdown report.
// Its sandbox is /reports alone: it could not read /src, or write anywhere else.
import { defineWorker } from "mountbox/worker";

const REPORT = "/reports/summary.md";

export default defineWorker(async (input, ctx) => {
  const { reviews } = input;
  const count = reviews.reduce((n, r) => n + r.findings.length, 0);
  const lines = reviews.reduce((n, r) => n + r.lines, 0);
  const out = [
    "# Code review of /src",
    "",
    `${reviews.length} files, ${lines} lines, ${count} findings.`,
    "",
    "| file | lines | findings |",
    "|---|---:|---:|",
    ...reviews.map((r) => `| ${r.file} | ${r.lines} | ${r.findings.length} |`),
  ];
  for (const r of reviews.filter((r) => r.findings.length > 0)) {
    out.push("", `## ${r.file}`, "");
    for (const f of r.findings) out.push(`- line ${f.line}, ${f.kind}: \`${f.text}\``);
  }
  const refused = reviews.filter((r) => r.fix?.refused);
  if (refused.length > 0) {
    out.push("", "## Fixes refused", "");
    for (const r of refused)
      out.push(`- ${r.file}: ${r.fix.tried} — refused (${r.fix.refused}); analysers only read.`);
  }
  await ctx.sandbox.writeFile(REPORT, `${out.join("\n")}\n`);
  ctx.log(`wrote ${REPORT}: ${count} findings`);
  return REPORT;
});
