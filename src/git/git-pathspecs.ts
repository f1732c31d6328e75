/**
 * What git is told to look at: the paths a call names, literally, and what
 * it must leave out — mounts inside the repository (another folder shows
 * there) and the sandbox's secrets (name globs withheld at any depth).
 */
import { policyOf, type Sandbox } from "../sandbox/sandbox.js";
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
    // Git's glob reads `[…]` as a set of characters, where the secrets
    // list means the characters themselves (`secret[1].txt`): escaped, or
    // that name would show in status and diffs.
    const n = name.replace(/\/+$/, "").replace(/[[\]\\]/g, "\\$&");
    if (n === "") continue;
    specs.push(`:(top,exclude,glob,icase)**/${n}`, `:(top,exclude,glob,icase)**/${n}/**`);
  }
  return specs.map(quoteShell).join(" ");
}

/** The sandbox's `secrets` (name globs withheld at any depth). */
export function readSecrets(sandbox: Sandbox): readonly string[] {
  return policyOf(sandbox).secrets.entries;
}

/**
 * The `secrets` entry a segment of the repository-relative `rel` matches
 * (the sandbox's own matcher), or `undefined`.
 */
export function findSecretEntry(sandbox: Sandbox, rel: string): string | undefined {
  return policyOf(sandbox).secrets.find(`/${rel}`)?.entry;
}
