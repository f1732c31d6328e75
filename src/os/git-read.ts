/**
 * Reading a git file a confined command could have made, on the host's own
 * thread, without ever blocking it (issue 19, review finding F): a FIFO
 * where the host reads a submodule's `index` would otherwise freeze the
 * host for ever (`readFileSync` on a FIFO waits for a writer).
 *
 * The file is opened non-blocking and without following a final link, and
 * must be a regular file under a size cap; anything else is "bad", and the
 * caller fails closed (the command does not run).
 */
import { closeSync, constants, fstatSync, openSync, readSync } from "node:fs";

/** Cap for a git index (and a shared index). */
export const INDEX_CAP = 64 * 1024 * 1024;
/** Cap for `config`, `commondir` and a gitfile. */
export const SMALL_CAP = 1024 * 1024;

/** What a safe read found: the bytes, nothing there, or something git did not write. */
export type SafeRead = { bytes: Buffer } | "missing" | "bad";

/**
 * Reads `path` if it is a regular file of at most `cap` bytes. Never
 * blocks: `O_NONBLOCK` makes opening a FIFO return at once (then `fstat`
 * says it is no regular file); `O_NOFOLLOW` refuses a link at the end.
 */
export function readGitFile(path: string, cap: number): SafeRead {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return code === "ENOENT" || code === "ENOTDIR" ? "missing" : "bad";
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile() || st.size > cap) return "bad";
    const buf = Buffer.alloc(st.size);
    let got = 0;
    while (got < buf.length) {
      const n = readSync(fd, buf, got, buf.length - got, got);
      if (n === 0) break;
      got += n;
    }
    return { bytes: buf.subarray(0, got) };
  } catch {
    return "bad";
  } finally {
    try {
      closeSync(fd);
    } catch {
      // already closed
    }
  }
}

/** The text of a small git file: `""` if missing, `undefined` if bad. */
export function readGitText(path: string): string | undefined {
  const r = readGitFile(path, SMALL_CAP);
  if (r === "missing") return "";
  if (r === "bad") return undefined;
  return r.bytes.toString("utf8");
}
