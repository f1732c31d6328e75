/**
 * Property tests for the two policy invariants:
 * 1. a child never reads or writes more than its parent, at any depth;
 * 2. resolve never lands outside the permitted real areas.
 */
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSandbox, type Sandbox, SandboxError } from "../../src/index.js";
import { setCovers } from "../../src/sandbox/areas.js";
import { policyOf } from "../../src/sandbox/sandbox.js";
import { isWithin } from "../../src/sandbox/virtual-path.js";
import { makeTempDir, removeDir, writeTree } from "../helpers/tree.js";

let base: string;
let outside: string;

const SEGMENTS = [
  "src",
  "src2",
  "a.ts",
  "b.md",
  "cache",
  "out",
  "..",
  ".",
  "",
  "lnk-out",
  "lnk-in",
  "lnk-cache",
  "dangle",
  ".git",
  "x",
];
const ENTRIES = [
  "/",
  "/src",
  "/src/a.ts",
  "/src2",
  "/cache",
  "/cache/b.md",
  "/out",
  "/src/lnk-in",
  "/lnk-out",
  "/nope",
];

beforeAll(() => {
  base = makeTempDir();
  outside = join(base, "outside");
  writeTree(outside, { "a.ts": "o", "b.md": "o", src: { "a.ts": "o" } });
  writeTree(join(base, "cache"), {
    "b.md": "c",
    src: { "a.ts": "c" },
    "lnk-out": { link: outside },
  });
  writeTree(join(base, "out"), { "a.ts": "w" });
  writeTree(join(base, "root"), {
    src: {
      "a.ts": "a",
      "b.md": "b",
      "lnk-in": { link: "../src2" },
      "lnk-out": { link: join(outside, "a.ts") },
      x: {},
    },
    src2: { "a.ts": "a2", dangle: { link: join(outside, "new.ts") } },
    "lnk-out": { link: outside },
    "lnk-cache": { link: "../cache" },
    ".git": { x: "g" },
    cache: { "b.md": "shadowed" },
  });
});
afterAll(() => removeDir(base));

const pathArb = fc
  .array(fc.constantFrom(...SEGMENTS), { minLength: 0, maxLength: 5 })
  .chain((segs) => fc.constantFrom(`/${segs.join("/")}`, segs.join("/")));

const entriesArb = fc.oneof(
  fc.constant(undefined),
  fc.constantFrom(...ENTRIES),
  fc.subarray(ENTRIES, { maxLength: 3 }),
);

type Step =
  | {
      kind: "derive";
      allowRead?: string | string[];
      allowWrite?: string | string[];
      readonly?: boolean;
      inherit?: boolean;
    }
  | { kind: "restrict"; restrict?: string; readonly?: boolean };

const stepArb: fc.Arbitrary<Step> = fc.oneof(
  fc.record(
    {
      kind: fc.constant("derive" as const),
      allowRead: entriesArb,
      allowWrite: entriesArb,
      readonly: fc.option(fc.boolean(), { nil: undefined }),
      inherit: fc.option(fc.boolean(), { nil: undefined }),
    },
    { requiredKeys: ["kind"] },
  ),
  fc.record(
    {
      kind: fc.constant("restrict" as const),
      restrict: fc.option(fc.constantFrom(...ENTRIES), { nil: undefined }),
      readonly: fc.option(fc.boolean(), { nil: undefined }),
    },
    { requiredKeys: ["kind"] },
  ),
);

const configArb = fc.record({
  rootReadonly: fc.boolean(),
  cacheReadonly: fc.boolean(),
  withOut: fc.boolean(),
  suffixes: fc.option(fc.constant([".ts", ".md"]), { nil: undefined }),
});

function build(cfg: {
  rootReadonly: boolean;
  cacheReadonly: boolean;
  withOut: boolean;
  suffixes: readonly string[] | undefined;
}): Sandbox {
  const mounts: (object | string)[] = [
    { source: "cache", target: "/cache", readonly: cfg.cacheReadonly },
  ];
  if (cfg.withOut) mounts.push("out:/out");
  return createSandbox(
    { root: "root", readonly: cfg.rootReadonly, mounts, suffixes: cfg.suffixes } as never,
    { basePath: base },
  );
}

function applyStep(sb: Sandbox, step: Step): Sandbox | undefined {
  const { kind, ...opts } = step;
  try {
    return kind === "derive" ? sb.derive(opts) : sb.restrict(opts);
  } catch (err) {
    expect(err).toBeInstanceOf(SandboxError);
    return undefined;
  }
}

/** The real paths an area set permits may only be under the root or mount sources, never `outside`. */
function assertRealPermitted(sb: Sandbox, real: string, access: "read" | "write") {
  expect(isWithin(real, outside), real).toBe(false);
  const p = policyOf(sb);
  const v = p.table.mapBack(real);
  expect(v, real).toBeDefined();
  expect(setCovers(access === "read" ? p.read : p.write, v!), `${real} → ${v}`).toBe(true);
  if (access === "write") expect(p.deny(v!, "write", false)).toBeUndefined();
}

describe("policy invariants (fast-check)", () => {
  it("a child never reads or writes more than its parent, at any depth", () => {
    fc.assert(
      fc.property(
        configArb,
        fc.array(stepArb, { minLength: 1, maxLength: 4 }),
        fc.array(pathArb, { minLength: 1, maxLength: 12 }),
        (cfg, steps, paths) => {
          let parent = build(cfg);
          for (const step of steps) {
            const child = applyStep(parent, step);
            if (!child) return;
            for (const p of paths) {
              if (child.canRead(p)) expect(parent.canRead(p), `read ${p}`).toBe(true);
              if (child.canWrite(p)) expect(parent.canWrite(p), `write ${p}`).toBe(true);
            }
            for (const r of child.readableRoots)
              expect(parent.canRead(r) || parent.readableRoots.some((a) => isWithin(r, a))).toBe(
                true,
              );
            parent = child;
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it("resolve never lands outside the permitted real areas", () => {
    fc.assert(
      fc.property(
        configArb,
        fc.array(stepArb, { maxLength: 3 }),
        fc.array(pathArb, { minLength: 1, maxLength: 12 }),
        (cfg, steps, paths) => {
          let sb = build(cfg);
          for (const step of steps) sb = applyStep(sb, step) ?? sb;
          for (const p of paths) {
            for (const access of ["read", "write"] as const) {
              let real: string | undefined;
              try {
                real = sb.resolve(p, access);
              } catch (err) {
                expect(err).toBeInstanceOf(SandboxError);
                expect((err as Error).message).not.toContain(base);
                expect(access === "read" ? sb.canRead(p) : sb.canWrite(p)).toBe(false);
                continue;
              }
              expect(access === "read" ? sb.canRead(p) : sb.canWrite(p)).toBe(true);
              assertRealPermitted(sb, real, access);
            }
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});
