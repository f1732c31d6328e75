/**
 * Issue 26, finding 5: mountbox's own temp files (`.mountbox-….tmp`, a write
 * in progress or one a killed host left) are never listed or searched — in
 * process, in a pool thread, from an agent's thread — and a listing removes
 * the ones a killed host left (writer gone, untouched for 10 minutes). Such
 * names cannot be created through the API.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  createHost as createBuiltHost,
  createSandbox as createBuiltSandbox,
  grepInProcess,
  grepSandbox,
  listFilesPooled,
} from "../dist/src/index.js";
import type { Host, HostOptions, Sandbox, SandboxConfig } from "../src/index.js";
import { assertBuilt } from "./conformance/thread.js";
import { makeTempDir, removeDir } from "./helpers/tree.js";

const createHost = createBuiltHost as unknown as (o: HostOptions) => Promise<Host>;
const createSandbox = createBuiltSandbox as unknown as (c: SandboxConfig) => Sandbox;
const fx = (name: string) => fileURLToPath(new URL(`./fixtures/load/${name}`, import.meta.url));

const HEX = "0123456789abcdef";
/** A process id that is certainly not running: a child that has exited. */
let deadPid: number;
let base: string;
let root: string;

beforeAll(() => {
  assertBuilt();
  deadPid = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], {
    encoding: "utf8",
  }).stdout as unknown as number;
});

beforeEach(() => {
  if (base) removeDir(base);
  base = makeTempDir();
  root = join(base, "root");
  mkdirSync(join(root, "sub"), { recursive: true });
  mkdirSync(join(base, "ro"));
  writeFileSync(join(root, "a.txt"), "needle\n");
});
afterAll(() => removeDir(base));

/** Plants a file named like a temp file, `ageMin` minutes old. */
function plant(dir: string, name: string, ageMin = 0): string {
  const p = join(dir, name);
  writeFileSync(p, "needle in a temp file\n");
  const t = Date.now() / 1000 - ageMin * 60;
  utimesSync(p, t, t);
  return p;
}

describe("temp files are invisible", () => {
  it("to listings and searches in process, in the pool and from an agent's thread", async () => {
    plant(root, `.mountbox-${process.pid}-${HEX}.tmp`); // a write in progress here
    plant(join(root, "sub"), `.mountbox-${HEX}.tmp`); // the form before issue 26
    plant(join(root, "sub"), `.mountbox-${deadPid}-${HEX}.tmp`); // a killed host's, fresh
    const sb = createSandbox({ root });
    const want = ["/a.txt"];
    expect(await sb.listFiles("/")).toEqual(want);
    expect(await listFilesPooled(sb, "/", "**/*")).toEqual(want);
    const paths = (r: { matches: { path: string }[] }) => r.matches.map((m) => m.path);
    expect(paths(await grepInProcess(sb, { pattern: "needle" }))).toEqual(want);
    expect(paths(await grepSandbox(sb, { pattern: "needle" }))).toEqual(want);
    const host = await createHost({
      sandbox: { root },
      workers: { lister: { module: fx("lister.js") } },
    });
    try {
      expect(await host.run("lister", { pattern: "needle" })).toEqual({ files: want, grep: want });
    } finally {
      await host.close();
    }
    // Fresh ones are left alone: their writer may still be at work.
    expect(existsSync(join(root, `.mountbox-${process.pid}-${HEX}.tmp`))).toBe(true);
    expect(existsSync(join(root, "sub", `.mountbox-${deadPid}-${HEX}.tmp`))).toBe(true);
  });
});

describe("a killed host's temp files are cleaned up", () => {
  it("by a listing: writer gone and untouched for 10 minutes; nothing else", async () => {
    const gone = plant(root, `.mountbox-${deadPid}-${HEX}.tmp`, 11);
    const oldForm = plant(join(root, "sub"), `.mountbox-${HEX}.tmp`, 61);
    const alive = plant(join(root, "sub"), `.mountbox-${process.pid}-${HEX}.tmp`, 30);
    const recent = plant(root, `.mountbox-${deadPid}-${"f".repeat(16)}.tmp`, 5);
    const oldFormRecent = plant(root, `.mountbox-${"e".repeat(16)}.tmp`, 30);
    const readonly = plant(join(base, "ro"), `.mountbox-${deadPid}-${HEX}.tmp`, 60);
    const notOurs = plant(root, `.mountbox-${deadPid}-${HEX}.tmp.bak`, 60);
    const sb = createSandbox({
      root,
      mounts: [{ source: join(base, "ro"), target: "/ro", readonly: true }],
    });
    expect(await sb.listFiles("/")).toEqual([`/.mountbox-${deadPid}-${HEX}.tmp.bak`, "/a.txt"]);
    expect(existsSync(gone)).toBe(false);
    expect(existsSync(oldForm)).toBe(false);
    for (const kept of [alive, recent, oldFormRecent, readonly, notOurs])
      expect(existsSync(kept)).toBe(true);
  });
});

describe("temp names are reserved", () => {
  it("cannot be created by writeFile, editFile, mkdir or move", async () => {
    const sb = createSandbox({ root });
    const name = `/sub/.mountbox-${process.pid}-${HEX}.tmp`;
    const code = (p: Promise<unknown>) =>
      p.then(
        () => "ok",
        (e: { code: string; message: string }) => {
          expect(e.message).toContain("reserved for mountbox's temporary files");
          expect(e.message).not.toContain(base);
          return e.code;
        },
      );
    expect(await code(sb.writeFile(name, "x"))).toBe("invalid_path");
    expect(await code(sb.mkdir(`${name}/d`))).toBe("invalid_path");
    expect(await code(sb.move("/a.txt", name))).toBe("invalid_path");
    plant(join(root, "sub"), `.mountbox-${process.pid}-${HEX}.tmp`);
    expect(await code(sb.editFile(name, [{ oldText: "needle", newText: "x" }]))).toBe(
      "invalid_path",
    );
    // Names that only look alike are ordinary names.
    await sb.writeFile("/sub/.mountbox-notes.tmp", "fine");
    expect(existsSync(join(root, "a.txt"))).toBe(true);
  });
});
