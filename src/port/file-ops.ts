/**
 * The port's file operations: read, write, edit, list, stat, exists, mkdir,
 * remove, move and the sandbox's questions about itself, each with its
 * argument check. What they return is plain data, copied exactly.
 */
import type { FileEdit } from "../sandbox/types.js";
import {
  arity,
  asFlags,
  asString,
  type Checked,
  type Handler,
  isPath,
  isPlainObject,
  noArgs,
  pathsOnly,
  quoteKey,
  readOptions,
  withOptions,
} from "./arg-checks.js";
import { READ_OPS } from "./read-op.js";

/** Most edits accepted in one `editFile` call. */
const MAX_EDITS = 10_000;
function checkWrite(args: unknown[]): Checked | string {
  const bad = arity(args, 2, 2);
  if (bad) return bad;
  const [path, content] = args;
  if (!isPath(path)) return "a path must be a string";
  if (typeof content === "string") return { args, bytes: path.length * 2 + content.length * 2 };
  if (content instanceof Uint8Array) {
    // A view may sit on shared memory the worker can still change, or on a
    // bigger buffer: copy exactly the bytes meant.
    const bytes = content.buffer.byteLength + path.length * 2;
    return { args: [path, new Uint8Array(content)], bytes };
  }
  return "content must be a string or a Uint8Array";
}

function checkEdit(args: unknown[]): Checked | string {
  const bad = arity(args, 2, 3);
  if (bad) return bad;
  const [path, edits, options] = args;
  if (!isPath(path)) return "a path must be a string";
  if (!Array.isArray(edits) || edits.length > MAX_EDITS)
    return `edits must be an array of at most ${MAX_EDITS} { oldText, newText }`;
  let bytes = path.length * 2;
  const clean: FileEdit[] = [];
  for (const e of edits) {
    if (!isPlainObject(e)) return "each edit must be an object { oldText, newText }";
    for (const k in e)
      if (k !== "oldText" && k !== "newText") return `unknown edit key ${quoteKey(k)}`;
    const { oldText, newText } = e;
    if (typeof oldText !== "string" || typeof newText !== "string")
      return "oldText and newText must be strings";
    bytes += (oldText.length + newText.length) * 2 + 16;
    clean.push({ oldText, newText });
  }
  const o = readOptions(options, ["dryRun"]);
  if (typeof o === "string") return o;
  return { args: [path, clean, o], bytes };
}

function checkList(args: unknown[]): Checked | string {
  const bad = arity(args, 0, 2);
  if (bad) return bad;
  let bytes = 0;
  for (const a of args) {
    if (a === undefined) continue;
    if (!isPath(a)) return "path and pattern must be strings";
    bytes += a.length * 2;
  }
  return { args, bytes };
}

/** The file operations (everything but `grep` and the hook operations). */
export const FILE_OPS = {
  // Whole-file reads: capped and budgeted before they load (read-op.ts).
  ...READ_OPS,
  writeFile: {
    check: checkWrite,
    run: (sb, a) => sb.writeFile(asString(a[0]), a[1] as string | Uint8Array),
  },
  editFile: {
    check: checkEdit,
    run: async (sb, a) => {
      const r = await sb.editFile(asString(a[0]), a[1] as FileEdit[], asFlags(a[2]));
      return { diff: r.diff };
    },
  },
  listFiles: {
    check: checkList,
    run: (sb, a, signal) =>
      sb.listFiles(a[0] as string | undefined, a[1] as string | undefined, { signal }),
  },
  stat: {
    check: pathsOnly(1),
    run: async (sb, a) => {
      const st = await sb.stat(asString(a[0]));
      return { type: st.type, size: st.size, mtimeMs: st.mtimeMs };
    },
  },
  exists: { check: pathsOnly(1), run: (sb, a) => sb.exists(asString(a[0])) },
  mkdir: { check: pathsOnly(1), run: (sb, a) => sb.mkdir(asString(a[0])) },
  remove: {
    check: withOptions(1, ["recursive"]),
    run: (sb, a, signal) => sb.remove(asString(a[0]), { ...asFlags(a[1]), signal }),
  },
  move: {
    check: withOptions(2, ["overwrite"]),
    run: (sb, a, signal) => sb.move(asString(a[0]), asString(a[1]), { ...asFlags(a[2]), signal }),
  },
  canRead: { check: pathsOnly(1), run: (sb, a) => sb.canRead(asString(a[0])) },
  canWrite: { check: pathsOnly(1), run: (sb, a) => sb.canWrite(asString(a[0])) },
  readableRoots: { check: noArgs, run: (sb) => sb.readableRoots },
  writableRoots: { check: noArgs, run: (sb) => sb.writableRoots },
  describe: { check: noArgs, run: (sb) => sb.describe() },
} satisfies Record<string, Handler>;
