/**
 * Issue 26, finding 4: a full disk must not tear the audit log. On a real,
 * small tmpfs (mounted here; root only, as CI runs) a line that does not fit
 * is taken back whole and the host stops loudly; a host that opens the log
 * again, with room again, appends whole lines; a torn tail left by a host
 * that was killed mid-line stays on a line of its own.
 */
import { execFileSync } from "node:child_process";
import {
  appendFileSync,
  closeSync,
  mkdirSync,
  openSync,
  readFileSync,
  rmSync,
  statSync,
  unlinkSync,
  writeSync,
} from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { createHost as createBuiltHost } from "../dist/src/index.js";
import type { Host, HostOptions } from "../src/index.js";
import { assertBuilt, fixture } from "./conformance/thread.js";
import { IS_ROOT } from "./helpers/bwrap.js";
import { makeTempDir, removeDir } from "./helpers/tree.js";

const createHost = createBuiltHost as unknown as (o: HostOptions) => Promise<Host>;
const PAGE = 4096;

let base: string;
let disk: string;
let mounted = false;
beforeAll(() => {
  assertBuilt();
  base = makeTempDir();
  disk = join(base, "disk");
  mkdirSync(disk);
  mkdirSync(join(base, "w"));
  if (!IS_ROOT) return;
  execFileSync("mount", ["-t", "tmpfs", "-o", "size=64k", "tmpfs", disk]);
  mounted = true;
});
afterAll(() => {
  if (mounted) {
    try {
      execFileSync("umount", [disk]);
    } catch {
      execFileSync("umount", ["-l", disk]);
    }
  }
  removeDir(base);
});

function hostOn(log: string): Promise<Host> {
  return createHost({
    sandbox: { paths: { w: { root: "w", mode: "rw" } } },
    basePath: base,
    workers: { main: { module: fixture("stop/steps.js") } },
    auditLog: log,
  });
}

/** `n` cheap operations, one audit line each. */
const checks = (n: number) => ({
  steps: Array.from({ length: n }, (_, i) => ({ op: "exists", args: [`/w/f${i}.txt`] })),
});

/** Fills the file system at `dir` to the last page. */
function fill(dir: string): void {
  const fd = openSync(join(dir, "filler"), "w");
  const chunk = Buffer.alloc(PAGE, 120);
  try {
    for (const size of [PAGE, 1]) {
      for (;;) {
        try {
          writeSync(fd, chunk, 0, size);
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code === "ENOSPC") break;
          throw err;
        }
      }
    }
  } finally {
    closeSync(fd);
  }
}

function parseLines(text: string): unknown[] {
  return text
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => JSON.parse(l) as unknown);
}

describe("the audit log on a full disk (issue 26, finding 4)", () => {
  test.skipIf(!IS_ROOT)(
    "a line that does not fit is not written at all; the host stops; a later host appends whole lines",
    async () => {
      const log = join(disk, "audit.jsonl");
      const first = await hostOn(log);
      let stopped: unknown;
      try {
        await first.run("main", checks(1));
        // The log's last page is part-used: the next lines fill it, and one
        // of them is cut short by the disk (a short write, then ENOSPC).
        while (statSync(log).size % PAGE === 0) await first.run("main", checks(1));
        fill(disk);
        stopped = await first.run("main", checks(200)).then(
          () => undefined,
          (e: unknown) => e,
        );
      } finally {
        await first.close();
      }
      expect((stopped as Error | undefined)?.message).toMatch(/the audit log could not be written/);
      const afterFailure = readFileSync(log, "utf8");
      expect(afterFailure.endsWith("\n")).toBe(true);
      const kept = parseLines(afterFailure).length;
      expect(kept).toBeGreaterThan(1);

      // Room again: the next host on the same log appends whole lines.
      unlinkSync(join(disk, "filler"));
      const second = await hostOn(log);
      try {
        await second.run("main", checks(2));
      } finally {
        await second.close();
      }
      expect(parseLines(readFileSync(log, "utf8"))).toHaveLength(kept + 2);
    },
  );

  test.skipIf(!IS_ROOT)(
    "a torn tail left by a killed host stays on its own line; the next host starts a fresh one",
    async () => {
      rmSync(join(disk, "filler"), { force: true });
      const log = join(disk, "torn.jsonl");
      const first = await hostOn(log);
      try {
        await first.run("main", checks(1));
      } finally {
        await first.close();
      }
      // What a host killed mid-line (or an older mountbox on a full disk) leaves.
      appendFileSync(log, '{"time":"202');
      const second = await hostOn(log);
      try {
        await second.run("main", checks(1));
      } finally {
        await second.close();
      }
      const lines = readFileSync(log, "utf8").split("\n");
      expect(lines.at(-1)).toBe("");
      expect(lines[1]).toBe('{"time":"202');
      expect(() => parseLines([lines[0], ...lines.slice(2)].join("\n"))).not.toThrow();
      expect(lines).toHaveLength(4);
    },
  );
});
