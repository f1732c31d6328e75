/**
 * MCP roots as the sandbox (`mountbox mcp` without `--root`): the folders
 * the client offers become its areas — the first as `/`, each other as a
 * mount at `/<its folder's name>` — asked for once the client has
 * initialized and again on every `roots/list_changed`. Until a client
 * offers a folder, every call is refused with a message saying so.
 * `--readonly` still applies: the command line only ever narrows.
 */
import { basename } from "node:path";
import { fileURLToPath } from "node:url";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { RootsListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { configError } from "../errors/index.js";
import { createSandbox, type Sandbox } from "../sandbox/sandbox.js";

/** Most roots taken from a client. */
const MAX_ROOTS = 32;

/**
 * The sandbox a list of root URIs makes (non-`file:` URIs are skipped);
 * undefined for none.
 */
export function sandboxFromRoots(uris: string[], readonly: boolean): Sandbox | undefined {
  const paths = uris
    .filter((u) => u.startsWith("file://"))
    .slice(0, MAX_ROOTS)
    .map((u) => fileURLToPath(u));
  const [first, ...rest] = paths;
  if (first === undefined) return undefined;
  const taken = new Set<string>();
  const mounts = rest.map((p) => {
    const name = basename(p).replace(/[^\w.-]/g, "_") || "root";
    let target = `/${name}`;
    for (let i = 2; taken.has(target); i++) target = `/${name}-${i}`;
    taken.add(target);
    return { source: p, target };
  });
  return createSandbox({ root: first, readonly, mounts });
}

/**
 * Makes `server` follow its client's roots; returns the current sandbox's
 * getter, which throws (a refusal every tool reports) while there is none.
 * `onChange` hears each new set of areas (for the server's log line).
 */
export function followRoots(
  server: McpServer,
  readonly: boolean,
  onChange?: (sandbox: Sandbox | undefined) => void,
  /** Why a sandbox the roots make may not be served (undefined: it may). */
  refuse?: (sandbox: Sandbox) => string | undefined,
): () => Sandbox {
  let current: Sandbox | undefined;
  let why = "the client has offered no roots yet";
  const refresh = async () => {
    if (server.server.getClientCapabilities()?.roots === undefined) {
      why = "the client does not offer roots; start mountbox mcp with --root DIR";
      return;
    }
    try {
      const { roots } = await server.server.listRoots();
      const made = sandboxFromRoots(
        roots.map((r) => r.uri),
        readonly,
      );
      const refused = made === undefined ? undefined : refuse?.(made);
      current = refused === undefined ? made : undefined;
      why = refused ?? "the client's roots hold no file:// folder";
    } catch {
      // A root that is not a folder (or is gone): nothing is served.
      current = undefined;
      why = "the client's roots could not be used (each must be an existing folder)";
    }
    onChange?.(current);
  };
  server.server.oninitialized = () => void refresh();
  server.server.setNotificationHandler(RootsListChangedNotificationSchema, () => refresh());
  return () => {
    if (current === undefined)
      throw configError([{ path: [], message: `No folder is served: ${why}.` }]);
    return current;
  };
}
