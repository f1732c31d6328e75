/**
 * The audit log across real threads (issue 13): one valid JSON line per
 * operation, approval request, decision, grant and denial; whole lines under
 * 32 concurrent agents; no host paths, no contents; a failed write is loud.
 */
import { readFileSync, renameSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHost as createBuiltHost, loadProgram } from "../dist/src/index.js";
import type { Host, HostOptions } from "../src/index.js";
import { assertBuilt } from "./conformance/thread.js";
import { makeTempDir, removeDir, writeTree } from "./helpers/tree.js";

const createHost = createBuiltHost as unknown as (o: HostOptions) => Promise<Host>;
const script = fileURLToPath(new URL("./fixtures/approvals/script.js", import.meta.url));
const CONTENT = "CONTENT-THAT-MUST-NOT-BE-LOGGED";

let base: string;
beforeAll(() => {
  assertBuilt();
  base = makeTempDir();
  writeTree(join(base, "project"), { docs: { "a.md": CONTENT }, src: { "a.ts": CONTENT } });
  writeTree(join(base, "secret"), { "s.txt": CONTENT });
});
afterAll(() => removeDir(base));

type Line = Record<string, unknown> & { type: string; agentId: string; chain: string[] };

describe("audit log", () => {
  it("writes whole JSON lines for 32 concurrent agents, with no host path and no content", async () => {
    const file = join(base, "audit.jsonl");
    const host = await createHost({
      sandbox: {
        paths: {
          docs: { root: "project/docs", mode: "rw" },
          secret: { root: "secret", readApproval: true },
        },
      },
      basePath: base,
      workers: { main: { module: script } },
      auditLog: "audit.jsonl",
      onApproval: (r) => (r.agentId.endsWith("7") ? "deny" : "once"),
    });
    try {
      const steps = [
        { op: "readFile", args: ["docs:a.md"] },
        { op: "readFile", args: ["secret:s.txt"] },
        { op: "writeFile", args: ["docs:w.md", CONTENT] },
        { op: "readFile", args: [join(base, "secret", "s.txt")] },
        { op: "readFile", args: ["/nowhere/x"] },
      ];
      await Promise.all(Array.from({ length: 32 }, () => host.run("main", { steps })));
    } finally {
      await host.close();
    }
    const text = readFileSync(file, "utf8");
    expect(text).not.toContain(base);
    expect(text).not.toContain(CONTENT);
    expect(text.endsWith("\n")).toBe(true);
    const lines = text
      .trimEnd()
      .split("\n")
      .map((l) => JSON.parse(l) as Line);
    // Per agent: 5 operations, 1 request, 1 decision, a denial for each of
    // the 2 refused paths, and one more for the ones whose approver said no.
    const denied = ["a7", "a17", "a27"];
    expect(lines).toHaveLength(32 * 9 + denied.length);
    const a7 = lines
      .filter((l) => l.agentId === "a7")
      .map(({ time, ...rest }) => {
        expect(Number.isNaN(Date.parse(time as string))).toBe(false);
        return rest;
      });
    expect(a7).toMatchInlineSnapshot(`
      [
        {
          "agentId": "a7",
          "chain": [
            "main",
          ],
          "op": "readFile",
          "outcome": "ok",
          "path": "/docs/a.md",
          "type": "operation",
        },
        {
          "agentId": "a7",
          "chain": [
            "main",
          ],
          "op": "read",
          "outcome": "asked",
          "path": "/secret/s.txt",
          "type": "approval_request",
        },
        {
          "agentId": "a7",
          "chain": [
            "main",
          ],
          "op": "read",
          "outcome": "deny",
          "path": "/secret/s.txt",
          "type": "approval_decision",
        },
        {
          "agentId": "a7",
          "chain": [
            "main",
          ],
          "code": "approval_denied",
          "op": "read",
          "outcome": "denied",
          "path": "/secret/s.txt",
          "type": "denial",
        },
        {
          "agentId": "a7",
          "chain": [
            "main",
          ],
          "code": "approval_denied",
          "op": "readFile",
          "outcome": "error",
          "path": "/secret/s.txt",
          "type": "operation",
        },
        {
          "agentId": "a7",
          "chain": [
            "main",
          ],
          "op": "writeFile",
          "outcome": "ok",
          "path": "/docs/w.md",
          "type": "operation",
        },
        {
          "agentId": "a7",
          "chain": [
            "main",
          ],
          "code": "invalid_path",
          "op": "readFile",
          "outcome": "denied",
          "path": "/secret/s.txt",
          "type": "denial",
        },
        {
          "agentId": "a7",
          "chain": [
            "main",
          ],
          "code": "invalid_path",
          "op": "readFile",
          "outcome": "error",
          "path": "/secret/s.txt",
          "type": "operation",
        },
        {
          "agentId": "a7",
          "chain": [
            "main",
          ],
          "code": "path_not_in_sandbox",
          "op": "readFile",
          "outcome": "denied",
          "path": "/nowhere/x",
          "type": "denial",
        },
        {
          "agentId": "a7",
          "chain": [
            "main",
          ],
          "code": "path_not_in_sandbox",
          "op": "readFile",
          "outcome": "error",
          "path": "/nowhere/x",
          "type": "operation",
        },
      ]
    `);
  });

  it("names the path an operation was given: escaped once, never re-read as another path", async () => {
    const file = join(base, "audit-paths.jsonl");
    const host = await createHost({
      sandbox: { root: "project" },
      basePath: base,
      workers: { main: { module: script } },
      auditLog: "audit-paths.jsonl",
    });
    // Raw, under the 4096-byte path limit; escaped (6 characters each), over it.
    const many = `/docs/${"\u00ad".repeat(1000)}`;
    try {
      await host.run("main", {
        steps: [
          { op: "readFile", args: ["/x\u00ady"] },
          { op: "exists", args: ["/\u202eevil.txt"] },
          { op: "stat", args: [many] },
          { op: "exists", args: [`/docs/${"a".repeat(5000)}`] },
        ],
      });
    } finally {
      await host.close();
    }
    const paths = readFileSync(file, "utf8")
      .trimEnd()
      .split("\n")
      .map((l) => (JSON.parse(l) as Line).path as string | undefined);
    expect(paths.slice(0, 2)).toEqual(["/x\\u00ady", "/\\u202eevil.txt"]);
    // Escaped, the long one is over the path limit: it is still named, whole.
    expect(paths[2]).toBe(`/docs/${"\\u00ad".repeat(1000)}`);
    // A path no sandbox accepts (over 4096 bytes) is named as sent, cut in the middle.
    expect(paths[3]).toMatch(/^\/docs\/a+…a+$/);
    expect(paths[3]?.length).toBe(512);
  });

  it("is set by program.yaml's audit_log, relative to the program folder", async () => {
    const dir = join(base, "program");
    writeTree(dir, {});
    writeFileSync(
      join(dir, "program.yaml"),
      `audit_log: ./log/audit.jsonl\nworkers:\n  main: { module: ${JSON.stringify(script)} }\n`,
    );
    const options = await loadProgram(dir);
    expect(options.auditLog).toBe(join(dir, "log", "audit.jsonl"));
    // A log that cannot be opened fails createHost, naming the option and
    // the file (a setup error, thrown to the host's own code).
    const e = await createHost(options).catch((err: Error) => err);
    expect((e as Error).message.replaceAll(dir, "<dir>")).toMatchInlineSnapshot(`
      "Invalid configuration:
      ✖ the audit log cannot be opened (ENOENT): '<dir>/log/audit.jsonl' → at auditLog"
    `);
  });

  it("a write failure stops the host loudly: the run rejects and later runs are refused", async () => {
    let writes = 0;
    const sink = new Writable({
      write(_chunk, _enc, cb) {
        writes++;
        cb(writes >= 2 ? new Error("disk full at /host/path") : null);
      },
    });
    const host = await createHost({
      sandbox: { root: "project" },
      basePath: base,
      workers: { main: { module: script } },
      auditLog: sink,
    });
    try {
      const steps = Array.from({ length: 50 }, () => ({ op: "readFile", args: ["/docs/a.md"] }));
      const first = await host.run("main", { steps }).catch((err: Error) => err);
      expect((first as Error).message).toMatchInlineSnapshot(
        `"I/O error during audit: the audit log could not be written; this host runs no more agents."`,
      );
      const later = await host
        .run("main", { steps: [] })
        .catch((err: Error & { code?: string }) => err);
      expect((later as Error & { code?: string }).code).toBe("io_error");
      expect((later as Error).message).toMatchInlineSnapshot(
        `"I/O error during audit: the audit log could not be written; this host runs no more agents."`,
      );
      expect((later as Error).message).not.toContain("/host/path");
    } finally {
      await host.close();
    }
  });

  it("refuses a log file agents could read or write (inside a sandbox area), before creating it", async () => {
    for (const [sandbox, file] of [
      [{ root: "project" }, "project/audit.jsonl"],
      [{ root: "." }, "audit-inside.jsonl"],
      [{ paths: { docs: { root: "project/docs", mode: "ro" } } }, "project/docs/audit.jsonl"],
    ] as const) {
      const e = await createHost({
        sandbox,
        basePath: base,
        workers: { main: { module: script } },
        auditLog: file,
      }).catch((err: Error & { code?: string }) => err);
      expect((e as Error & { code?: string }).code, file).toBe("invalid_config");
      expect((e as Error).message).toContain("the audit log lies inside the sandbox");
      expect((e as Error).message).not.toContain(base);
      expect(() => readFileSync(join(base, file))).toThrow();
    }
    // Outside every area: accepted.
    const host = await createHost({
      sandbox: { paths: { docs: { root: "project/docs", mode: "ro" } } },
      basePath: base,
      workers: { main: { module: script } },
      auditLog: "project/outside.jsonl",
    });
    await host.close();
  });

  for (const how of ["replaced", "removed"] as const) {
    it(`a log file ${how} under its path stops the host loudly`, async () => {
      const file = join(base, `audit-${how}.jsonl`);
      const host = await createHost({
        sandbox: { root: "project" },
        basePath: base,
        workers: { main: { module: script } },
        auditLog: file,
      });
      try {
        const steps = [{ op: "readFile", args: ["/docs/a.md"] }];
        await host.run("main", { steps });
        expect(readFileSync(file, "utf8")).toContain('"op":"readFile"');
        if (how === "replaced") {
          writeFileSync(`${file}.forged`, "forged\n");
          renameSync(`${file}.forged`, file);
        } else unlinkSync(file);
        const e = await host.run("main", { steps }).catch((err: Error) => err);
        expect((e as Error).message).toBe(
          "I/O error during audit: the audit log could not be written; this host runs no more agents.",
        );
        if (how === "replaced") expect(readFileSync(file, "utf8")).toBe("forged\n");
      } finally {
        await host.close();
      }
    });
  }
});
