/**
 * `mountbox check` as a user runs it: the bin of the packed package,
 * installed by npm, spawned from an app folder on a program folder —
 * its permission matrix, its JSON, its configuration errors (exit 2), and
 * no host path in anything it prints.
 */
import { spawnSync } from "node:child_process";
import { readFileSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, expect, it } from "vitest";
import { assertBuilt } from "./conformance/thread.js";
import { packAndInstall, writeFiles } from "./helpers/packed.js";
import { makeTempDir, removeDir } from "./helpers/tree.js";

let base: string;
let app: string;
let bin: string;

const WORKER =
  'import { defineWorker } from "mountbox/worker";\nexport default defineWorker(async () => "ok");\n';

beforeAll(() => {
  assertBuilt();
  base = makeTempDir("mountbox-cli-check-");
  const { modules } = packAndInstall(join(base, "pack"));
  bin = join(modules, ".bin", "mountbox");
  app = join(base, "app");
  writeFiles(app, {
    "package.json": '{"name":"app","private":true,"type":"module"}',
    "review/program.yaml": [
      "name: review",
      'sandbox: { root: ".", mounts: ["./cache:/cache:ro", { source: "./inbox", target: "/inbox", write_approval: true }] }',
      "workers:",
      "  main: { module: ./workers/main.js, delegates: [analyser, reporter] }",
      "  analyser:",
      "    module: ./workers/main.js",
      "    sandbox: { restrict: /src, readonly: true }",
      "",
    ].join("\n"),
    "review/workers/main.js": WORKER,
    "review/workers/reporter.worker": [
      "---",
      "module: ./workers/main.js",
      "shell: true",
      "network: true",
      "isolation: process",
      "sandbox: { allow_read: [/src], allow_write: [/reports] }",
      "---",
      "",
    ].join("\n"),
    "review/src/a.ts": "export const a = 1;\n",
    "review/reports/.keep": "",
    "review/cache/c.txt": "c",
    "review/inbox/.keep": "",
  });
  symlinkSync(modules, join(app, "node_modules"));
});
afterAll(() => removeDir(base));

function check(...args: string[]) {
  const r = spawnSync(bin, ["check", ...args], { cwd: app, encoding: "utf8", timeout: 30_000 });
  // (A file it cannot find is named by its host path: the user's own folder.)
  if (r.status === 0) expect(r.stdout + r.stderr).not.toContain(base);
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

it("prints each worker's access along each delegation path, with the areas' approvals", () => {
  const r = check("review");
  expect([r.code, r.stderr]).toEqual([0, ""]);
  expect(r.stdout).toMatchInlineSnapshot(`
    "✔ program.yaml and 3 workers are valid.

    Areas:
      /  read-write
      /cache  read-only
      /inbox  read-write, writes need approval

    Each worker along each path it can be called along (r read, w write, * only part of the area, - nothing; host code and .git are never writable):
      worker (delegation path)  /     /cache  /inbox  shell  network  runs as
      analyser                  r*    -       -       no     no       thread
      main                      rw    r       rw      no     no       thread
      reporter                  r*w*  -       -       yes    yes      process
      main → analyser           r*    -       -       no     no       thread
      main → reporter           r*w*  -       -       yes    yes      process
    "
  `);
});

it("prints what the README shows for the README's program folder", () => {
  const dir = fileURLToPath(new URL("../examples/readme/program", import.meta.url));
  const r = check(dir);
  expect(r.code).toBe(0);
  const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8");
  const shown = /\$ mountbox check examples\/readme\/program\n([\s\S]*?)```/.exec(readme)?.[1];
  expect(shown).toBe(r.stdout);
});

it("--json gives the same as one object", () => {
  const r = check("review", "--json");
  expect(r.code).toBe(0);
  const out = JSON.parse(r.stdout) as {
    ok: boolean;
    areas: { path: string; writeApproval: boolean }[];
    rows: { chain: string[]; access: Record<string, string>; isolation: string }[];
  };
  expect(out.ok).toBe(true);
  expect(out.areas.map((a) => [a.path, a.writeApproval])).toEqual([
    ["/", false],
    ["/cache", false],
    ["/inbox", true],
  ]);
  expect(out.rows.find((x) => x.chain.join(">") === "main>reporter")).toEqual({
    chain: ["main", "reporter"],
    access: { "/": "r*w*", "/cache": "-", "/inbox": "-" },
    kind: "code",
    shell: true,
    network: true,
    isolation: "process",
  });
});

it("a bad program prints its errors with file and key path, and exits 2", () => {
  writeFiles(app, {
    "bad/program.yaml": [
      'sandbox: { root: ".", readonly: true }',
      "workers:",
      "  main: { module: ./main.js, delegats: [x] }",
      "",
    ].join("\n"),
    "bad/main.js": WORKER,
    "bad2/program.yaml": ['sandbox: { root: ".", readonly: true }', "workers: {}", ""].join("\n"),
    "bad2/workers/w.worker": "---\nmodule: ./main.js\nsandbox: { allow_write: [/out] }\n---\n",
    "bad2/main.js": WORKER,
  });
  const r = check("bad");
  expect([r.code, r.stdout]).toEqual([2, ""]);
  expect(r.stderr).toMatch(
    /^mountbox: Invalid configuration in program\.yaml:\n✖ .*delegats.* → at workers\.main\.delegats\n/,
  );
  const r2 = check("bad2");
  expect(r2.code).toBe(2);
  expect(r2.stderr).toMatch(
    /Invalid configuration in workers\/w\.worker:\n✖ .*worker 'w'.* → at sandbox\.allow_write\[0\]/,
  );
  const j = check("bad2", "--json");
  expect(j.code).toBe(2);
  const out = JSON.parse(j.stdout) as { ok: boolean; issues: { path: unknown[] }[] };
  expect(out.ok).toBe(false);
  expect(out.issues[0]?.path).toEqual(["sandbox", "allow_write", 0]);
});

it("bad usage says how to get help, and exits 2", () => {
  expect(check()).toMatchObject({
    code: 2,
    stderr: "mountbox: check needs a program folder\nRun 'mountbox check --help' for usage.\n",
  });
  expect(check("review", "--jsn").code).toBe(2);
  const help = check("--help");
  expect([help.code, help.stdout.split("\n")[0]]).toEqual([
    0,
    "Usage: mountbox check <program-dir> [--json]",
  ]);
});
