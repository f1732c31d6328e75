/**
 * Every type of audit line, produced by a real host and read back (issue
 * 20): one `denial` line per refused operation with its code — refused by
 * the sandbox, by the approver, or by the host's delegation rules — the
 * callee on `delegate` lines, and the list of line types in the docs equal
 * to what is written.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createHost as createBuiltHost } from "../dist/src/index.js";
import { AUDIT_LINE_TYPES, REFUSAL_CODES } from "../src/host/audit-log.js";
import type { Host, HostOptions } from "../src/index.js";
import { assertBuilt } from "./conformance/thread.js";
import { makeTempDir, removeDir, writeTree } from "./helpers/tree.js";

const createHost = createBuiltHost as unknown as (o: HostOptions) => Promise<Host>;
const script = fileURLToPath(new URL("./fixtures/approvals/script.js", import.meta.url));
const DOC = fileURLToPath(new URL("../docs/approvals-and-audit.md", import.meta.url));

let base: string;
beforeAll(() => {
  assertBuilt();
  base = makeTempDir();
  writeTree(base, {
    docs: { "a.md": "a" },
    secret: { "s.txt": "s" },
    drafts: { "p.md": "p" },
  });
});
afterAll(() => removeDir(base));

/** The line types the docs' audit table lists (its `type` row). */
function documentedTypes(): string[] {
  const row = readFileSync(DOC, "utf8")
    .split("\n")
    .find((l) => l.startsWith("| `type` |"));
  expect(row, "docs/approvals-and-audit.md has a `type` row").toBeDefined();
  return [...row!.split("|")[2]!.matchAll(/`([a-z_]+)`/g)].map((m) => m[1]!);
}

it("writes every line type the docs list, a denial per refused operation, the callee of a delegation", async () => {
  const host = await createHost({
    sandbox: {
      paths: {
        docs: { root: "docs", mode: "rw" },
        secret: { root: "secret", readApproval: true },
        drafts: { root: "drafts" },
      },
    },
    basePath: base,
    workers: {
      main: {
        module: script,
        sandbox: { allowRead: ["/docs", "/secret"] },
        delegates: ["helper"],
      },
      helper: { module: script },
    },
    dynamic: { enabled: true },
    onApproval: (r) => (r.operation === "expand" ? "session" : "deny"),
    auditLog: "audit.jsonl",
  });
  try {
    await host.run("main", {
      steps: [
        { op: "readFile", args: ["/docs/a.md"] }, // ok
        { op: "readFile", args: ["/secret/s.txt"] }, // the approver says no
        { op: "readFile", args: ["/drafts/p.md"] }, // expanded: a grant
        { op: "readFile", args: ["/nowhere/x"] }, // the sandbox says no
        { op: "delegate", worker: "helper", input: { steps: [] } },
        { op: "delegate", worker: "gh\u0007ost" }, // the host's rules say no
      ],
    });
  } finally {
    await host.close();
  }
  const lines = readFileSync(join(base, "audit.jsonl"), "utf8")
    .trimEnd()
    .split("\n")
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  // The docs, the code's own list and the log agree.
  expect(documentedTypes()).toEqual([...AUDIT_LINE_TYPES]);
  expect([...new Set(lines.map((l) => l.type))].sort()).toEqual([...AUDIT_LINE_TYPES].sort());
  // One denial per refused operation, just before its operation line.
  const refused = lines.filter(
    (l) => l.type === "operation" && l.outcome === "error" && REFUSAL_CODES.has(String(l.code)),
  );
  expect(refused).toHaveLength(3);
  expect(lines.filter((l) => l.type === "denial")).toHaveLength(refused.length);
  expect(
    lines.filter((l) => l.agentId === "a1").map(({ time, agentId, chain, ...l }) => l),
  ).toMatchInlineSnapshot(`
    [
      {
        "op": "readFile",
        "outcome": "ok",
        "path": "/docs/a.md",
        "type": "operation",
      },
      {
        "op": "read",
        "outcome": "asked",
        "path": "/secret/s.txt",
        "type": "approval_request",
      },
      {
        "op": "read",
        "outcome": "deny",
        "path": "/secret/s.txt",
        "type": "approval_decision",
      },
      {
        "code": "approval_denied",
        "op": "read",
        "outcome": "denied",
        "path": "/secret/s.txt",
        "type": "denial",
      },
      {
        "code": "approval_denied",
        "op": "readFile",
        "outcome": "error",
        "path": "/secret/s.txt",
        "type": "operation",
      },
      {
        "access": "read",
        "op": "expand",
        "outcome": "asked",
        "path": "/drafts",
        "type": "approval_request",
      },
      {
        "access": "read",
        "op": "expand",
        "outcome": "session",
        "path": "/drafts",
        "type": "approval_decision",
      },
      {
        "access": "read",
        "op": "expand",
        "outcome": "session",
        "path": "/drafts",
        "type": "grant",
      },
      {
        "op": "readFile",
        "outcome": "ok",
        "path": "/drafts/p.md",
        "type": "operation",
      },
      {
        "code": "path_not_in_sandbox",
        "op": "readFile",
        "outcome": "denied",
        "path": "/nowhere/x",
        "type": "denial",
      },
      {
        "code": "path_not_in_sandbox",
        "op": "readFile",
        "outcome": "error",
        "path": "/nowhere/x",
        "type": "operation",
      },
      {
        "callee": "helper",
        "op": "delegate",
        "outcome": "ok",
        "type": "operation",
      },
      {
        "callee": "gh\\u0007ost",
        "code": "delegation_refused",
        "op": "delegate",
        "outcome": "denied",
        "type": "denial",
      },
      {
        "callee": "gh\\u0007ost",
        "code": "delegation_refused",
        "op": "delegate",
        "outcome": "error",
        "type": "operation",
      },
    ]
  `);
});
