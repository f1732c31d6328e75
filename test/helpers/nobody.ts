/**
 * Host programs the OS tests run as another user (`nobody`, through
 * `setpriv`). That user cannot read a clone in a private folder (`mktemp -d`
 * makes it 0700, and so is `/root`), so what it runs — the fixture
 * programs, the built library with `package.json`, the packages the library
 * imports, and Node itself when it lives in such a folder (`scripts/test-node.sh`
 * keeps it in `.cache/`) — is copied once per test file to a temp folder
 * everyone can read, laid out as the repository is, so the fixtures'
 * relative imports (`../../../dist/src/index.js`) still hold.
 */
import { spawnSync } from "node:child_process";
import {
  chmodSync,
  copyFileSync,
  cpSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { collectPackages } from "../../src/threads/module-grants.js";

const REPO = fileURLToPath(new URL("../..", import.meta.url));

/** `setpriv`'s arguments that make a command run as `nobody`, with no groups. */
export const AS_NOBODY = ["--reuid=65534", "--regid=65534", "--clear-groups"];

/** Where `nobody` finds what it runs. */
export interface NobodyStage {
  /** The staged copy of the repository's layout. */
  root: string;
  /** The built library's entry (`dist/src/index.js`). */
  dist: string;
  /** The CLI (`dist/src/cli/main.js`). */
  cli: string;
  /** A Node binary `nobody` can run: the running one where it can, else a copy. */
  node: string;
  /** A fixture program under `test/fixtures/`, e.g. `os/run.mjs`. */
  fixture(name: string): string;
}

let stage: NobodyStage | undefined;

/**
 * Stages the library, the fixtures and Node for `nobody` (once per test
 * file; the repository must be built). Remove it with {@link removeNobodyStage}.
 */
export function stageForNobody(): NobodyStage {
  if (stage) return stage;
  const root = realpathSync(mkdtempSync(join(tmpdir(), "mountbox-nobody-")));
  for (const part of [
    "package.json",
    "dist/src",
    "dist/workers",
    "test/fixtures/os",
    "test/fixtures/process",
  ])
    cpSync(join(REPO, part), join(root, part), { recursive: true });
  const deps = Object.keys(
    (
      JSON.parse(readFileSync(join(REPO, "package.json"), "utf8")) as {
        dependencies: Record<string, string>;
      }
    ).dependencies,
  );
  // Each package at the place it has in the repository (nested ones nested).
  for (const pkg of collectPackages(deps, REPO).found)
    cpSync(pkg.real, join(root, relative(REPO, pkg.path)), { recursive: true });
  const node = canRunAsNobody(process.execPath) ? process.execPath : copyNode(root);
  openToAll(root);
  stage = {
    root,
    node,
    dist: join(root, "dist/src/index.js"),
    cli: join(root, "dist/src/cli/main.js"),
    fixture: (name) => join(root, "test/fixtures", name),
  };
  return stage;
}

/** Removes what {@link stageForNobody} staged. */
export function removeNobodyStage(): void {
  if (stage) rmSync(stage.root, { recursive: true, force: true });
  stage = undefined;
}

/**
 * True if `nobody` can start `node` from a shell, as some tests do (setpriv
 * itself could start a binary in a folder `nobody` cannot search, seen with
 * util-linux 2.38.1, though that Node could read nothing there).
 */
function canRunAsNobody(node: string): boolean {
  const check = spawnSync("setpriv", [...AS_NOBODY, "/bin/sh", "-c", 'exec "$0" -e ""', node], {
    stdio: "ignore",
    timeout: 30_000,
  });
  return check.status === 0;
}

/** A copy of the running Node in `root` (a hard link would share, and open up, its mode). */
function copyNode(root: string): string {
  const to = join(root, "bin", "node");
  mkdirSync(dirname(to), { recursive: true });
  copyFileSync(process.execPath, to);
  return to;
}

/** Makes everything under `dir` readable (folders searchable) by every user, whatever the umask was. */
function openToAll(dir: string): void {
  chmodSync(dir, 0o755);
  for (const name of readdirSync(dir, { recursive: true, encoding: "utf8" })) {
    const p = join(dir, name);
    const st = lstatSync(p);
    if (st.isSymbolicLink()) continue;
    chmodSync(p, st.isDirectory() || (st.mode & 0o100) !== 0 ? 0o755 : 0o644);
  }
}
