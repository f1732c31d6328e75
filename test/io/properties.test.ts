/**
 * Random operation sequences on random trees (with links in and out) never
 * touch anything outside the permitted real areas, and reads never return
 * outside content.
 */
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createSandbox, SandboxError } from "../../src/index.js";
import { makeTempDir, removeDir, snapshotTree, writeTree } from "../helpers/tree.js";

let base: string;
let run = 0;

beforeAll(() => {
  base = makeTempDir();
});
afterAll(() => removeDir(base));

const SEGS = ["a", "b", "l-out", "l-ro", "l-dir", "l-in", "x.txt", "..", ".git"];
const pathArb = fc
  .array(fc.constantFrom(...SEGS), { minLength: 1, maxLength: 4 })
  .map((s) => `/${s.join("/")}`);

const opArb = fc.oneof(
  fc.record({ op: fc.constant("write" as const), path: pathArb, text: fc.constantFrom("new", "") }),
  fc.record({ op: fc.constant("mkdir" as const), path: pathArb }),
  fc.record({ op: fc.constant("remove" as const), path: pathArb, recursive: fc.boolean() }),
  fc.record({
    op: fc.constant("move" as const),
    path: pathArb,
    to: pathArb,
    overwrite: fc.boolean(),
  }),
  fc.record({ op: fc.constant("edit" as const), path: pathArb }),
  fc.record({ op: fc.constant("read" as const), path: pathArb }),
  fc.record({ op: fc.constant("list" as const), path: pathArb }),
);

const treeArb = fc.record({
  aIsLinkOut: fc.boolean(),
  bIsLinkRo: fc.boolean(),
  deriveTo: fc.constantFrom(undefined, "/a", "/b"),
});

it("never touches outside or read-only areas, whatever the operations", async () => {
  await fc.assert(
    fc.asyncProperty(
      treeArb,
      fc.array(opArb, { minLength: 1, maxLength: 12 }),
      async (shape, ops) => {
        const dir = join(base, `run${run++}`);
        const outside = join(dir, "outside");
        const ro = join(dir, "ro");
        writeTree(outside, { "x.txt": "SECRET", a: { "x.txt": "SECRET" } });
        writeTree(ro, { "x.txt": "RO", a: { "x.txt": "RO" } });
        writeTree(join(dir, "root"), {
          a: shape.aIsLinkOut ? { link: outside } : { "x.txt": "in", a: {} },
          b: shape.bIsLinkRo ? { link: ro } : { "x.txt": "in" },
          "l-out": { link: join(outside, "x.txt") },
          "l-ro": { link: join(ro, "x.txt") },
          "l-dir": { link: outside },
          "l-in": { link: "b" },
          ".git": { "x.txt": "git" },
        });
        const before = { outside: snapshotTree(outside), ro: snapshotTree(ro) };
        let sb = createSandbox(
          { root: "root", mounts: [{ source: "ro", target: "/ro", readonly: true }] },
          { basePath: dir },
        );
        if (shape.deriveTo) {
          try {
            sb = sb.derive({ allowWrite: shape.deriveTo });
          } catch (err) {
            // /a may be a link to outside: the parent cannot grant it.
            expect(err).toBeInstanceOf(SandboxError);
          }
        }
        for (const o of ops) {
          try {
            switch (o.op) {
              case "write":
                await sb.writeFile(o.path, o.text);
                break;
              case "mkdir":
                await sb.mkdir(o.path);
                break;
              case "remove":
                await sb.remove(o.path, { recursive: o.recursive });
                break;
              case "move":
                await sb.move(o.path, o.to, { overwrite: o.overwrite });
                break;
              case "edit":
                await sb.editFile(o.path, [{ oldText: "in", newText: "edited" }]);
                break;
              case "read":
                expect(await sb.readFile(o.path)).not.toContain("SECRET");
                break;
              case "list":
                await sb.listFiles(o.path);
                break;
            }
          } catch (err) {
            expect(err).toBeInstanceOf(SandboxError);
            expect((err as Error).message).not.toContain(dir);
          }
        }
        expect(snapshotTree(outside)).toEqual(before.outside);
        expect(snapshotTree(ro)).toEqual(before.ro);
        const gitAfter = snapshotTree(join(dir, "root", ".git"));
        expect(gitAfter).toEqual({ "x.txt": "git" });
        removeDir(dir);
      },
    ),
    { numRuns: 400 },
  );
});
