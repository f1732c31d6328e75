/**
 * Installs made once per packed tarball and reused: by every test file of
 * a run that needs the same install, and by the passes on other Node
 * versions (CI runs the suite four times). An install by npm, pnpm or yarn
 * does not depend on the Node that runs the client — the same packages land
 * in the same layout — while each pass still runs its hosts, threads and
 * processes from it on its own Node. The key is the tarball's content
 * (`npm pack` is deterministic: the same build gives the same bytes) and
 * what is installed with it, so a new build never meets an old install.
 *
 * Installs live under `.cache/installs` (git-ignored); those of other
 * tarballs are removed once they are an hour old (a run in progress may
 * still use one).
 */
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const CACHE = fileURLToPath(new URL("../../.cache/installs", import.meta.url));
const DONE = ".complete";
const STALE_MS = 60 * 60 * 1000;

/** The first 16 hex digits of the tarball's sha256. */
export function hashTarball(tarball: string): string {
  return createHash("sha256").update(readFileSync(tarball)).digest("hex").slice(0, 16);
}

/**
 * The folder of the install `label` of `tarball`, made by `make(dir)` into
 * a fresh folder the first time. Files that make it up must not be changed
 * by tests (copy what you change); files added beside them are fine.
 * Concurrent makers of one key both build; the first rename wins.
 */
export function cachedInstall(tarball: string, label: string, make: (dir: string) => void): string {
  const hash = hashTarball(tarball);
  const dir = join(CACHE, `${hash}-${label.replace(/[^\w.@-]+/g, "_")}`);
  if (existsSync(join(dir, DONE))) return dir;
  mkdirSync(CACHE, { recursive: true });
  removeStale(hash);
  const tmp = `${dir}.tmp-${process.pid}-${Math.random().toString(36).slice(2)}`;
  mkdirSync(tmp);
  try {
    make(tmp);
    writeFileSync(join(tmp, DONE), "");
    renameSync(tmp, dir);
  } catch (e) {
    rmSync(tmp, { recursive: true, force: true });
    // Another file of the run made the same install first: use it.
    if (existsSync(join(dir, DONE))) return dir;
    throw e;
  }
  return dir;
}

/** Removes other tarballs' installs (and abandoned partial ones) older than an hour. */
function removeStale(hash: string): void {
  const now = Date.now();
  for (const name of readdirSync(CACHE)) {
    const p = join(CACHE, name);
    const partial = name.includes(".tmp-");
    if (!partial && name.startsWith(`${hash}-`)) continue;
    try {
      if (now - statSync(p).mtimeMs > STALE_MS) rmSync(p, { recursive: true, force: true });
    } catch {
      // Removed meanwhile by another file of the run.
    }
  }
}

/**
 * The `node_modules` of an npm install of `tarball` with `specs` (cached as
 * above) copied into `app`: an app of its own for a test that writes into
 * it, at the cost of a copy instead of an install.
 */
export function copyNpmInstall(
  tarball: string,
  specs: string[],
  app: string,
  npmArgs: string[] = [],
): void {
  const installed = cachedInstall(tarball, `npm-${specs.join("+")}`, (at) => {
    writeFileSync(join(at, "package.json"), '{"name":"app","private":true,"type":"module"}');
    execFileSync(
      process.platform === "win32" ? "npm.cmd" : "npm",
      [
        "install",
        "--no-audit",
        "--no-fund",
        "--prefer-offline",
        "--ignore-scripts",
        ...npmArgs,
        tarball,
        ...specs,
      ],
      { cwd: at, stdio: "ignore", timeout: 300_000 },
    );
  });
  cpSync(join(installed, "node_modules"), join(app, "node_modules"), {
    recursive: true,
    verbatimSymlinks: true,
  });
}
