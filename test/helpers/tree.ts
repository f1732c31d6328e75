/**
 * Real temp trees for tests: files, directories and symlinks on disk.
 */
import {
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

/** A tree spec: `"text"` is a file, `{}` a directory, `{ link: target }` a symlink. */
export type TreeSpec = { [name: string]: string | TreeSpec | { link: string } };

/** Creates a fresh real temp directory (realpath'd). */
export function makeTempDir(prefix = "mountbox-test-"): string {
  return realpathSync(mkdtempSync(join(tmpdir(), prefix)));
}

function isLink(v: unknown): v is { link: string } {
  return (
    typeof v === "object" &&
    v !== null &&
    "link" in v &&
    typeof (v as { link: unknown }).link === "string"
  );
}

/** Writes a spec under `dir` (links are created as given, absolute or relative). */
export function writeTree(dir: string, spec: TreeSpec): void {
  mkdirSync(dir, { recursive: true });
  for (const [name, value] of Object.entries(spec)) {
    const p = join(dir, name);
    mkdirSync(dirname(p), { recursive: true });
    if (typeof value === "string") writeFileSync(p, value);
    else if (isLink(value)) symlinkSync(value.link, p);
    else writeTree(p, value as TreeSpec);
  }
}

/** A snapshot of everything under `dir`: path → content / `<dir>` / `-> target`. */
export function snapshotTree(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string, rel: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      const r = rel ? `${rel}/${e.name}` : e.name;
      const st = lstatSync(p);
      if (st.isSymbolicLink()) out[r] = `-> ${readlinkSync(p)}`;
      else if (st.isDirectory()) {
        out[r] = "<dir>";
        walk(p, r);
      } else out[r] = readFileSync(p, "utf8");
    }
  };
  walk(dir, "");
  return out;
}

/** Removes a temp directory. */
export function removeDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}
