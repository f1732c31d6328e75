/**
 * The host places a stdio MCP server's code is started from (issue 23
 * review): the host runs the server itself, unconfined and with the
 * credentials of its `env`, at `createHost` and again at every restart. A
 * script it names (`node ./tools/server.mjs`) lying in an area agents may
 * write was theirs to rewrite — run on the host by the next restart or
 * the next run. These places join the workers' code in the sandbox's
 * `protected` list (code-protection.ts).
 *
 * Covered: each file the command line names (the command when it is a
 * path, each argument, the value of `--opt=value`), resolved against the
 * server's working folder, with its folder when that folder lies below the
 * working folder and the file is code (a script's helpers sit beside it);
 * every place a bare command is looked up on `PATH` up to where it is
 * found (a writable folder earlier on `PATH` could take its name); and the
 * working folder's package lookups (`node_modules`, `package.json`, up the
 * tree: `npx`, Node's imports). Not covered: what a server reads from its
 * working folder by name alone (`python -m NAME`, `uv run`'s project file):
 * give such a server a `cwd` outside the writable areas (docs/llm-workers.md).
 */
import { accessSync, constants, realpathSync, statSync } from "node:fs";
import { delimiter, dirname, extname, isAbsolute, resolve } from "node:path";
import { isWithin, listLookupPlaces } from "../threads/module-grants.js";
import type { McpServerConfig } from "./mcp-servers.js";

/** Extensions of files a server's command line runs as code (their folder is protected too). */
const CODE_EXTENSIONS = new Set([
  ".js",
  ".mjs",
  ".cjs",
  ".ts",
  ".mts",
  ".cts",
  ".jsx",
  ".tsx",
  ".py",
  ".rb",
  ".pl",
  ".php",
  ".sh",
  ".bash",
  ".jar",
  ".lua",
]);

/**
 * Host paths holding the code of `configs`' stdio servers, to keep out of
 * agents' reach (files, folders and lookup places; some may not exist yet).
 */
export function listMcpServerCode(
  configs: ReadonlyMap<string, McpServerConfig>,
  basePath: string,
): string[] {
  const out = new Set<string>();
  for (const config of configs.values()) {
    if (!("command" in config)) continue;
    const cwd = config.cwd === undefined ? basePath : resolve(basePath, config.cwd);
    for (const dir of new Set([cwd, realOf(cwd)]))
      for (const place of listLookupPlaces(dir)) out.add(place);
    const { command } = config;
    if (command.includes("/") || command.includes("\\")) addNamed(out, command, cwd, true);
    else for (const p of listPathLookups(command, config.env?.PATH, cwd)) out.add(p);
    for (const arg of config.args ?? []) {
      // `--config=./x.json`: the value; `-m`, `--stdio`: nothing.
      const value = arg.startsWith("-") ? arg.slice(arg.indexOf("=") + 1 || arg.length) : arg;
      if (value !== "") addNamed(out, value, cwd, false);
    }
  }
  return [...out];
}

/** Adds the file `name` (resolved against `cwd`) names, if it is one, and its code's folder. */
function addNamed(out: Set<string>, name: string, cwd: string, isCommand: boolean): void {
  if (name.includes("\0")) return;
  const file = resolve(cwd, name);
  let isFile: boolean;
  try {
    isFile = statSync(file).isFile();
  } catch {
    // Not there now: a command given as a path is still its place (an agent could make it).
    if (isCommand) out.add(file);
    return;
  }
  // A folder named as an argument is data the server works on (agents may share it).
  if (!isFile) return;
  // Where it is named and where it really is: a link on the way (`tools`
  // leading to `lib/tools`) must not leave the real file writable.
  const real = realpathSync(file);
  out.add(file).add(real);
  if (!isCommand && !isCode(file)) return;
  for (const [folder, home] of [
    [dirname(file), cwd],
    [dirname(real), realOf(cwd)],
  ] as const) {
    // The working folder itself, or one holding it, is the whole area: only the file.
    if (isWithin(home, folder)) continue;
    out.add(folder);
    for (const place of listLookupPlaces(folder)) out.add(place);
  }
}

/** `p`'s real path, or `p` when it cannot be resolved. */
function realOf(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return p;
  }
}

/** True for a script by its extension, or an executable file. */
function isCode(file: string): boolean {
  if (CODE_EXTENSIONS.has(extname(file).toLowerCase())) return true;
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * Where `command` is looked up on the server's `PATH` (its own `env.PATH`,
 * else the host's, as the SDK's default environment passes it), in order,
 * up to and including the first that exists; an empty or relative entry
 * is relative to the server's working folder.
 */
function listPathLookups(command: string, path: string | undefined, cwd: string): string[] {
  const out: string[] = [];
  for (const entry of (path ?? process.env.PATH ?? "").split(delimiter)) {
    const dir = entry === "" ? cwd : isAbsolute(entry) ? entry : resolve(cwd, entry);
    const candidate = resolve(dir, command);
    out.push(candidate);
    try {
      if (statSync(candidate).isFile()) {
        out.push(realpathSync(candidate));
        break;
      }
    } catch {
      // Not here: the next entry.
    }
  }
  return out;
}
