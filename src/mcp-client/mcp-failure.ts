/**
 * What an MCP server's failure may say, to the model or in a ConfigError:
 * never a URL (it may carry a token), never a value of the server's `env`
 * or `headers` (a hostile or careless server, or an HTTP error page, may
 * echo them back).
 */

import { StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { escapeControl } from "../errors/index.js";

/** Shorter values are not hidden: they would hide ordinary words. */
const MIN_SECRET_CHARS = 4;

/** `text` with each of `secrets` (env and header values) replaced by `<hidden>`. */
export function hideSecrets(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const s of secrets) if (s.length >= MIN_SECRET_CHARS) out = out.split(s).join("<hidden>");
  return out;
}

/**
 * Why a connection or call failed, in at most `max` characters: the error's
 * system code (ENOENT, …) or its message, URLs and secrets cut out.
 */
export function describeFailure(err: unknown, secrets: readonly string[], max = 200): string {
  const code = (err as { code?: unknown })?.code;
  if (typeof code === "string") return code;
  const msg = err instanceof Error ? err.message : String(err);
  return escapeControl(
    hideSecrets(msg, secrets)
      .replace(/\bhttps?:\/\/\S+/g, "<url>")
      .slice(0, max),
  );
}

/**
 * Whether `err`, from a request, means the connection is gone (the
 * process exited, the HTTP server refused or forgot the session, the
 * network failed) rather than a refusal by a live server.
 */
export function isConnectionLoss(err: unknown): boolean {
  if (err instanceof McpError) return err.code === ErrorCode.ConnectionClosed;
  return (
    err instanceof StreamableHTTPError ||
    // fetch's own failure (refused, reset, DNS)
    err instanceof TypeError ||
    (err instanceof Error && err.message === "Not connected")
  );
}
