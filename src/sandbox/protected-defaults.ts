/**
 * The default `protected` list (DESIGN §10, "Secure defaults"): names that
 * a host, a developer's shell or their tools later execute or obey, so an
 * agent that could write one could run code as the user. Writes, creations,
 * moves and removals there are refused at any depth in-process and through
 * every port, and held read-only (present or absent) at the top of every
 * writable folder a shell command sees. Pure data.
 */

/**
 * Protected names by default, each with what executes it (the README's
 * "Secure defaults" section says the same to users).
 */
export const PROTECTED_DEFAULTS: readonly { name: string; why: string }[] = Object.freeze([
  { name: ".git", why: "hooks, fsmonitor and config that git runs" },
  { name: ".bashrc", why: "bash runs it at every interactive shell" },
  { name: ".bash_profile", why: "bash runs it at every login shell" },
  { name: ".bash_login", why: "bash runs it at a login shell" },
  { name: ".bash_logout", why: "bash runs it when a login shell exits" },
  { name: ".profile", why: "sh, dash and bash run it at a login shell" },
  { name: ".zshrc", why: "zsh runs it at every interactive shell" },
  { name: ".zshenv", why: "zsh runs it at every start, scripts included" },
  { name: ".zprofile", why: "zsh runs it at a login shell" },
  { name: ".zlogin", why: "zsh runs it at a login shell" },
  { name: ".zlogout", why: "zsh runs it when a login shell exits" },
  { name: ".gitconfig", why: "git obeys it (aliases, hooksPath, fsmonitor, pagers)" },
  { name: ".gitmodules", why: "git clones and updates submodules from it" },
  { name: ".husky", why: "git hooks that husky installs and git runs" },
  { name: ".vscode", why: "VS Code runs its tasks and obeys its settings" },
  { name: ".idea", why: "JetBrains IDEs run its run configurations and tools" },
  { name: ".claude", why: "Claude Code runs its hooks and obeys its settings" },
  { name: ".mcp.json", why: "MCP clients start the servers it lists" },
  { name: ".envrc", why: "direnv runs it when a shell enters the folder" },
  { name: ".npmrc", why: "npm obeys it (script-shell, registries, tokens)" },
  { name: ".yarnrc", why: "yarn 1 obeys it (yarn-path runs a file)" },
  { name: ".yarnrc.yml", why: "yarn obeys it (yarnPath, plugins run code)" },
  { name: ".pnpmfile.cjs", why: "pnpm runs its hooks at every install" },
]);

/** The default `protected` list: the names of {@link PROTECTED_DEFAULTS}. */
export const DEFAULT_PROTECTED: readonly string[] = Object.freeze(
  PROTECTED_DEFAULTS.map((d) => d.name),
);

/**
 * Protected names a package manager inside a command reads, and fails on
 * when it is a folder (yarn 1 and yarn 2+ read their rc file wherever it
 * is, pnpm requires its pnpmfile): where one is absent, a shell command
 * gets an empty read-only *file* in its place (empty is a valid config).
 * Every other absent protected place gets an empty read-only folder, which
 * `git status` does not show and the other tools skip or never read there.
 */
const FILE_NAMES = new Set([".yarnrc", ".yarnrc.yml", ".pnpmfile.cjs"]);

/**
 * Protected names only a user's home folder gives meaning to: shells read
 * their rc files, and git its `.gitconfig`, from `$HOME` alone. Absent, a
 * shell command gets a placeholder for them only in a folder that is a
 * home folder (each placeholder is a folder made and removed on the disk
 * for every command); present, they are held read-only everywhere, and
 * in-process they are protected at any depth like every other name.
 */
const HOME_ONLY_NAMES = new Set([
  ".bashrc",
  ".bash_profile",
  ".bash_login",
  ".bash_logout",
  ".profile",
  ".zshrc",
  ".zshenv",
  ".zprofile",
  ".zlogin",
  ".zlogout",
  ".gitconfig",
]);

/** True for a name that only matters in a home folder (see {@link HOME_ONLY_NAMES}). */
export function isHomeOnly(name: string): boolean {
  return HOME_ONLY_NAMES.has(name.toLowerCase());
}

/** True if an absent protected place named `name` is held as an empty file (see {@link FILE_NAMES}). */
export function isFileByConvention(name: string): boolean {
  return FILE_NAMES.has(name.toLowerCase());
}
