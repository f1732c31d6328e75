/**
 * The call site of a delegation: `ctx.delegate` options sent by a (hostile)
 * worker, checked; and the attachments it hands its callee, read through its
 * own sandbox.
 */
import {
  type ConfigIssue,
  configError,
  DelegationRefusedError,
  quotePath,
} from "../errors/index.js";
import type { Attachment } from "../port/protocol.js";
import type { Sandbox } from "../sandbox/sandbox.js";

/** Most attachments in one delegation, and their size caps. */
const MAX_ATTACHMENTS = 32;
const MAX_ATTACHMENT_BYTES = 16 * 1024 * 1024;
const MAX_ATTACHMENTS_TOTAL = 64 * 1024 * 1024;

/** `ctx.delegate` options, checked. */
export interface CallOptions {
  sandbox?: unknown;
  attachments?: string[];
  timeoutMs?: number;
}

/** Checks `ctx.delegate` options sent by a (hostile) worker. */
export function checkCallOptions(raw: Record<string, unknown>): CallOptions {
  const issues: ConfigIssue[] = [];
  for (const k of Object.keys(raw)) {
    if (k !== "sandbox" && k !== "attachments" && k !== "timeoutMs")
      issues.push({ path: [k], message: `unknown option ${quotePath(k)}` });
  }
  const out: CallOptions = {};
  if (raw.sandbox !== undefined) out.sandbox = raw.sandbox;
  if (raw.attachments !== undefined) {
    const a = raw.attachments;
    if (!Array.isArray(a) || a.length > MAX_ATTACHMENTS || !a.every((p) => typeof p === "string")) {
      issues.push({
        path: ["attachments"],
        message: `expected at most ${MAX_ATTACHMENTS} virtual paths`,
      });
    } else out.attachments = a;
  }
  if (raw.timeoutMs !== undefined) {
    if (typeof raw.timeoutMs !== "number" || !(raw.timeoutMs > 0))
      issues.push({ path: ["timeoutMs"], message: "expected a positive number" });
    else out.timeoutMs = raw.timeoutMs;
  }
  if (issues.length > 0) throw configError(issues);
  return out;
}

const MEDIA_TYPES: Record<string, string> = {
  pdf: "application/pdf",
  png: "image/png",
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  gif: "image/gif",
  webp: "image/webp",
  svg: "image/svg+xml",
  txt: "text/plain",
  md: "text/markdown",
  json: "application/json",
  csv: "text/csv",
  html: "text/html",
  ts: "text/plain",
  js: "text/javascript",
};

/** What {@link readAttachments} charges: the caller's running attachment total. */
export interface AttachmentOwner {
  sandbox: Sandbox;
  /** Attachment bytes it has handed to callees still running. */
  attachedBytes: number;
}

/**
 * Reads attachments through the caller's sandbox (so only what it may read;
 * with approvals, the sandbox its gate returned),
 * size-capped. Each is an exact copy in its own buffer: Node's pooled
 * buffers hold other data, and every byte sent to a thread is seen by it.
 */
export async function readAttachments(
  caller: AttachmentOwner,
  paths: string[] | undefined,
  /** The sandbox to read through: the caller's, or its gate's answer. */
  via: Sandbox = caller.sandbox,
): Promise<{ attachments: Attachment[] | undefined; charged: number }> {
  if (!paths || paths.length === 0) return { attachments: undefined, charged: 0 };
  // Sizes first, charged to the caller's in-flight budget before any byte is
  // read: concurrent delegations cannot multiply the host's memory.
  let total = 0;
  for (const path of paths) {
    const st = await via.stat(path);
    if (st.type !== "file" || st.size > MAX_ATTACHMENT_BYTES) {
      throw new DelegationRefusedError(
        `Cannot attach '${path.slice(0, 200)}': attachments must be files of at most ${MAX_ATTACHMENT_BYTES} bytes.`,
      );
    }
    total += st.size;
  }
  if (caller.attachedBytes + total > MAX_ATTACHMENTS_TOTAL) {
    throw new DelegationRefusedError(
      `Cannot attach ${total} bytes: this agent's attachments to running callees may total at most ${MAX_ATTACHMENTS_TOTAL} bytes.`,
    );
  }
  caller.attachedBytes += total;
  const out: Attachment[] = [];
  let read = 0;
  try {
    for (const path of paths) {
      const bytes = await via.readBytes(path);
      read += bytes.byteLength;
      if (bytes.byteLength > MAX_ATTACHMENT_BYTES || read > total) {
        throw new DelegationRefusedError(
          `Cannot attach '${path.slice(0, 200)}': it grew while being read.`,
        );
      }
      const ext = path.slice(path.lastIndexOf(".") + 1).toLowerCase();
      out.push({
        path,
        mediaType: MEDIA_TYPES[ext] ?? "application/octet-stream",
        bytes: new Uint8Array(bytes),
      });
    }
  } catch (err) {
    caller.attachedBytes -= total;
    throw err;
  }
  return { attachments: out, charged: total };
}
