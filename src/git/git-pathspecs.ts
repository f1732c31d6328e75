/**
 * What git is told to look at: the paths a call names, literally, and what
 * it must leave out — mounts inside the repository (another folder shows
 * there) and the sandbox's secrets (name globs withheld at any depth).
 */
import { matchWildcard } from "../sandbox/glob.js";
import type { Sandbox } from "../sandbox/sandbox.js";
import { quoteShell } from "./git-command.js";
import type { Repo } from "./git-repo.js";

/**
 * The pathspecs of a call, shell-quoted: each given path literally (none:
 * the whole work tree), then what git must leave out — the mounts inside
 * the repository and the sandbox's secrets at any depth.
 */
export function buildPathspecs(sandbox: Sandbox, repo: Repo, rels: readonly string[]): string {
  const specs = rels.filter((r) => r !== "").map((r) => `:(top,literal)${r}`);
  // The top itself given: everything (no positive pathspec).
  if (rels.includes("")) specs.length = 0;
  for (const m of repo.mounts) specs.push(`:(top,exclude,literal)${m}`);
  for (const name of readSecrets(sandbox)) {
    const n = name.replace(/\/+$/, "");
    if (n === "") continue;
    specs.push(`:(top,exclude,glob,icase)**/${n}`, `:(top,exclude,glob,icase)**/${n}/**`);
  }
  return specs.map(quoteShell).join(" ");
}

/**
 * The sandbox's `secrets` (name globs withheld at any depth), where its
 * description has them (a sandbox of this release may not).
 */
export function readSecrets(sandbox: Sandbox): string[] {
  const d = sandbox.describe() as { secrets?: unknown };
  return Array.isArray(d.secrets) ? d.secrets.filter((s) => typeof s === "string") : [];
}

/** True if a segment of the repository-relative `rel` matches one of the secret names. */
export function isSecretPath(secrets: readonly string[], rel: string): boolean {
  const segments = rel.toLowerCase().split("/");
  return secrets.some((s) => {
    const n = s.replace(/\/+$/, "").toLowerCase();
    return n !== "" && segments.some((seg) => matchWildcard(n, seg));
  });
}
