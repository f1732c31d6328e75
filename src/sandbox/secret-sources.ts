/**
 * Mounts whose source is itself withheld (review of issue 24): the
 * `secrets` list is matched on virtual paths, so a mount of `~/.ssh` at
 * `/keys`, or of the root's own `.aws` at `/cloud`, showed a secret folder
 * under a name no entry matches — readable by every tool, search and
 * shell command. A sandbox with such a mount is refused instead, at
 * creation and where a derived sandbox adds the entry: the user either
 * takes the entry off the list or mounts something else.
 */
import { type ConfigIssue, configError, quotePath } from "../errors/index.js";
import type { MountTable } from "./mount-table.js";
import type { SecretList } from "./secrets.js";

/**
 * Refuses a mount (the root included) whose real source path has a folder
 * name on `secrets`. `key`: the configuration key to name (default: `root`
 * or `mounts`, by the mount).
 * @throws ConfigError naming the mount by its target and the entry (never the host path)
 */
export function checkMountSources(table: MountTable, secrets: SecretList, key?: string): void {
  if (secrets.entries.length === 0) return;
  const issues: ConfigIssue[] = [];
  for (const m of table.mounts) {
    const hit = secrets.find(m.source);
    // A mount at a withheld name is withheld whole already.
    if (hit === undefined || secrets.covers(m.target)) continue;
    const what = m.target === "/" ? "the root folder" : `the mount at ${quotePath(m.target)}`;
    issues.push({
      path: [key ?? (m.target === "/" ? "root" : "mounts")],
      message: `${what} is, or lies inside, a folder withheld by the secrets entry ${quotePath(hit.entry)}: mounted, its files would be readable under a name the list does not match. Mount another folder, or take ${quotePath(hit.entry)} off the root sandbox's 'secrets' list if agents may read it`,
    });
  }
  if (issues.length > 0) throw configError(issues);
}
