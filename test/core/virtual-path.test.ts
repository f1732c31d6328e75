import { describe, expect, it } from "vitest";
import { InvalidPathError } from "../../src/errors/index.js";
import { isWithin, normalizeVirtualPath } from "../../src/sandbox/virtual-path.js";

describe("normalizeVirtualPath", () => {
  it.each([
    ["/", "/"],
    ["", "/"],
    [".", "/"],
    ["src/a.ts", "/src/a.ts"],
    ["/src//a.ts", "/src/a.ts"],
    ["/src/./a.ts", "/src/a.ts"],
    ["/src/", "/src"],
    ["\\src\\a.ts", "/src/a.ts"],
    ["/src/lib/../a.ts", "/src/a.ts"],
    ["/x/../data", "/data"],
    ["/a/b/../../c", "/c"],
    ["/..foo/...", "/..foo/..."],
    ["/.hidden", "/.hidden"],
    ["/%2e%2e/etc", "/%2e%2e/etc"],
    // A name starting with '~' is a name, not a home directory.
    ["~backup", "/~backup"],
    ["/~backup", "/~backup"],
    ["~$report.docx", "/~$report.docx"],
    ["~root/x", "/~root/x"],
    ["/~", "/~"],
    ["/~/x", "/~/x"],
    ["a/~", "/a/~"],
  ])("%j → %j", (input, expected) => {
    expect(normalizeVirtualPath(input)).toBe(expected);
  });

  it.each(["/..", "..", "../etc/passwd", "/src/../../etc", "a/../../b", "\\..\\x"])(
    "%j climbs above / and is reported (never clamped)",
    (input) => {
      expect(normalizeVirtualPath(input)).toBeNull();
    },
  );

  it("keeps NFC and NFD spellings as different names", () => {
    const nfc = "/caf\u00e9";
    const nfd = "/cafe\u0301";
    expect(normalizeVirtualPath(nfc)).toBe(nfc);
    expect(normalizeVirtualPath(nfd)).toBe(nfd);
    expect(normalizeVirtualPath(nfc)).not.toBe(normalizeVirtualPath(nfd));
  });

  it("handles 1000-segment paths", () => {
    const deep = `/${Array.from({ length: 1000 }, () => "a").join("/")}`;
    expect(normalizeVirtualPath(deep)).toBe(deep);
    const climbing = `/${Array.from({ length: 1000 }, () => "..").join("/")}`;
    expect(normalizeVirtualPath(climbing)).toBeNull();
  });

  it("rejects bad input with InvalidPathError and a form to use", () => {
    const messages = [
      "/a\0b",
      "~",
      "~/notes.md",
      "~\\notes.md",
      "~//x",
      "C:\\Users\\x",
      "c:/x",
      "D:",
      `/${"a".repeat(4097)}`,
    ].map((p) => {
      try {
        normalizeVirtualPath(p);
        return "accepted";
      } catch (err) {
        expect(err).toBeInstanceOf(InvalidPathError);
        return (err as Error).message;
      }
    });
    expect(messages).toMatchInlineSnapshot(`
      [
        "Invalid path '/a\\u0000b': it contains a NUL byte. Remove the NUL character from the path.",
        "Invalid path '~': '~' (a home directory) has no meaning here. Use a virtual path starting with '/', for example '/'.",
        "Invalid path '~/notes.md': '~' (a home directory) has no meaning here. Use a virtual path starting with '/', for example '/notes.md'.",
        "Invalid path '~\\notes.md': '~' (a home directory) has no meaning here. Use a virtual path starting with '/', for example '/notes.md'.",
        "Invalid path '~//x': '~' (a home directory) has no meaning here. Use a virtual path starting with '/', for example '/x'.",
        "Invalid path 'C:\\Users\\x': drive letters are not supported. Use a virtual path starting with '/', for example '/Users/x'.",
        "Invalid path 'c:/x': drive letters are not supported. Use a virtual path starting with '/', for example '/x'.",
        "Invalid path 'D:': drive letters are not supported. Use a virtual path starting with '/', for example '/'.",
        "Invalid path: it is longer than 4096 bytes. Use a shorter path.",
      ]
    `);
  });

  it("rejects non-strings", () => {
    expect(() => normalizeVirtualPath(42 as unknown as string)).toThrow(InvalidPathError);
  });

  it("reads name:rel in the named-paths form only for known names", () => {
    const names = new Set(["docs"]);
    expect(normalizeVirtualPath("docs:guide/a.md", { names })).toBe("/docs/guide/a.md");
    expect(normalizeVirtualPath("docs/guide/a.md", { names })).toBe("/docs/guide/a.md");
    expect(normalizeVirtualPath("other:x", { names })).toBe("/other:x");
  });
});

describe("isWithin", () => {
  it("matches whole segments only", () => {
    expect(isWithin("/src", "/src")).toBe(true);
    expect(isWithin("/src/a", "/src")).toBe(true);
    expect(isWithin("/src2", "/src")).toBe(false);
    expect(isWithin("/src-old/a", "/src")).toBe(false);
    expect(isWithin("/src_backup", "/src")).toBe(false);
    expect(isWithin("/anything", "/")).toBe(true);
  });
});
