/**
 * The sandbox's readable files as MCP resources, `mountbox:///src/a.ts`
 * (the virtual path, percent-encoded as a URI path). Listed when a client
 * asks, never ahead: the first levels of the tree, capped, so a huge
 * sandbox costs a bounded walk; any readable file can be read by its URI
 * whether or not a listing showed it. Reads go through the sandbox as the
 * tools' do, and ask approval as they do; a listing leaves out the files of
 * areas that ask approval to read (a client lists resources unprompted).
 */
import { type McpServer, ResourceTemplate } from "@modelcontextprotocol/sdk/server/mcp.js";
import { listEntries } from "../sandbox/io-list.js";
import { policyOf, type Sandbox } from "../sandbox/sandbox.js";
import type { McpApprovals } from "./mcp-approvals.js";
import { errorText } from "./mcp-format.js";
import { mimeTypeOf } from "./mcp-read-tools.js";

/** URI scheme of the resources. */
export const RESOURCE_SCHEME = "mountbox";
/** Levels of the tree a listing walks. */
const LIST_DEPTH = 4;
/** Most resources a listing names. */
const LIST_MAX = 1000;
/** Largest file served as a resource (as the read tools). */
const MAX_RESOURCE_BYTES = 32 * 1024 * 1024;

/** The resource URI of a virtual path. */
export function toResourceUri(path: string): string {
  return `${RESOURCE_SCHEME}://${path.split("/").map(encodeURIComponent).join("/")}`;
}

/** True for a MIME type whose content is sent as text. */
function isText(mimeType: string, path: string): boolean {
  return (
    mimeType.startsWith("text/") ||
    mimeType === "application/json" ||
    (mimeType === "application/octet-stream" && !/\.[a-z0-9]+$/i.test(path)) ||
    /\.(ts|tsx|js|mjs|cjs|jsx|md|txt|json|ya?ml|toml|css|html?|sh|py|rs|go|java|c|h|cpp|rb)$/i.test(
      path,
    )
  );
}

/** A resource's MIME type: the read tools' by extension, and text for source and notes. */
function resourceMime(path: string): string {
  const m = mimeTypeOf(path);
  if (m !== "application/octet-stream" || !isText(m, path)) return m;
  return /\.md$/i.test(path) ? "text/markdown" : "text/plain";
}

/** Registers the `mountbox:///…` resources of `sandbox` on `server`. */
export function registerResources(
  server: McpServer,
  current: () => Sandbox,
  approvals?: McpApprovals,
): void {
  const template = new ResourceTemplate(`${RESOURCE_SCHEME}://{+path}`, {
    list: async () => {
      const entries = await listEntries(policyOf(current()), "/", LIST_DEPTH).catch(() => []);
      const files = entries
        .filter((e) => e.type === "file" && (approvals?.listable(e.path) ?? true))
        .slice(0, LIST_MAX);
      return {
        resources: files.map((f) => ({
          uri: toResourceUri(f.path),
          name: f.path,
          mimeType: resourceMime(f.path),
        })),
      };
    },
  });
  server.registerResource(
    "files",
    template,
    {
      title: "Sandbox files",
      description: `Readable files of the sandbox, by virtual path (${RESOURCE_SCHEME}:///src/a.ts). A listing shows the first ${LIST_DEPTH} levels, at most ${LIST_MAX} files; any readable file can be read by its URI.`,
    },
    async (uri, _variables, extra) => {
      try {
        if (approvals === undefined) return await readResource(current(), uri);
        const path = decodeURIComponent(uri.pathname);
        const read = { operation: "read", access: "read", path, dir: "parent" } as const;
        return await approvals.run([read], "resources/read", extra, () =>
          readResource(current(), uri),
        );
      } catch (err) {
        // The sandbox's own message, never an fs error's (host paths).
        throw new Error(errorText("read", uri.pathname.slice(0, 4096), err));
      }
    },
  );
}

/** One resource's contents. */
async function readResource(sandbox: Sandbox, uri: URL) {
  // The URI's path is the virtual path; the sandbox refuses anything else.
  const path = decodeURIComponent(uri.pathname);
  const mimeType = resourceMime(path);
  if (isText(mimeType, path)) {
    const text = await sandbox.readFile(path, { defaultMaxBytes: MAX_RESOURCE_BYTES });
    return { contents: [{ uri: uri.href, mimeType, text }] };
  }
  const bytes = await sandbox.readBytes(path, { defaultMaxBytes: MAX_RESOURCE_BYTES });
  return {
    contents: [{ uri: uri.href, mimeType, blob: Buffer.from(bytes).toString("base64") }],
  };
}
