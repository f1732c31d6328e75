/**
 * What an approver and the audit log are shown (issue 18, finding 8): every
 * control, format (soft hyphen, deprecated format characters, annotation
 * characters, tags), private-use, unassigned and invisible filler character
 * in a path is escaped, through a real thread; a long path keeps its end
 * visible.
 */

import { join } from "node:path";
import { Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHost as createBuiltHost } from "../dist/src/index.js";
import { escapeControl, quotePath, shortenMiddle } from "../src/errors/index.js";
import {
  type ApprovalRequest,
  createSandbox,
  createToolDefinitions,
  type Host,
  type HostOptions,
} from "../src/index.js";
import { assertBuilt } from "./conformance/thread.js";
import { makeTempDir, removeDir, writeTree } from "./helpers/tree.js";

const createHost = createBuiltHost as unknown as (o: HostOptions) => Promise<Host>;
const script = fileURLToPath(new URL("./fixtures/approvals/script.js", import.meta.url));

/**
 * One hidden character of each class after a name that looks harmless.
 * Unassigned: noncharacters, unassigned in every Unicode version.
 */
const HIDDEN: Record<string, string> = {
  softHyphen: "\u00ad",
  formatDeprecated: "\u206a",
  annotation: "\ufff9",
  tags: "\u{e0020}\u{e0041}\u{e007f}",
  control: "\u001b[2K\u0085\u007f",
  privateUse: "\ue000\u{f0000}",
  unassigned: "\ufdd0\uffff\u{1fffe}",
  fillers: "\u034f\u115f\u1160\u3164\uffa0",
  bidi: "\u202e\u2066",
};

/** A character the escaping must have left out of everything shown. */
const UNSAFE =
  /[\p{Cc}\p{Cf}\p{Co}\p{Cn}\p{Cs}\u115f\u1160\u3164\uffa0\u2028\u2029]|\u034f|[\ud800-\udfff]/u;

describe("escapeControl", () => {
  it("escapes each class of invisible character, and leaves printable text", () => {
    expect(
      Object.values(HIDDEN).map((h) => escapeControl(`/pub/report.md${h}`)),
    ).toMatchInlineSnapshot(`
        [
          "/pub/report.md\\u00ad",
          "/pub/report.md\\u206a",
          "/pub/report.md\\ufff9",
          "/pub/report.md\\u{e0020}\\u{e0041}\\u{e007f}",
          "/pub/report.md\\u001b[2K\\u0085\\u007f",
          "/pub/report.md\\ue000\\u{f0000}",
          "/pub/report.md\\ufdd0\\uffff\\u{1fffe}",
          "/pub/report.md\\u034f\\u115f\\u1160\\u3164\\uffa0",
          "/pub/report.md\\u202e\\u2066",
        ]
      `);
    // Lone surrogates (no file name holds one, but a worker's string may).
    expect(escapeControl("a\ud800b\udc00c")).toBe("a\\ud800b\\udc00c");
    expect(escapeControl("l\u2028p\u2029\n\t")).toBe("l\\u2028p\\u2029\\n\\t");
    expect(escapeControl("héllo ✓ 😀 日本 Ω")).toBe("héllo ✓ 😀 日本 Ω");
  });

  it("escapes at most 1 Mi characters of a text, cutting the rest", () => {
    // Escaped whole, tens of millions of control characters abort the process.
    const out = escapeControl("\u0001".repeat(3_000_000));
    expect(out.length).toBe(6 * 2 ** 20 + 1);
    expect(out.endsWith("\\u0001\u2026")).toBe(true);
  });

  it("a huge text is shortened from its ends alone, exactly as a short one", () => {
    const reference = (s: string, max: number) => {
      const cps = Array.from(s);
      if (cps.length <= max) return s;
      const head = Math.floor((max - 1) * 0.4);
      return `${cps.slice(0, head).join("")}\u2026${cps.slice(cps.length - (max - 1 - head)).join("")}`;
    };
    fc.assert(
      fc.property(
        fc.string({ unit: "grapheme", minLength: 20, maxLength: 120 }),
        fc.integer({ min: 2, max: 12 }),
        (s, max) => {
          expect(shortenMiddle(s, max)).toBe(reference(s, max));
        },
      ),
    );
    const huge = `😀${"a".repeat(50_000_000)}😀end`;
    expect(shortenMiddle(huge, 10)).toBe("😀aa\u2026aa😀end");
  });

  it("a long path quoted in a message keeps its end", () => {
    const long = `/pub/${"d/".repeat(200)}report.md\u{e0041}`;
    const q = quotePath(long);
    expect(q.endsWith("d/d/report.md\\u{e0041}'")).toBe(true);
    expect(q.startsWith("'/pub/d/d/")).toBe(true);
    expect(q).toContain("\u2026");
    expect(q.length).toBeLessThan(230);
  });
});

describe("the approver and the audit log (real thread)", () => {
  let root: string;
  beforeAll(() => {
    assertBuilt();
    root = makeTempDir();
    writeTree(join(root, "proj"), { "free.txt": "free" });
    writeTree(join(root, "sec"), { "report.md": "R" });
  });
  afterAll(() => removeDir(root));

  it("gets every path escaped; a long path has a display form that ends visibly", async () => {
    const seen: ApprovalRequest[] = [];
    const lines: string[] = [];
    const h = await createHost({
      sandbox: {
        root: "proj",
        mounts: [{ source: "sec", target: "/secret", readApproval: true }],
      },
      basePath: root,
      workers: { main: { module: script } },
      onApproval: (r) => {
        seen.push(r);
        return "deny";
      },
      auditLog: new Writable({
        write(line, _enc, done) {
          lines.push(String(line));
          done();
        },
      }),
    });
    const long = `/secret/${"d/".repeat(150)}report.md\u00ad\u{e0041}`;
    try {
      const out = (await h.run("main", {
        steps: [
          ...Object.values(HIDDEN).map((c) => ({
            op: "readFile",
            args: [`/secret/report.md${c}`],
          })),
          { op: "readFile", args: [long] },
        ],
      })) as { code?: string; message?: string }[];
      expect(out.map((o) => o.code)).toEqual(
        Array(Object.keys(HIDDEN).length + 1).fill("approval_denied"),
      );
      for (const o of out) expect(o.message).not.toMatch(UNSAFE);
      expect(seen.slice(0, -1).map((r) => r.path)).toMatchInlineSnapshot(`
        [
          "/secret/report.md\\u00ad",
          "/secret/report.md\\u206a",
          "/secret/report.md\\ufff9",
          "/secret/report.md\\u{e0020}\\u{e0041}\\u{e007f}",
          "/secret/report.md\\u001b[2K\\u0085\\u007f",
          "/secret/report.md\\ue000\\u{f0000}",
          "/secret/report.md\\ufdd0\\uffff\\u{1fffe}",
          "/secret/report.md\\u034f\\u115f\\u1160\\u3164\\uffa0",
          "/secret/report.md\\u202e\\u2066",
        ]
      `);
      for (const r of seen.slice(0, -1)) expect(r.displayPath).toBeUndefined();
      // The long one: whole in `path`, its end visible in `displayPath`.
      const last = seen.at(-1)!;
      expect(last.path).toBe(escapeControl(long));
      expect(last.displayPath!.endsWith("d/d/report.md\\u00ad\\u{e0041}")).toBe(true);
      expect(last.displayPath!.startsWith("/secret/d/")).toBe(true);
      expect(last.displayPath).toContain("\u2026");
      expect(Array.from(last.displayPath!).length).toBeLessThan(230);

      // The audit log: no line holds an unsafe character, raw or decoded.
      const paths = lines
        .map((l) => JSON.parse(l) as { type: string; path?: string })
        .filter((e) => e.type === "approval_request")
        .map((e) => e.path);
      for (const l of lines) {
        expect(l.endsWith("\n")).toBe(true);
        expect(l.slice(0, -1)).not.toMatch(UNSAFE);
        expect(JSON.parse(l).path ?? "").not.toMatch(UNSAFE);
      }
      expect(paths.slice(0, -1)).toEqual(seen.slice(0, -1).map((r) => r.path));
      expect(paths.at(-1)).toBe(escapeControl(long));
    } finally {
      await h.close();
    }
  });

  it("in-process tools: the approver gets the same escaped path", async () => {
    const seen: ApprovalRequest[] = [];
    const sb = createSandbox(
      { root: "proj", mounts: [{ source: "sec", target: "/secret", readApproval: true }] },
      { basePath: root },
    );
    const defs = await createToolDefinitions(sb, {
      onApproval: (r) => {
        seen.push(r);
        return "deny";
      },
    });
    const read = defs.find((d) => d.name === "read_file")!;
    const text = (await read.execute({ path: `/secret/report.md${HIDDEN.tags}` })) as string;
    expect(text).toContain("approval_denied");
    expect(text).not.toMatch(UNSAFE);
    expect(seen.map((r) => r.path)).toEqual(["/secret/report.md\\u{e0020}\\u{e0041}\\u{e007f}"]);
  });
});
