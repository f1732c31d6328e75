/**
 * The heavy-work pool (built JS from dist/: pool threads load
 * dist/src/pool/pool-worker.js): pooled listFiles and grep give exactly the
 * in-process results on a tree full of links, never return anything outside
 * the sandbox (races included), carry a child sandbox's narrower policy, and
 * refuse a policy whose folders changed on disk.
 */
import { execFile } from "node:child_process";
import { renameSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSandbox, IoError, type Sandbox } from "../dist/src/index.js";
import {
  closeSharedPool,
  type GrepOptions,
  type GrepResult,
  grepInProcess,
  grepSandbox,
  HeavyPool,
  listFilesPooled,
} from "../dist/src/pool/index.js";
import { deserializePolicy, serializePolicy } from "../dist/src/sandbox/policy-wire.js";
import { policyOf } from "../dist/src/sandbox/sandbox.js";
import { makeTempDir, removeDir, snapshotTree, writeTree } from "./helpers/tree.js";

const run = promisify(execFile);
const fixture = (name: string) =>
  fileURLToPath(new URL(`./fixtures/pool/${name}`, import.meta.url));

let base: string;
let outsideBefore: Record<string, string>;
/** Every sandbox shape the equality tests run on, by name. */
const boxes: Record<string, Sandbox> = {};

beforeAll(() => {
  base = makeTempDir("mountbox-pool-");
  const outside = join(base, "outside");
  writeTree(outside, {
    "secret.txt": "SECRET needle\n",
    dir: { "leaked-name.txt": "SECRET needle inner\n" },
  });
  writeTree(join(base, "ro"), {
    "locked.md": "needle locked\n",
    sub: { "x.ts": "needle in ro sub\n" },
  });
  writeTree(join(base, "root"), {
    src: {
      "a.ts": "const needle = 1;\nconst other = 2;\n// NEEDLE upper\n",
      deep: { "b.md": "# needle in markdown\n", "c.ts": "no match here\n" },
    },
    docs: { "guide.md": "Needle guide\r\nsecond line\r\nneedle crlf\r\n" },
    ".git": { config: "[core] needle in git\n" },
    "long.txt": `${"x".repeat(2000)} needle ${"y".repeat(100)}\n`,
    "big.md": `needle ${"z".repeat(6000)}\n`,
    "file-link": { link: "src/a.ts" },
    "dir-link": { link: "src" },
    "out-file": { link: join(outside, "secret.txt") },
    "out-dir": { link: join(outside, "dir") },
    "rel-escape": { link: "../outside/secret.txt" },
    dangling: { link: join(outside, "missing.txt") },
    "dangling-in": { link: "src/missing.ts" },
    chain1: { link: "chain2" },
    chain2: { link: "src/deep/b.md" },
    "chain-out1": { link: "chain-out2" },
    "chain-out2": { link: "rel-escape" },
    "into-ro": { link: join(base, "ro/locked.md") },
    race: { "x.txt": "inside needle\n", d: { "inner.txt": "inside needle\n" } },
  });
  // NUL bytes: early (binary, skipped) and past the 8 KiB probe (searched).
  writeFileSync(join(base, "root/data.bin"), Buffer.from("bin\0needle\n"));
  writeFileSync(join(base, "root/late-nul.txt"), `${"a".repeat(9000)}\0\nneedle late\n`);
  outsideBefore = snapshotTree(outside);

  const withRo = { root: "root", mounts: [{ source: "ro", target: "/ro", readonly: true }] };
  boxes.root = createSandbox(withRo, { basePath: base });
  boxes.suffixes = createSandbox(
    { ...withRo, suffixes: [".ts", ".md"], maxFileBytes: 4096 },
    { basePath: base },
  );
  boxes.named = createSandbox(
    {
      paths: {
        code: { root: "root/src", suffixes: [".ts"] },
        docs: { root: "root", mode: "rw", maxFileBytes: 100 },
        ro: { root: "ro" },
      },
    },
    { basePath: base },
  );
  boxes.child = boxes.root.derive({ allowRead: ["/src/deep", "/docs", "/ro/sub"] });
  boxes.restricted = boxes.root.restrict({ restrict: "/src", readonly: true });
});

afterAll(async () => {
  await closeSharedPool();
  // Nothing outside changed.
  expect(snapshotTree(join(base, "outside"))).toEqual(outsideBefore);
  removeDir(base);
});

/** A promise's value, or its error's class, code, message and path. */
async function settle<T>(p: Promise<T>): Promise<unknown> {
  try {
    return { value: await p };
  } catch (err) {
    const e = err as { name: string; code?: string; message: string; path?: string };
    return { error: e.name, code: e.code, message: e.message, path: e.path };
  }
}

/** Asserts nothing in a result names a host path or outside content. */
function expectNothingOutside(result: unknown): void {
  const text = JSON.stringify(result);
  expect(text).not.toContain(base);
  expect(text).not.toContain("SECRET");
  expect(text).not.toContain("leaked-name");
}

const LIST_CASES: [string, string][] = [
  ["/", "**/*"],
  ["/", "**/*.ts"],
  ["/src", "**/*"],
  ["/ro", "*"],
  ["/dir-link", "**/*"],
  ["/out-dir", "**/*"],
  ["/src/a.ts", "**/*"],
  ["/nope", "**/*"],
  ["/docs", "*.md"],
  ["/../x", "**/*"],
  ["code:", "**/*"],
];

describe("pooled listFiles equals in-process listFiles", () => {
  for (const name of ["root", "suffixes", "named", "child", "restricted"]) {
    it(`on the '${name}' sandbox`, async () => {
      const sb = boxes[name] as Sandbox;
      for (const [path, pattern] of LIST_CASES) {
        const pooled = await settle(listFilesPooled(sb, path, pattern));
        const inProcess = await settle(sb.listFiles(path, pattern));
        expect({ path, pattern, r: pooled }).toEqual({ path, pattern, r: inProcess });
        expectNothingOutside(pooled);
      }
    });
  }

  it("lists no link to outside, no dangling link, no directory link", async () => {
    const listed = await listFilesPooled(boxes.root as Sandbox);
    for (const p of ["/out-file", "/rel-escape", "/dangling", "/dangling-in", "/chain-out1"])
      expect(listed).not.toContain(p);
    expect(listed.some((p) => p.startsWith("/dir-link/") || p.startsWith("/out-dir/"))).toBe(false);
    expect(listed).toEqual(expect.arrayContaining(["/file-link", "/chain1", "/into-ro"]));
    expect(listed).toEqual(expect.arrayContaining(["/.git/config", "/ro/locked.md"]));
  });
});

const GREP_CASES: GrepOptions[] = [
  { pattern: "needle" },
  { pattern: "needle", flags: "i" },
  { pattern: "needle", flags: "gi" },
  { pattern: "needle", glob: "**/*.ts" },
  { pattern: "needle", path: "/src" },
  { pattern: "needle", path: "/src/a.ts" },
  { pattern: "needle", path: "/out-file" },
  { pattern: "needle", path: "/out-dir" },
  { pattern: "needle", path: "/chain-out1" },
  { pattern: "needle", path: "/ro" },
  { pattern: "needle", path: "/nope" },
  { pattern: "needle", maxMatches: 2 },
  { pattern: "needle", maxBytes: 64 },
  { pattern: "needle", maxFileBytes: 1000 },
  { pattern: "^$" },
  { pattern: "(" },
  { pattern: "needle", flags: "x" },
  { pattern: "needle", path: "code:" },
];

describe("pooled grep equals in-process grep", () => {
  for (const name of ["root", "suffixes", "named", "child", "restricted"]) {
    it(`on the '${name}' sandbox`, async () => {
      const sb = boxes[name] as Sandbox;
      for (const opts of GREP_CASES) {
        const pooled = await settle(grepSandbox(sb, opts));
        const inProcess = await settle(grepInProcess(sb, opts));
        expect({ opts, r: pooled }).toEqual({ opts, r: inProcess });
        expectNothingOutside(pooled);
      }
    });
  }

  it("finds lines through the verified read path and skips what it must", async () => {
    const r = await grepSandbox(boxes.root as Sandbox, { pattern: "needle", flags: "i" });
    const where = r.matches.map((m) => `${m.path}:${m.line}`);
    expect(where).toEqual(
      expect.arrayContaining([
        "/src/a.ts:1",
        "/src/a.ts:3",
        "/docs/guide.md:1",
        "/docs/guide.md:3",
        "/.git/config:1",
        "/file-link:1",
        "/chain1:1",
        "/into-ro:1",
        "/ro/locked.md:1",
        "/late-nul.txt:2",
      ]),
    );
    // NUL in the first 8 KiB: binary, skipped and said so.
    expect(where.some((w) => w.startsWith("/data.bin"))).toBe(false);
    expect(r.notice).toContain("1 binary file");
    // CR stripped; long lines cut.
    expect(r.matches.find((m) => m.path === "/docs/guide.md")?.text).toBe("Needle guide");
    const long = r.matches.find((m) => m.path === "/long.txt")?.text ?? "";
    expect(long).toHaveLength(501);
    expect(long.endsWith("…")).toBe(true);
    expect(r.truncated).toBe(false);
  });

  it("applies suffix rules and size caps of each mount", async () => {
    const r = await grepSandbox(boxes.suffixes as Sandbox, { pattern: "needle" });
    const paths = new Set(r.matches.map((m) => m.path));
    expect([...paths].every((p) => p.endsWith(".ts") || p.endsWith(".md"))).toBe(true);
    expect(paths.has("/big.md")).toBe(false); // over maxFileBytes 4096
    expect(r.notice).toContain("1 file over the size limit");
    const named = await grepSandbox(boxes.named as Sandbox, { pattern: "needle" });
    const namedPaths = new Set(named.matches.map((m) => m.path));
    expect(namedPaths.has("/code/a.ts")).toBe(true);
    expect(namedPaths.has("/code/deep/b.md")).toBe(false); // suffix rule of /code
    expect(namedPaths.has("/docs/long.txt")).toBe(false); // over /docs' 100 bytes
  });

  it("stops at its budgets and says so", async () => {
    const few = await grepSandbox(boxes.root as Sandbox, { pattern: "needle", maxMatches: 2 });
    expect(few.matches).toHaveLength(2);
    expect(few.truncated).toBe(true);
    expect(few.notice).toContain("Showing the first 2 matches");
    const bytes = await grepSandbox(boxes.root as Sandbox, { pattern: "needle", maxBytes: 64 });
    expect(bytes.truncated).toBe(true);
    expect(bytes.notice).toContain("byte budget");
  });
});

describe("the serialized policy", () => {
  it("restricts exactly as the child sandbox it came from", async () => {
    const child = boxes.child as Sandbox;
    const parent = policyOf(boxes.root as Sandbox);
    const original = policyOf(child);
    const rebuilt = deserializePolicy(structuredClone(serializePolicy(original)));
    expect(rebuilt.readableRoots).toEqual(original.readableRoots);
    expect(rebuilt.writableRoots).toEqual(original.writableRoots);
    const paths = [
      ...(await (boxes.root as Sandbox).listFiles()),
      "/",
      "/src",
      "/src/deep",
      "/docs",
      "/ro",
      "/ro/sub",
      "/.git/config",
      "/out-file",
      "/dir-link/a.ts",
      "/new.txt",
      "/src/deep/new.ts",
    ];
    for (const p of paths) {
      for (const access of ["read", "write"] as const) {
        const verdict = (policy: typeof parent) => {
          try {
            return policy.resolve(p, access).virtual;
          } catch (err) {
            return (err as Error).message;
          }
        };
        expect({ p, access, v: verdict(rebuilt) }).toEqual({ p, access, v: verdict(original) });
      }
    }
    // And the pool, given the child, sees only the child's files.
    const found = await grepSandbox(child, { pattern: "needle", flags: "i" });
    expect(found.matches.length).toBeGreaterThan(0);
    for (const m of found.matches) expect(child.canRead(m.path)).toBe(true);
    expect(found.matches.some((m) => m.path.startsWith("/src/a.ts"))).toBe(false);
    const listed = await listFilesPooled(child);
    expect(listed).toEqual(await child.listFiles());
    expect(listed.every((p) => child.canRead(p))).toBe(true);
  });

  it("is refused when a mount source changed on disk since the sandbox was created", async () => {
    const dir = makeTempDir("mountbox-pool-moved-");
    try {
      writeTree(join(dir, "real"), { "a.txt": "needle\n" });
      writeTree(join(dir, "other"), { "a.txt": "needle other\n" });
      const sb = createSandbox({ root: "real" }, { basePath: dir });
      expect((await grepSandbox(sb, { pattern: "needle" })).matches).toHaveLength(1);
      renameSync(join(dir, "real"), join(dir, "real-moved"));
      symlinkSync(join(dir, "other"), join(dir, "real"));
      expect(() => deserializePolicy(serializePolicy(policyOf(sb)))).toThrow(IoError);
      const r = await settle(grepSandbox(sb, { pattern: "needle" }));
      expect(r).toMatchObject({ error: "IoError", code: "io_error" });
      expectNothingOutside(r);
      expect(JSON.stringify(r)).not.toContain(dir);
    } finally {
      removeDir(dir);
    }
  });
});

describe("the pool's threads", () => {
  it("are terminated when a task is aborted or runs far past its time budget", async () => {
    const dir = makeTempDir("mountbox-pool-redos-");
    const pool = new HeavyPool({ maxThreads: 1 });
    try {
      // Catastrophic backtracking: only terminating the thread stops it.
      writeTree(dir, { "a.txt": `${"a".repeat(40)}!\n` });
      const sb = createSandbox({ root: dir });
      const redos = { pattern: "^(a+)+$", timeBudgetMs: 100 };
      let ticks = 0;
      const ticker = setInterval(() => ticks++, 10);
      const late = await settle(grepSandbox(sb, redos, { pool }));
      clearInterval(ticker);
      expect(late).toMatchObject({ error: "IoError", code: "io_error" });
      expect((late as { message: string }).message).toContain("did not finish within");
      // The host's event loop ran all along.
      expect(ticks).toBeGreaterThan(10);
      const controller = new AbortController();
      setTimeout(() => controller.abort(), 200);
      const stopped = await settle(
        grepSandbox(sb, { ...redos, timeBudgetMs: 60_000 }, { pool, signal: controller.signal }),
      );
      expect(stopped).toMatchObject({ error: "IoError", code: "io_error" });
      expect((stopped as { message: string }).message).toContain("stopped before it finished");
      // The pool goes on with a fresh thread.
      writeFileSync(join(dir, "a.txt"), "needle\n");
      expect((await grepSandbox(sb, { pattern: "needle" }, { pool })).matches).toHaveLength(1);
    } finally {
      await pool.close();
      removeDir(dir);
    }
  });

  it("are shared fairly: one owner's slow searches never hold every thread (review 3, t5)", async () => {
    const dir = makeTempDir("mountbox-pool-fair-");
    const pool = new HeavyPool({ maxThreads: 2 });
    try {
      writeTree(dir, { "evil.txt": `${"a".repeat(40)}!\n`, "ok.txt": "needle\n" });
      const sb = createSandbox({ root: dir });
      const hogOwner = {};
      const hog = { pattern: "^(a+)+$", path: "/evil.txt", timeBudgetMs: 100 };
      const t0 = performance.now();
      // The hog's two searches run one after the other, each killed 2.1 s after it starts.
      const hogs = [1, 2].map(() =>
        settle(grepSandbox(sb, hog, { pool, owner: hogOwner })).then((r) => ({
          r,
          at: performance.now() - t0,
        })),
      );
      await new Promise((r) => setTimeout(r, 100));
      // Another agent's search gets the second thread at once.
      const victim = await grepSandbox(sb, { pattern: "needle", path: "/ok.txt" }, { pool });
      const victimAt = performance.now() - t0;
      expect(victim.matches).toHaveLength(1);
      const [first, second] = await Promise.all(hogs);
      // It did not wait for a hog's thread: it ended before either hog
      // search was killed (an order, not a time: a loaded machine slows both).
      expect(victimAt).toBeLessThan(Math.min(first!.at, second!.at));
      for (const { r } of [first!, second!]) {
        expect(r).toMatchObject({ error: "IoError", code: "io_error" });
        expect((r as { message: string }).message).toContain(
          "did not finish within 2100 ms of running",
        );
      }
      // The second waited for the first: its limit counted from its own start.
      expect(second!.at).toBeGreaterThan(first!.at + 1_500);

      // A search that waits too long for a thread says so, and does not blame its pattern.
      const busy = [1, 2].map(() => settle(grepSandbox(sb, hog, { pool })));
      await new Promise((r) => setTimeout(r, 100));
      const queued = await settle(
        grepSandbox(sb, { pattern: "needle", path: "/ok.txt" }, { pool, queueTimeoutMs: 200 }),
      );
      expect((queued as { message: string }).message).toContain(
        "waited 200 ms for a free host thread",
      );
      expect((queued as { message: string }).message).not.toContain("pattern");
      await Promise.all(busy);
      expect(pool.queued).toBe(0);
    } finally {
      await pool.close();
      removeDir(dir);
    }
  });

  it("do not keep a process alive when the pool is never closed", async () => {
    const { stdout } = await run(
      process.execPath,
      [fixture("forgotten-pool.js"), join(base, "root/src")],
      {
        timeout: 25_000,
      },
    );
    const out = JSON.parse(stdout) as { matches: number; listed: number; threads: number };
    expect(out).toMatchObject({ matches: 2, listed: 3 });
    // A thread was still alive when the script ended, and the process exited anyway.
    expect(out.threads).toBeGreaterThan(0);
  });
});

/** For 3 s, another process swaps /race's file and folder for links to outside. */
function startSwapper() {
  return run(process.execPath, [
    fixture("race-swapper.js"),
    join(base, "root/race"),
    join(base, "outside/secret.txt"),
    join(base, "outside/dir"),
    "3000",
  ]);
}

describe("races: folders swapped for links while a listing walks", () => {
  it("never lists a name from outside, pooled or in-process", async () => {
    const sb = boxes.root as Sandbox;
    const swapper = startSwapper();
    let done = false;
    swapper.finally(() => {
      done = true;
    });
    let listings = 0;
    while (!done) {
      const results = await Promise.all([
        settle(listFilesPooled(sb, "/race", "**/*")),
        settle(sb.listFiles("/race", "**/*")),
      ]);
      for (const r of results) {
        expectNothingOutside(r);
        if ("value" in (r as object)) listings++;
      }
    }
    expect(Number((await swapper).stdout)).toBeGreaterThan(0);
    expect(listings).toBeGreaterThan(0);
  });
});

describe("races: files swapped for links while a pooled grep runs", () => {
  it("never returns anything outside the sandbox", async () => {
    const sb = boxes.root as Sandbox;
    const swapper = startSwapper();
    const seen: GrepResult[] = [];
    let done = false;
    swapper.finally(() => {
      done = true;
    });
    while (!done) {
      const [pooled, inProcess] = await Promise.all([
        settle(grepSandbox(sb, { pattern: "needle", path: "/race" })),
        settle(grepInProcess(sb, { pattern: "needle", path: "/race" })),
      ]);
      for (const r of [pooled, inProcess]) {
        expectNothingOutside(r);
        if ("value" in (r as object)) seen.push((r as { value: GrepResult }).value);
      }
    }
    const swaps = Number((await swapper).stdout);
    expect(swaps).toBeGreaterThan(0);
    expect(seen.length).toBeGreaterThan(0);
    for (const r of seen) {
      for (const m of r.matches) {
        // The swapper's own temp files are inside too; links are never read.
        expect(m.path.startsWith("/race/")).toBe(true);
        expect(m.text).toBe("inside needle");
      }
    }
    // The files themselves were found whenever they were in place.
    expect(seen.some((r) => r.matches.length > 0)).toBe(true);
  });
});
