/**
 * The folders a workspace draws its packages from (npm, Yarn and Bun
 * `workspaces` in `package.json`; pnpm's `pnpm-workspace.yaml`). Every
 * package there is installed with the workspace: an install runs its
 * scripts and `binding.gyp`, and links it into `node_modules` — ahead of the
 * registry where its name and version fit a dependency (found by an
 * adversarial review: a planted `packages/x` named `zod` replaced the zod
 * the host loads). So a workspace above the host makes those folders the
 * host's code, new packages in them included.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";

/** Characters that start the pattern part of a workspace glob. */
const GLOB = /[*?[\]{}!]/;

/**
 * The folders the workspace at `dir` (if any) takes packages from: each
 * pattern's part before its first glob character (`packages/*` →
 * `dir/packages`; `*` → `dir` itself). Negated patterns are skipped.
 */
export function listWorkspaceFolders(dir: string): string[] {
  const out = new Set<string>();
  for (const pattern of [...readManifestPatterns(dir), ...readPnpmPatterns(dir)]) {
    if (pattern.startsWith("!")) continue;
    const fixed: string[] = [];
    for (const part of pattern.replace(/^\.\//, "").split("/")) {
      if (part === "" || part === ".") continue;
      if (GLOB.test(part) || part === "..") break;
      fixed.push(part);
    }
    // A pattern that climbs out of the workspace (`../x`) stops at it.
    out.add(join(dir, ...fixed));
  }
  return [...out];
}

/** `workspaces` of `dir/package.json`: a list, or `{ packages: [...] }` (Yarn classic). */
function readManifestPatterns(dir: string): string[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
  } catch {
    return [];
  }
  const w = (parsed as { workspaces?: unknown } | null)?.workspaces;
  const list = Array.isArray(w) ? w : (w as { packages?: unknown } | undefined)?.packages;
  return Array.isArray(list) ? list.filter((p): p is string => typeof p === "string") : [];
}

/** The `packages:` list of `dir/pnpm-workspace.yaml` (a plain YAML list of strings). */
function readPnpmPatterns(dir: string): string[] {
  let text: string;
  try {
    text = readFileSync(join(dir, "pnpm-workspace.yaml"), "utf8");
  } catch {
    return [];
  }
  const out: string[] = [];
  let inPackages = false;
  for (const line of text.split(/\r?\n/)) {
    if (/^\S/.test(line)) inPackages = /^packages\s*:/.test(line);
    else if (inPackages) {
      const item = /^\s*-\s*(['"]?)(.*?)\1\s*(?:#.*)?$/.exec(line);
      if (item?.[2]) out.push(item[2]);
    }
  }
  // A flow list on the key's own line: packages: ['a/*', 'b']
  const flow = /^packages\s*:\s*\[(.*)\]/m.exec(text)?.[1];
  if (flow) for (const p of flow.split(",")) out.push(p.trim().replace(/^['"]|['"]$/g, ""));
  return out.filter((p) => p !== "");
}
