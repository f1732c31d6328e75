/**
 * Parity of `mountbox mcp` with the reference filesystem server
 * (`@modelcontextprotocol/server-filesystem`): for each reference tool the
 * same call against both, on copies of the same folder — host paths for the
 * reference, virtual paths for mountbox — agrees in outcome and content on
 * unambiguous inputs. Where mountbox deliberately differs (docs/mcp.md,
 * "Where mountbox differs"), the parts that must agree are compared and the
 * difference is asserted as documented. mountbox runs as users install it:
 * the packed package's bin, installed by npm into a temp app, spawned from a
 * folder elsewhere; once over stdio, once over Streamable HTTP.
 */
import type { ChildProcess } from "node:child_process";
import { readFileSync, utimesSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import {
  callTool,
  connectHttp,
  connectStdio,
  installPackedCli,
  type PackedCli,
  startHttp,
} from "./helpers/mcp.js";
import {
  copies,
  fieldsOf,
  Pair,
  REFERENCE,
  sortTree,
  withoutDescriptions,
} from "./helpers/mcp-parity.js";
import { makeTempDir, removeDir } from "./helpers/tree.js";

let base: string;
let cli: PackedCli;

beforeAll(() => {
  base = makeTempDir("mountbox-mcp-parity-");
  cli = installPackedCli(base);
});
afterAll(() => {
  if (base) removeDir(base);
});

const TEXT_FILES = [
  "/README.md",
  "/text/crlf.txt",
  "/text/bom.txt",
  "/text/utf8.txt",
  "/text/no-newline.txt",
  "/text/empty.txt",
  "/text/blank-lines.txt",
  "/text/long.txt",
];
const WINDOWS = [
  {},
  { head: 1 },
  { head: 2 },
  { head: 150 },
  { head: 1000 },
  { tail: 1 },
  { tail: 2 },
  { tail: 150 },
  { tail: 1000 },
  { head: 0 },
  { tail: 0 },
];

describe("parity with the reference filesystem server (stdio)", () => {
  let pair: Pair;
  let mbDir: string;
  const clients: Client[] = [];

  beforeAll(async () => {
    const dirs = copies(base, "stdio");
    mbDir = dirs.mbDir;
    const { client: reference } = await connectStdio(cli.cwd, REFERENCE, [dirs.refDir]);
    const { client: mountbox } = await connectStdio(cli.cwd, cli.bin, ["mcp", "--root", mbDir]);
    clients.push(reference, mountbox);
    pair = new Pair(dirs.refDir, reference, mountbox);
  });
  afterAll(async () => {
    for (const c of clients) await c.close();
  });

  test("the reference's tools: same names, titles, input and output schemas and annotations", async () => {
    const ref = (await pair.reference.listTools()).tools;
    const ours = (await pair.mountbox.listTools()).tools;
    expect(ours.map((t) => t.name).sort()).toEqual(
      [...ref.map((t) => t.name), "grep", "list_allowed_paths"].sort(),
    );
    for (const r of ref) {
      const o = ours.find((t) => t.name === r.name)!;
      expect([o.title, o.annotations], r.name).toEqual([r.title, r.annotations]);
      expect(withoutDescriptions(o.inputSchema), r.name).toEqual(
        withoutDescriptions(r.inputSchema),
      );
      // Documented: read_media_file answers without a structured copy of its base64.
      if (r.name === "read_media_file")
        expect([o.outputSchema, !!r.outputSchema]).toEqual([undefined, true]);
      else
        expect(withoutDescriptions(o.outputSchema), r.name).toEqual(
          withoutDescriptions(r.outputSchema),
        );
    }
  });

  test("read_text_file and read_file: whole, head and tail agree on every kind of text", async () => {
    for (const path of TEXT_FILES) {
      for (const window of WINDOWS) {
        for (const tool of ["read_text_file", "read_file"]) {
          if (tool === "read_file" && Object.keys(window).length > 0 && path !== "/README.md")
            continue;
          const { ref, ours } = await pair.both(tool, (p) => ({ path: p(path), ...window }));
          const what = `${tool} ${path} ${JSON.stringify(window)}`;
          expect(ref.isError, what).toBe(false);
          expect(ours, what).toMatchObject({ isError: false, text: ref.text });
          expect(ours.result.structuredContent, what).toEqual(ref.result.structuredContent);
        }
      }
    }
    // A relative path is taken from the (first) folder, '/' for mountbox.
    const rel = await pair.both("read_text_file", () => ({ path: "src/a.ts" }));
    expect(rel.ours).toMatchObject({ isError: false, text: rel.ref.text });
  });

  test("head and tail: both at once is refused by both; a negative or fractional count only by mountbox (documented)", async () => {
    const both = await pair.both("read_text_file", (p) => ({
      path: p("/README.md"),
      head: 1,
      tail: 1,
    }));
    expect([both.ref.isError, both.ours.isError]).toEqual([true, true]);
    for (const [window, refText] of [
      [{ head: -1 }, ""],
      [{ tail: -1 }, ""],
      [{ head: 1.5 }, "# Demo\n"],
    ] as const) {
      const { ref, ours } = await pair.both("read_text_file", (p) => ({
        path: p("/README.md"),
        ...window,
      }));
      const [name, n] = Object.entries(window)[0]!;
      expect(ref).toMatchObject({ isError: false, text: refText });
      expect(ours).toMatchObject({
        isError: true,
        text: `Error [invalid_request]: ${name} must be a whole number of lines, 1 or more (got ${n})`,
      });
    }
  });

  test("read_multiple_files agrees file by file; a failure shows the same label, mountbox's message without a host path", async () => {
    const paths = [
      "/README.md",
      "/text/utf8.txt",
      "/nope.txt",
      "src/a.ts",
      "/src",
      "/text/bom.txt",
      "/text/crlf.txt",
    ];
    const { ref, ours } = await pair.both("read_multiple_files", (p) => ({
      paths: paths.map((v) => (v.startsWith("/") ? p(v) : v)),
    }));
    expect([ref.isError, ours.isError]).toEqual([false, false]);
    const refParts = ref.text.split("\n---\n");
    const ourParts = ours.text.split("\n---\n");
    expect(ourParts).toHaveLength(paths.length);
    expect(refParts).toHaveLength(paths.length);
    for (const [i, path] of paths.entries()) {
      const failed = refParts[i]!.startsWith(`${path}: Error - `);
      expect(failed, path).toBe(path === "/nope.txt" || path === "/src");
      if (failed) {
        expect(ourParts[i]?.startsWith(`${path}: Error - Error [`), ourParts[i]).toBe(true);
        expect(ourParts[i], path).not.toContain(base);
      } else expect(ourParts[i], path).toBe(refParts[i]);
    }
    expect(ours.result.structuredContent).toEqual({ content: ours.text });
    const none = await pair.both("read_multiple_files", () => ({ paths: [] }));
    expect([none.ref.isError, none.ours.isError]).toEqual([true, true]);
  });

  test("list_directory_with_sizes agrees by name; by size the files agree and folders come last (documented)", async () => {
    for (const path of ["/", "/media", "/src", "/text", "/empty"]) {
      const { ref, ours } = await pair.both("list_directory_with_sizes", (p) => ({
        path: p(path),
      }));
      expect(ours, path).toMatchObject({ isError: false, text: ref.text });
    }
    const media = await pair.both("list_directory_with_sizes", (p) => ({
      path: p("/media"),
      sortBy: "size",
    }));
    expect(media.ours.text).toBe(media.ref.text);
    expect(media.ours.text.split("\n")[0]).toMatch(/^\[FILE\] my data\.bin +2\.93 KB$/);
    // The reference sorts folders by the size their file system gives them
    // (4096 here, other sizes elsewhere); mountbox counts them 0: last.
    const top = await pair.both("list_directory_with_sizes", (p) => ({
      path: p("/"),
      sortBy: "size",
    }));
    const lines = (t: string) => t.split("\n\n")[0]!.split("\n");
    const files = (t: string) => lines(t).filter((l) => l.startsWith("[FILE]"));
    expect(files(top.ours.text)).toEqual(files(top.ref.text));
    const ourLines = lines(top.ours.text);
    expect(ourLines.slice(files(top.ours.text).length).map((l) => l.trim())).toEqual([
      "[DIR] empty",
      "[DIR] media",
      "[DIR] src",
      "[DIR] text",
    ]);
    expect(top.ours.text.split("\n\n")[1]).toBe(top.ref.text.split("\n\n")[1]);
    expect(top.ours.text.split("\n\n")[1]).toBe(
      "Total: 2 files, 4 directories\nCombined size: 46 B",
    );
  });

  test("read_media_file: the same image, audio and embedded resource; mountbox's URI is virtual and it has no structured copy (documented)", async () => {
    for (const [path, type, mimeType] of [
      ["/media/pic.png", "image", "image/png"],
      ["/media/PHOTO.JPG", "image", "image/jpeg"],
      ["/media/vector.svg", "image", "image/svg+xml"],
      ["/media/sound.mp3", "audio", "audio/mpeg"],
      ["/media/my data.bin", "resource", "application/octet-stream"],
      ["/README.md", "resource", "application/octet-stream"],
    ] as const) {
      const { ref, ours } = await pair.both("read_media_file", (p) => ({ path: p(path) }));
      expect([ref.isError, ours.isError], path).toEqual([false, false]);
      const r = ref.result.content;
      const o = ours.result.content;
      expect(r[0]?.type, path).toBe(type);
      expect(ref.result.structuredContent, path).toEqual({ content: r });
      expect(ours.result.structuredContent, path).toBeUndefined();
      if (type !== "resource") {
        expect(o, path).toEqual(r);
        expect(o[0], path).toMatchObject({ mimeType });
        continue;
      }
      const refResource = (r[0] as { resource: { uri: string } }).resource;
      expect(o, path).toEqual([
        { type: "resource", resource: { ...refResource, uri: expect.any(String) } },
      ]);
      expect(refResource).toMatchObject({ mimeType });
      expect((o[0] as { resource: { uri: string } }).resource.uri).toBe(
        refResource.uri.replace(pathToFileURL(pair.refDir).href, "mountbox://"),
      );
    }
    expect(readFileSync(join(mbDir, "media/my data.bin")).toString("base64")).toBe(
      (
        (await callTool(pair.mountbox, "read_media_file", { path: "/media/my data.bin" })).result
          .content[0] as { resource: { blob: string } }
      ).resource.blob,
    );
    for (const path of ["/media/none.png", "/media"]) {
      const { ref, ours } = await pair.both("read_media_file", (p) => ({ path: p(path) }));
      expect([ref.isError, ours.isError], path).toEqual([true, true]);
      expect(ours.text).not.toContain(base);
    }
  });

  test("get_file_info: size, modified, isDirectory and isFile agree; no created, accessed or permissions (documented)", async () => {
    const when = new Date("2024-05-06T07:08:09.000Z");
    for (const path of ["/README.md", "/media/my data.bin", "/src", "/text/empty.txt"]) {
      utimesSync(join(pair.refDir, path), when, when);
      utimesSync(join(mbDir, path), when, when);
      const { ref, ours } = await pair.both("get_file_info", (p) => ({ path: p(path) }));
      expect([ref.isError, ours.isError], path).toEqual([false, false]);
      const r = fieldsOf(ref.text);
      const o = fieldsOf(ours.text);
      expect(Object.keys(r), path).toEqual([
        "size",
        "created",
        "modified",
        "accessed",
        "isDirectory",
        "isFile",
        "permissions",
      ]);
      expect(Object.keys(o), path).toEqual(["size", "modified", "isDirectory", "isFile"]);
      expect([o.size, o.isDirectory, o.isFile], path).toEqual([r.size, r.isDirectory, r.isFile]);
      // The same instant: the reference in Date's own text, mountbox in ISO 8601.
      expect([Date.parse(r.modified!), o.modified], path).toEqual([
        when.getTime(),
        "2024-05-06T07:08:09.000Z",
      ]);
      expect(ours.result.structuredContent).toEqual({ content: ours.text });
    }
    const gone = await pair.both("get_file_info", (p) => ({ path: p("/nope") }));
    expect([gone.ref.isError, gone.ours.isError]).toEqual([true, true]);
  });

  test("list_allowed_directories agrees once the reference's host path is made virtual", async () => {
    const { ref, ours } = await pair.both("list_allowed_directories", () => ({}));
    expect(ref.text).toBe("Allowed directories:\n/");
    expect(ours).toMatchObject({ isError: false, text: ref.text });
    expect(ours.result.structuredContent).toEqual({ content: ref.text });
  });

  test("list_directory agrees as a set of lines; mountbox's are sorted by name (documented)", async () => {
    for (const path of ["/", "/src", "/media", "/empty"]) {
      const { ref, ours } = await pair.both("list_directory", (p) => ({ path: p(path) }));
      // By name in code-unit order ('README.md' before 'empty'), as mountbox's walk sorts.
      const name = (line: string) => line.slice(line.indexOf(" ") + 1);
      const sorted = ref.text.split("\n").sort((a, b) => (name(a) < name(b) ? -1 : 1));
      expect(ours.text.split("\n"), path).toEqual(sorted);
    }
  });

  test("write_file then read agrees", async () => {
    const w = await pair.both("write_file", (p) => ({
      path: p("/written.txt"),
      content: "hello\nworld\n",
    }));
    expect(w.ours).toMatchObject({ isError: false, text: w.ref.text });
    const r = await pair.both("read_text_file", (p) => ({ path: p("/written.txt") }));
    expect(r.ours.text).toBe(r.ref.text);
  });

  test("edit_file agrees on the diff and the file, a byte-order mark kept", async () => {
    const dry = await pair.both("edit_file", (p) => ({
      path: p("/src/a.ts"),
      edits: [{ oldText: "export const b = 2;", newText: "export const b = 3;" }],
      dryRun: true,
    }));
    expect(dry.ours).toMatchObject({ isError: false, text: dry.ref.text });
    const indented = await pair.both("edit_file", (p) => ({
      path: p("/src/lib/util.ts"),
      edits: [{ oldText: "return 42;\n}", newText: "return 43;\n}" }],
      dryRun: true,
    }));
    expect(indented.ours).toMatchObject({ isError: false, text: indented.ref.text });
    const bom = await pair.both("edit_file", (p) => ({
      path: p("/text/bom.txt"),
      edits: [{ oldText: "second", newText: "2nd" }],
    }));
    expect(bom.ours).toMatchObject({ isError: false, text: bom.ref.text });
    expect(readFileSync(join(mbDir, "text/bom.txt"))).toEqual(
      readFileSync(join(pair.refDir, "text/bom.txt")),
    );
    expect(readFileSync(join(mbDir, "text/bom.txt"), "utf8")).toBe("\uFEFFfirst\n2nd\n");
  });

  test("edit_file on a CRLF file: the same change, but mountbox keeps CRLF where the reference writes LF (documented)", async () => {
    const { ref, ours } = await pair.both("edit_file", (p) => ({
      path: p("/text/crlf.txt"),
      edits: [{ oldText: "two\nthree", newText: "2\n3" }],
    }));
    expect([ref.isError, ours.isError]).toEqual([false, false]);
    expect(ours.text.replaceAll("\r", "")).toBe(ref.text);
    expect(readFileSync(join(pair.refDir, "text/crlf.txt"), "utf8")).toBe("one\n2\n3\n");
    expect(readFileSync(join(mbDir, "text/crlf.txt"), "utf8")).toBe("one\r\n2\r\n3\r\n");
  });

  test("create_directory, move_file, directory_tree and search_files agree", async () => {
    const mk = await pair.both("create_directory", (p) => ({ path: p("/made/deep") }));
    expect(mk.ours).toMatchObject({ isError: false, text: mk.ref.text });
    const mv = await pair.both("move_file", (p) => ({
      source: p("/notes.txt"),
      destination: p("/made/notes.txt"),
    }));
    expect(mv.ours).toMatchObject({ isError: false, text: mv.ref.text });
    const again = await pair.both("move_file", (p) => ({
      source: p("/README.md"),
      destination: p("/made/notes.txt"),
    }));
    expect([again.ref.isError, again.ours.isError]).toEqual([true, true]);
    const tree = await pair.both("directory_tree", (p) => ({
      path: p("/"),
      excludePatterns: ["lib"],
    }));
    expect(sortTree(JSON.parse(tree.ours.text))).toEqual(sortTree(JSON.parse(tree.ref.text)));
    for (const pattern of ["**/*.ts", "*.md", "made/**", "**/*.txt", "nothing-*"]) {
      const s = await pair.both("search_files", (p) => ({ path: p("/"), pattern }));
      expect(s.ours.text.split("\n").sort(), pattern).toEqual(s.ref.text.split("\n").sort());
    }
  });

  test("refusals agree in outcome", async () => {
    for (const [tool, args] of [
      ["read_text_file", (p: (v: string) => string) => ({ path: p("/no-such-file.txt") })],
      ["list_directory", (p: (v: string) => string) => ({ path: p("/README.md") })],
      ["list_directory_with_sizes", (p: (v: string) => string) => ({ path: p("/nope") })],
      ["read_text_file", (p: (v: string) => string) => ({ path: p("/src") })],
    ] as const) {
      const { ref, ours } = await pair.both(tool, args);
      expect([ref.isError, ours.isError], tool).toEqual([true, true]);
      expect(ours.text).not.toContain(base);
    }
  });
});

describe("parity over Streamable HTTP (mountbox mcp --http) with the reference over stdio", () => {
  let pair: Pair;
  let server: ChildProcess;
  let reference: Client;
  let mountbox: Client;

  beforeAll(async () => {
    const dirs = copies(base, "http");
    ({ client: reference } = await connectStdio(cli.cwd, REFERENCE, [dirs.refDir]));
    const http = await startHttp(cli, ["mcp", "--root", dirs.mbDir]);
    server = http.server;
    mountbox = await connectHttp(http.port);
    pair = new Pair(dirs.refDir, reference, mountbox);
  });
  afterAll(async () => {
    await reference?.close();
    await mountbox?.close();
    server?.kill("SIGKILL");
  });

  test("read_text_file, list_directory, read_multiple_files and an edit_file dry run agree", async () => {
    for (const path of ["/README.md", "/text/crlf.txt", "/text/long.txt"]) {
      for (const window of [{}, { head: 2 }, { tail: 2 }, { tail: 150 }]) {
        const { ref, ours } = await pair.both("read_text_file", (p) => ({
          path: p(path),
          ...window,
        }));
        expect(ours, `${path} ${JSON.stringify(window)}`).toMatchObject({
          isError: false,
          text: ref.text,
        });
      }
    }
    for (const path of ["/", "/src", "/media"]) {
      const { ref, ours } = await pair.both("list_directory", (p) => ({ path: p(path) }));
      expect(ours.isError, path).toBe(false);
      expect(ours.text.split("\n").sort(), path).toEqual(ref.text.split("\n").sort());
    }
    const many = await pair.both("read_multiple_files", (p) => ({
      paths: [p("/README.md"), p("/src/a.ts")],
    }));
    expect(many.ours).toMatchObject({ isError: false, text: many.ref.text });
    const dry = await pair.both("edit_file", (p) => ({
      path: p("/src/a.ts"),
      edits: [{ oldText: "export const a = 1;", newText: "export const a = 10;" }],
      dryRun: true,
    }));
    expect(dry.ours).toMatchObject({ isError: false, text: dry.ref.text });
    expect(dry.ours.text).toContain("-export const a = 1;\n+export const a = 10;\n");
  });
});
