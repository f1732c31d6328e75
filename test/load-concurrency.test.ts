/**
 * Issue 26 load test: eight real agent threads edit, write, move and list
 * shared files at once for a few seconds, three of them aborted mid-way;
 * then every success an agent was told of is checked against the files (each
 * edit's marker there, each moved file at its destination and gone from its
 * source), the shared whole-file write is never torn, no temp file is left,
 * and no listing or search ever showed one. Runs in a child process
 * (test/fixtures/load/run-load.mjs), so a hang cannot stall the runner.
 */
import { spawnSync } from "node:child_process";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterAll, beforeAll, expect, it } from "vitest";
import { assertBuilt } from "./conformance/thread.js";
import { makeTempDir, removeDir } from "./helpers/tree.js";

const script = fileURLToPath(new URL("./fixtures/load/run-load.mjs", import.meta.url));
const dist = pathToFileURL(fileURLToPath(new URL("../dist/src/index.js", import.meta.url))).href;
let base: string;

beforeAll(() => {
  assertBuilt();
  base = makeTempDir();
});
afterAll(() => removeDir(base));

it("loses no reported success under eight agents' edits, writes, moves and aborts", () => {
  const child = spawnSync(process.execPath, [script, dist, base, "4"], {
    encoding: "utf8",
    timeout: 50_000,
    killSignal: "SIGKILL",
  });
  expect(child.signal, child.stderr).toBeNull();
  const out = JSON.parse(child.stdout.trim().split("\n").at(-1) ?? "{}") as {
    counts: Record<string, number>;
    problems: string[];
  };
  expect(out.problems).toEqual([]);
  expect(out.counts.aborted).toBe(3);
  // Each kind of operation did happen (else the run proved nothing).
  for (const kind of ["edit", "write", "move"]) expect(out.counts[kind]).toBeGreaterThan(0);
}, 60_000);
