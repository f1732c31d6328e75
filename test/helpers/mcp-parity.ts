/**
 * For the parity tests of `mountbox mcp` with the reference filesystem
 * server (test/mcp-parity.test.ts): the folder both serve a copy of, the
 * reference's answers made virtual, and the same call on both servers.
 */
import { cpSync, mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { callTool } from "./mcp.js";

/** The reference server's entry (a devDependency), run with the Node running the tests. */
export const REFERENCE = resolve(
  import.meta.dirname,
  "../../node_modules/@modelcontextprotocol/server-filesystem/dist/index.js",
);

/** The folder both servers are given a copy of. */
export function layOut(dir: string): void {
  const files: Record<string, string | Buffer> = {
    "README.md": "# Demo\n\nline 3\nline 4\nline 5\n",
    "notes.txt": "alpha\nbeta\ngamma\n",
    "src/a.ts": "export const a = 1;\nexport const b = 2;\n",
    "src/lib/util.ts": "export function util() {\n  return 42;\n}\n",
    "text/crlf.txt": "one\r\ntwo\r\nthree\r\n",
    "text/bom.txt": "\uFEFFfirst\nsecond\n",
    "text/utf8.txt": "héllo wörld ✓\nzweite Zeile €\n",
    "text/no-newline.txt": "one\ntwo",
    "text/empty.txt": "",
    "text/blank-lines.txt": "\n\n\nlast\n\n",
    // Over the reference's 1 KiB read chunks, multi-byte characters across their edges.
    "text/long.txt": Array.from({ length: 400 }, (_, i) => `Zeile ${i}: äöü ✓ €\n`).join(""),
    "media/pic.png": Buffer.from([0x89, 0x50, 0x4e, 0x47, 1, 2, 3]),
    "media/PHOTO.JPG": Buffer.from("not really a jpeg"),
    "media/sound.mp3": Buffer.from("ID3 and some frames.."),
    "media/vector.svg": '<svg xmlns="http://www.w3.org/2000/svg"/>\n',
    "media/my data.bin": Buffer.alloc(3000, 7),
  };
  for (const [name, data] of Object.entries(files)) {
    mkdirSync(join(dir, name, ".."), { recursive: true });
    writeFileSync(join(dir, name), data);
  }
  mkdirSync(join(dir, "empty"));
}

/** Host paths of the reference's answers, made virtual. */
export function virtualize(text: string, dir: string): string {
  return text.split(`${dir}/`).join("/").split(dir).join("/");
}

/** A tree with every children array sorted by name (readdir order is the file system's). */
export function sortTree(nodes: { name: string; children?: unknown[] }[]): unknown {
  return [...nodes]
    .sort((a, b) => (a.name < b.name ? -1 : 1))
    .map((n) => (n.children ? { ...n, children: sortTree(n.children as typeof nodes) } : n));
}

/** `key: value` lines as an object (get_file_info). */
export function fieldsOf(text: string): Record<string, string> {
  return Object.fromEntries(
    text.split("\n").map((l) => [l.slice(0, l.indexOf(": ")), l.slice(l.indexOf(": ") + 2)]),
  );
}

/** A value with every `description` left out (the tools' texts differ on purpose). */
export function withoutDescriptions(v: unknown): unknown {
  return v === undefined
    ? undefined
    : JSON.parse(JSON.stringify(v, (k, x) => (k === "description" ? undefined : x)));
}

/** Two servers on copies of one folder, and the same call on both. */
export class Pair {
  constructor(
    readonly refDir: string,
    readonly reference: Client,
    readonly mountbox: Client,
  ) {}

  /** The call on both: host paths in the reference's, virtual in mountbox's; its text made virtual. */
  async both(tool: string, args: (p: (v: string) => string) => Record<string, unknown>) {
    const ref = await callTool(
      this.reference,
      tool,
      args((v) => join(this.refDir, v)),
    );
    const ours = await callTool(
      this.mountbox,
      tool,
      args((v) => v),
    );
    return { ref: { ...ref, text: virtualize(ref.text, this.refDir) }, ours };
  }
}

/** A fresh pair of copies of the layout, under `base`, named after `name`: the reference's and mountbox's. */
export function copies(base: string, name: string): { refDir: string; mbDir: string } {
  const refDir = join(base, `${name}-ref`);
  const mbDir = join(base, `${name}-mb`);
  layOut(refDir);
  cpSync(refDir, mbDir, { recursive: true });
  return { refDir, mbDir };
}
