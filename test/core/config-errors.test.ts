import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { wrapFsError } from "../../src/errors/index.js";
import {
  ApprovalDeniedError,
  ConfigError,
  createSandbox,
  EditFailedError,
  FileExistsError,
  FileNotFoundError,
  FileTooLargeError,
  InvalidPathError,
  IoError,
  OsSandboxUnavailableError,
  PathNotInSandboxError,
  PathNotWritableError,
  parseSandboxConfig,
  SandboxError,
  SandboxPermissionEscalationError,
  SuffixNotAllowedError,
} from "../../src/index.js";
import { DEFAULT_PROTECTED } from "../../src/sandbox/protected-defaults.js";
import { DEFAULT_SECRETS } from "../../src/sandbox/secrets.js";
import { makeTempDir, removeDir, writeTree } from "../helpers/tree.js";

let base: string;
beforeAll(() => {
  base = makeTempDir();
  writeTree(base, { p: { "a.txt": "a" }, c: {}, "file.txt": "f" });
});
afterAll(() => removeDir(base));

function configMessage(input: unknown, opts?: { source?: string; at?: string[] }): string {
  try {
    parseSandboxConfig(input, opts);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as Error).message;
  }
  throw new Error("expected a ConfigError");
}

describe("parseSandboxConfig", () => {
  it("accepts camelCase and snake_case spellings alike", () => {
    const a = parseSandboxConfig({ root: ".", maxFileBytes: 10, readApproval: true });
    const b = parseSandboxConfig({ root: ".", max_file_bytes: 10, read_approval: true });
    expect(a).toEqual(b);
    expect(a.maxFileBytes).toBe(10);
    expect(a.rootMount?.readApproval).toBe(true);
  });

  it("parses mounts in object and Docker short form", () => {
    const c = parseSandboxConfig({
      root: ".",
      mounts: [
        "./build:/out",
        "../cache:/cache:ro",
        "/abs:/x:rw",
        { source: "s", target: "/t/", readonly: true },
      ],
    });
    expect(c.mounts.map((m) => [m.source, m.target, m.readonly])).toEqual([
      ["./build", "/out", false],
      ["../cache", "/cache", true],
      ["/abs", "/x", false],
      ["s", "/t", true],
    ]);
  });

  it("defaults: read-write, .git and tool configs protected, secrets withheld, no suffix rule", () => {
    const c = parseSandboxConfig({ root: "." });
    expect(c.readonly).toBe(false);
    expect(c.protected).toEqual([...DEFAULT_PROTECTED]);
    expect(c.protected).toContain(".git");
    expect(c.secrets).toEqual([...DEFAULT_SECRETS]);
    expect(c.suffixes).toBeUndefined();
    // `[]` turns each list off.
    const none = parseSandboxConfig({ root: ".", protected: [], secrets: [] });
    expect([none.protected, none.secrets]).toEqual([[], []]);
  });

  it("names every issue with its key path, zod style", () => {
    expect(
      configMessage({ root: ".", readonly: "yes" }, { source: "program.yaml", at: ["sandbox"] }),
    ).toMatchInlineSnapshot(`
      "Invalid configuration in program.yaml:
      ✖ expected boolean, received string → at sandbox.readonly"
    `);
    expect(configMessage({ root: ".", read_only: true })).toMatchInlineSnapshot(`
      "Invalid configuration:
      ✖ unknown key 'read_only' (did you mean 'readonly'?) → at read_only"
    `);
    expect(
      configMessage({
        root: ".",
        mounts: [
          "nocolon",
          { source: "a", target: "rel" },
          { source: "b", target: "/" },
          "x:/d",
          "y:/d",
        ],
      }),
    ).toMatchInlineSnapshot(`
      "Invalid configuration:
      ✖ expected 'SOURCE:TARGET' or 'SOURCE:TARGET:ro', received "nocolon" → at mounts[0]
      ✖ a mount target must be an absolute virtual path such as '/rel' → at mounts[1].target
      ✖ a mount cannot replace '/'; set 'root' instead → at mounts[2].target
      ✖ two mounts share the target '/d' → at mounts[4]"
    `);
    expect(configMessage({})).toMatchInlineSnapshot(`
      "Invalid configuration:
      ✖ give exactly one of 'root' (a folder seen as '/') and 'paths' (named folders)"
    `);
    expect(configMessage({ root: ".", paths: { a: { root: "." } } })).toMatchInlineSnapshot(`
      "Invalid configuration:
      ✖ give exactly one of 'root' (a folder seen as '/') and 'paths' (named folders)"
    `);
    expect(
      configMessage({
        root: ".",
        max_file_bytes: -1,
        mounts: [{ source: "a", target: "/a", read_only: true }],
      }),
    ).toMatchInlineSnapshot(`
      "Invalid configuration:
      ✖ expected a positive number of bytes → at max_file_bytes
      ✖ unknown key 'read_only' (did you mean 'readonly'?) → at mounts[0].read_only"
    `);
    expect(configMessage({ paths: { "bad name": { root: "." } } })).toMatchInlineSnapshot(`
      "Invalid configuration:
      ✖ a path name may use letters, digits, '.', '_' and '-' only → at paths["bad name"]"
    `);
    expect(configMessage({ root: ".", maxFileBytes: 1, max_file_bytes: 2 })).toMatchInlineSnapshot(`
      "Invalid configuration:
      ✖ give either 'maxFileBytes' or 'max_file_bytes', not both → at max_file_bytes"
    `);
    expect(
      configMessage({ paths: { "bad name": { root: "." }, ok: { root: ".", mode: "rx" } } }),
    ).toMatchInlineSnapshot(`
      "Invalid configuration:
      ✖ expected one of "ro"|"rw" → at paths.ok.mode"
    `);
    expect(configMessage("root: .")).toMatchInlineSnapshot(`
      "Invalid configuration:
      ✖ expected object, received string"
    `);
  });

  it("keeps the issues on the error", () => {
    try {
      parseSandboxConfig({ root: 1, readonly: 2 });
    } catch (err) {
      expect((err as ConfigError).issues).toEqual([
        { path: ["root"], message: "expected string, received number" },
        { path: ["readonly"], message: "expected boolean, received number" },
      ]);
    }
    expect.assertions(1);
  });
});

describe("createSandbox", () => {
  it("reports a missing root naming the folder and basePath (a setup error, for the host's developer)", () => {
    let msg = "";
    try {
      createSandbox({ root: "missing", mounts: ["file.txt:/f"] }, { basePath: base });
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      msg = (err as Error).message;
    }
    expect(msg.replaceAll(base, "<base>")).toMatchInlineSnapshot(`
      "Invalid configuration:
      ✖ the folder for '/' does not exist: '<base>/missing' ('missing' resolved against basePath '<base>') → at root
      ✖ the source for '/f' is not a directory: '<base>/file.txt' ('file.txt' resolved against basePath '<base>') → at mounts[0].source"
    `);
  });

  it("resolves relative roots against basePath", () => {
    const sb = createSandbox({ root: "p" }, { basePath: base });
    expect(sb.resolve("/a.txt")).toBe(join(base, "p/a.txt"));
  });
});

describe("error family", () => {
  const all: [new (m: string, p?: string) => SandboxError, string][] = [
    [PathNotInSandboxError, "path_not_in_sandbox"],
    [PathNotWritableError, "path_not_writable"],
    [SuffixNotAllowedError, "suffix_not_allowed"],
    [FileTooLargeError, "file_too_large"],
    [SandboxPermissionEscalationError, "permission_escalation"],
    [InvalidPathError, "invalid_path"],
    [FileNotFoundError, "not_found"],
    [FileExistsError, "already_exists"],
    [EditFailedError, "edit_failed"],
    [ApprovalDeniedError, "approval_denied"],
    [IoError, "io_error"],
  ];

  it.each(all)("%o has its code, name and round-trips through JSON", (Ctor, code) => {
    const e = new Ctor("message text", "/v/path");
    expect(e).toBeInstanceOf(SandboxError);
    expect(e).toBeInstanceOf(Error);
    expect(e.code).toBe(code);
    expect(e.name).toBe(Ctor.name);
    expect(e.path).toBe("/v/path");
    const wire = JSON.parse(JSON.stringify(e));
    expect(wire).toEqual({ name: Ctor.name, code, message: "message text", path: "/v/path" });
    const back = SandboxError.fromJSON(wire);
    expect(back).toBeInstanceOf(Ctor);
    expect(back.message).toBe("message text");
    expect(back.path).toBe("/v/path");
    expect(back.name).toBe(Ctor.name);
  });

  it("round-trips ConfigError issues and OsSandboxUnavailableError", () => {
    const e = new ConfigError("bad", [{ path: ["a", 0], message: "m" }]);
    const back = SandboxError.fromJSON(JSON.parse(JSON.stringify(e)));
    expect(back).toBeInstanceOf(ConfigError);
    expect((back as ConfigError).issues).toEqual([{ path: ["a", 0], message: "m" }]);
    expect(
      SandboxError.fromJSON(new OsSandboxUnavailableError("no bwrap").toJSON()),
    ).toBeInstanceOf(OsSandboxUnavailableError);
  });

  it("fromJSON treats its input as untrusted", () => {
    for (const junk of [
      null,
      1,
      "x",
      { code: "constructor" },
      { code: "__proto__", message: 5 },
      { code: "nope" },
    ]) {
      const e = SandboxError.fromJSON(junk);
      expect(e).toBeInstanceOf(SandboxError);
      expect(typeof e.message).toBe("string");
    }
    expect(
      SandboxError.fromJSON({
        code: "invalid_config",
        message: "m",
        issues: [{ path: [{}], message: 1 }, "x"],
      }),
    ).toMatchObject({
      issues: [],
    });
  });

  it("wraps Node fs errors without their host paths", () => {
    const nodeErr = Object.assign(
      new Error(`EISDIR: illegal operation on a directory, read '${base}/p'`),
      { code: "EISDIR" },
    );
    const e = wrapFsError(nodeErr, "read", "/p");
    expect(e).toBeInstanceOf(IoError);
    expect(e.message).toMatchInlineSnapshot(
      `"I/O error during read on '/p': it is a directory, not a file (EISDIR)."`,
    );
    expect(
      wrapFsError(Object.assign(new Error(base), { code: "ENOENT" }), "read", "/x"),
    ).toBeInstanceOf(FileNotFoundError);
    expect(
      wrapFsError(Object.assign(new Error(base), { code: "EWEIRD" }), "read", "/x").message,
    ).not.toContain(base);
  });
});
