/**
 * Setup errors found at setup (issue 20): a worker `sandbox` key that can
 * never be satisfied — by the host's sandbox, or along a delegation path it
 * can be called on — is refused by `createHost` and `loadProgram`, naming
 * the worker, the path and the key; before, it passed and failed only at
 * `run`, as a `SandboxPermissionEscalationError` naming no worker.
 */
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ConfigError,
  createHost as createBuiltHost,
  loadProgram as loadBuiltProgram,
} from "../dist/src/index.js";
import type { Host, HostOptions } from "../src/index.js";
import { assertBuilt } from "./conformance/thread.js";
import { makeTempDir, removeDir, writeTree } from "./helpers/tree.js";

const createHost = createBuiltHost as unknown as (o: HostOptions) => Promise<Host>;
const loadProgram = loadBuiltProgram as unknown as (dir: string) => Promise<HostOptions>;
const fx = (name: string) => fileURLToPath(new URL(`./fixtures/host/${name}`, import.meta.url));

let base: string;

beforeAll(() => {
  assertBuilt();
  base = makeTempDir();
  writeTree(join(base, "project"), {
    src: { "a.ts": "a" },
    docs: { "n.md": "n" },
    out: {},
  });
  writeTree(join(base, "cache"), { "c.txt": "c" });
});
afterAll(() => removeDir(base));

/** The ConfigError `p` rejects with (it must reject with one). */
async function configFailure(p: Promise<unknown>): Promise<ConfigError> {
  const err = await p.then(
    (v) => {
      if (v && typeof (v as Host).close === "function") void (v as Host).close();
      throw new Error("expected a ConfigError, but it was accepted");
    },
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ConfigError);
  expect((err as Error).message).not.toContain(base);
  return err as ConfigError;
}

const sandbox = { root: "project", mounts: ["cache:/cache:ro"] };

describe("createHost refuses a worker sandbox that can never be satisfied", () => {
  it("allowWrite under a read-only root, named with the worker and the key", async () => {
    const err = await configFailure(
      createHost({
        sandbox: { root: "project", readonly: true },
        basePath: base,
        workers: { writer: { module: fx("echo.js"), sandbox: { allowWrite: "/out" } } },
      }),
    );
    expect(err.issues.map((i) => i.path)).toEqual([["workers", "writer", "sandbox", "allowWrite"]]);
    expect(err.message).toMatchInlineSnapshot(`
      "Invalid configuration:
      ✖ worker 'writer' can never get write access to '/out': the host's sandbox can only read '/out' (it writes nowhere); change this key, or widen the host's sandbox → at workers.writer.sandbox.allowWrite"
    `);
  });

  it("along a delegation path: restrict outside the caller's, a mount the caller lacks", async () => {
    const err = await configFailure(
      createHost({
        sandbox,
        basePath: base,
        workers: {
          main: { module: fx("echo.js"), sandbox: { restrict: "/src" }, delegates: ["docs"] },
          docs: { module: fx("echo.js"), sandbox: { restrict: "/docs" } },
          reader: {
            module: fx("echo.js"),
            sandbox: { allowRead: ["/src"] },
            delegates: ["cached"],
          },
          cached: { module: fx("echo.js"), sandbox: { allowRead: ["/src", "/cache"] } },
        },
      }),
    );
    expect(err.message).toMatchInlineSnapshot(`
      "Invalid configuration:
      ✖ worker 'docs' can never get read access to '/docs': along main → docs, the sandbox of its caller 'main' cannot read '/docs' (it reads only /src); remove 'docs' from the delegates of 'main', or change this key → at workers.docs.sandbox.restrict
      ✖ worker 'cached' can never get read access to '/cache': along reader → cached, the sandbox of its caller 'reader' cannot read '/cache' (it reads only /src); remove 'cached' from the delegates of 'reader', or change this key → at workers.cached.sandbox.allowRead[1]"
    `);
  });

  it("readonly: false where the caller writes nowhere; the path is the shortest one", async () => {
    const err = await configFailure(
      createHost({
        sandbox,
        basePath: base,
        workers: {
          main: { module: fx("echo.js"), delegates: ["reviewer", "editor"] },
          reviewer: { module: fx("echo.js"), sandbox: { readonly: true }, delegates: ["editor"] },
          editor: {
            module: fx("echo.js"),
            sandbox: { restrict: "/src", readonly: false },
            delegates: ["reviewer"],
          },
        },
      }),
    );
    expect(err.message).toMatchInlineSnapshot(`
      "Invalid configuration:
      ✖ worker 'editor' asks for 'readonly: false', but along reviewer → editor, the sandbox of its caller 'reviewer' can write nothing under '/src' (it writes nowhere); remove 'editor' from the delegates of 'reviewer', or change this key → at workers.editor.sandbox.readonly"
    `);
  });

  it("an allow-list outside the worker's own restrict", async () => {
    const err = await configFailure(
      createHost({
        sandbox,
        basePath: base,
        workers: {
          a: { module: fx("echo.js"), sandbox: { restrict: "/src", allowRead: ["/src", "/docs"] } },
        },
      }),
    );
    expect(err.message).toMatchInlineSnapshot(`
      "Invalid configuration:
      ✖ worker 'a' can never get read access to '/docs': the host's sandbox, restricted by its own 'restrict: /src', cannot read '/docs' (it reads only /src); change this key, or the worker's 'restrict' → at workers.a.sandbox.allowRead[1]"
    `);
  });

  it("a malformed worker sandbox key is named at createHost, not at run", async () => {
    const err = await configFailure(
      createHost({
        sandbox,
        basePath: base,
        workers: {
          a: { module: fx("echo.js"), sandbox: { allowRaed: "/src" } as never },
          b: { module: fx("echo.js"), sandbox: { allowRead: "src" } },
        },
      }),
    );
    expect(err.message).toMatchInlineSnapshot(`
      "Invalid configuration:
      ✖ unknown key 'allowRaed' → at workers.a.sandbox.allowRaed
      ✖ worker 'b': Invalid path 'src' in allowRead: entries must be absolute virtual paths. Use '/src'. → at workers.b.sandbox.allowRead"
    `);
  });

  it("accepts what every path can satisfy, and paths beyond maxDepth are not paths", async () => {
    const workers: HostOptions["workers"] = {
      main: { module: fx("delegator.js"), delegates: ["reader", "copier"] },
      reader: { module: fx("delegator.js"), sandbox: { readonly: true }, delegates: ["copier"] },
      // Reached from the host, from main and from reader: fine on each.
      copier: { module: fx("delegator.js"), delegates: ["writer"] },
      // Writes nowhere only below reader → copier, at depth 3.
      writer: { module: fx("echo.js"), sandbox: { allowWrite: "/out" } },
    };
    const refused = await configFailure(
      createHost({ sandbox, basePath: base, workers, maxDepth: 3 }),
    );
    expect(refused.issues).toEqual([
      {
        path: ["workers", "writer", "sandbox", "allowWrite"],
        message: expect.stringContaining(
          "along reader → copier → writer, the sandbox of its caller 'copier' can only read '/out'",
        ),
      },
    ]);
    // With maxDepth 2 no call reaches writer below reader: accepted, and runs.
    const host = await createHost({ sandbox, basePath: base, workers, maxDepth: 2 });
    try {
      expect(await host.run("reader", { to: "copier", input: 1 })).toMatchObject({ ok: true });
      expect(await host.run("copier", { to: "writer" })).toMatchObject({
        ok: true,
        value: { readable: ["/out"], writable: ["/out"] },
      });
    } finally {
      await host.close();
    }
  });
});

describe("loadProgram refuses it too, naming the file and the YAML key", () => {
  it("in program.yaml and in a .worker file", async () => {
    const program = (workers: string, files: Record<string, string> = {}) => {
      const dir = makeTempDir("mountbox-program-");
      writeTree(dir, {
        "program.yaml": `sandbox:\n  root: "."\n  readonly: true\nworkers:\n${workers}`,
        src: { "a.ts": "a" },
        workers: files,
      });
      return dir;
    };
    const inYaml = program(
      `  main: { module: ${JSON.stringify(fx("echo.js"))}, sandbox: { allow_write: [/src] } }\n`,
    );
    const inFile = program(
      `  main: { module: ${JSON.stringify(fx("echo.js"))}, sandbox: { restrict: /src }, delegates: [helper] }\n`,
      {
        "helper.worker": `---\nmodule: ${JSON.stringify(fx("echo.js"))}\nsandbox:\n  allow_read: [/src, /workers]\n---\n`,
      },
    );
    try {
      expect((await configFailure(loadProgram(inYaml))).message).toMatchInlineSnapshot(`
        "Invalid configuration in program.yaml:
        ✖ worker 'main' can never get write access to '/src': the host's sandbox can only read '/src' (it writes nowhere); change this key, or widen the host's sandbox → at workers.main.sandbox.allow_write[0]"
      `);
      expect((await configFailure(loadProgram(inFile))).message).toMatchInlineSnapshot(`
        "Invalid configuration in workers/helper.worker:
        ✖ worker 'helper' can never get read access to '/workers': along main → helper, the sandbox of its caller 'main' cannot read '/workers' (it reads only /src); remove 'helper' from the delegates of 'main', or change this key → at sandbox.allow_read[1]"
      `);
    } finally {
      removeDir(inYaml);
      removeDir(inFile);
    }
  });
});
