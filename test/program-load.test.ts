import { join, relative } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import {
  ConfigError,
  createSandbox,
  DEFAULT_PROTECTED,
  loadProgram,
  loadProgramDefinition,
  type SandboxConfig,
} from "../src/index.js";
import { makeTempDir, removeDir, type TreeSpec, writeTree } from "./helpers/tree.js";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) removeDir(d);
});

/** A real program folder from `{ "relative/path": "content" }`. */
function makeProgram(files: TreeSpec): string {
  const dir = makeTempDir("mountbox-program-");
  dirs.push(dir);
  writeTree(dir, files);
  return dir;
}

const JS = "export default {};\n";

/**
 * Loads a program that must fail; returns the message, checked to hold no
 * host path — or, with `hostPaths` (a setup error naming a missing file or
 * folder for the host's developer, issue 20), with the program folder shown
 * as `<dir>`.
 */
async function loadError(files: TreeSpec, opts: { hostPaths?: boolean } = {}): Promise<string> {
  const dir = makeProgram(files);
  let caught: unknown;
  try {
    await loadProgram(dir);
  } catch (err) {
    caught = err;
  }
  expect(caught).toBeInstanceOf(ConfigError);
  const err = caught as ConfigError;
  expect(err.code).toBe("invalid_config");
  if (opts.hostPaths) {
    expect(err.message).toContain(dir);
    return err.message.replaceAll(dir, "<dir>");
  }
  expect(err.message).not.toContain(dir);
  expect(JSON.stringify(err.issues)).not.toContain(dir);
  expect(err.stack ?? "").not.toContain(dir);
  return err.message;
}

describe("loadProgram: good programs", () => {
  it("root form with code-worker entries and a .worker file", async () => {
    const dir = makeProgram({
      "program.yaml": `
name: docs-review
sandbox:
  root: "."
  mounts: ["./cache:/cache:ro"]
  max_file_bytes: 1000
  read_approval: true
max_depth: 5
max_agents: 32
warm_threads: 0
workers:
  main:     { module: "./workers/main.js", delegates: [analyzer, summarizer], timeout_ms: 60000 }
  analyzer: { module: "./workers/analyzer.js", sandbox: { restrict: "/src/", readonly: true }, max_old_generation_size_mb: 256 }
`,
      "workers/main.js": JS,
      "workers/analyzer.js": JS,
      "workers/summarizer.worker": `---
name: summarizer
description: Summarizes documents.
sandbox:
  allow_read: ["/docs", "/cache"]
  allow_write: /docs/summaries
  inherit: false
delegates: []
timeout_ms: 1000
---

# Summarizer

Read the documents and write a summary.
`,
      cache: {},
    });
    expect(await loadProgram(dir)).toEqual({
      name: "docs-review",
      basePath: dir,
      sandbox: {
        root: ".",
        mounts: ["./cache:/cache:ro"],
        maxFileBytes: 1000,
        readApproval: true,
        // Added by loadProgram: the program's own files are out of agents' reach.
        protected: [...DEFAULT_PROTECTED, "/program.yaml", "/workers"],
      },
      maxDepth: 5,
      maxAgents: 32,
      warmThreads: 0,
      workers: {
        main: {
          module: join(dir, "workers/main.js"),
          delegates: ["analyzer", "summarizer"],
          timeoutMs: 60000,
        },
        analyzer: {
          module: join(dir, "workers/analyzer.js"),
          sandbox: { restrict: "/src", readonly: true },
          maxOldGenerationSizeMb: 256,
        },
        summarizer: {
          description: "Summarizes documents.",
          instructions: "# Summarizer\n\nRead the documents and write a summary.",
          sandbox: {
            allowRead: ["/docs", "/cache"],
            allowWrite: "/docs/summaries",
            inherit: false,
          },
          delegates: [],
          timeoutMs: 1000,
        },
      },
    });
  });

  it("named-paths form: worker paths may be name, name/rel, name:rel, /name/rel", async () => {
    const dir = makeProgram({
      "program.yaml": `
sandbox:
  paths:
    docs: { root: ./docs, mode: rw, max_file_bytes: 500 }
    data: { root: ./data }
workers:
  main: { module: "main.js", sandbox: { restrict: "docs", allow_read: ["docs/a", "docs:raw", "/docs/x"], allow_write: "docs:out" } }
  other: { module: "main.js", sandbox: { allow_read: ["data:raw", "/data/x"] } }
`,
      "main.js": JS,
      docs: {},
      data: {},
    });
    expect(await loadProgram(dir)).toEqual({
      basePath: dir,
      sandbox: {
        paths: {
          docs: { root: "./docs", mode: "rw", maxFileBytes: 500 },
          data: { root: "./data" },
        },
      },
      workers: {
        main: {
          module: join(dir, "main.js"),
          sandbox: {
            restrict: "/docs",
            allowRead: ["/docs/a", "/docs/raw", "/docs/x"],
            allowWrite: "/docs/out",
          },
        },
        other: {
          module: join(dir, "main.js"),
          sandbox: { allowRead: ["/data/raw", "/data/x"] },
        },
      },
    });
  });

  it("no sandbox: HostOptions.sandbox is undefined; .worker files only", async () => {
    const dir = makeProgram({
      "program.yaml": "name: bare\n",
      "workers/helper.worker": "---\ndescription: helps\n---\nHelp.\n",
      "workers/notes.txt": "not a worker",
    });
    const options = await loadProgram(dir);
    expect(options).toEqual({
      name: "bare",
      basePath: dir,
      workers: { helper: { description: "helps", instructions: "Help." } },
    });
    expect("sandbox" in options).toBe(false);
  });

  it("CRLF line endings and a BOM in a .worker file", async () => {
    const dir = makeProgram({
      "program.yaml": "",
      "workers/w.worker": "\uFEFF---\r\ndescription: d\r\n---\r\n\r\nLine one.\r\nLine two.\r\n",
    });
    expect((await loadProgram(dir)).workers).toEqual({
      w: { description: "d", instructions: "Line one.\nLine two." },
    });
  });

  it("an empty program.yaml is an empty program", async () => {
    const dir = makeProgram({ "program.yaml": "" });
    expect(await loadProgram(dir)).toEqual({ basePath: dir, workers: {} });
  });

  it("a .worker file may describe a code worker; its model and tools stay out of WorkerSpec", async () => {
    const dir = makeProgram({
      "program.yaml": "model: anthropic:claude-haiku-4-5\n",
      "lib/coder.js": JS,
      "workers/coder.worker":
        "---\nmodule: ./lib/coder.js\nmodel: openai:gpt-5\ntools: [read_file, write_file]\n---\n",
      "workers/writer.worker":
        "---\nname: writer\ninstructions: |\n  Write things.\ntools: [write_file]\n---\n",
    });
    const def = await loadProgramDefinition(dir);
    expect(def).toEqual({
      model: "anthropic:claude-haiku-4-5",
      options: {
        basePath: dir,
        workers: {
          coder: { module: join(dir, "lib/coder.js") },
          // An LLM worker's model (program.yaml's default here) and tools are in its spec.
          writer: {
            instructions: "Write things.",
            model: "anthropic:claude-haiku-4-5",
            tools: ["write_file"],
          },
        },
      },
      workers: {
        coder: {
          source: "workers/coder.worker",
          model: "openai:gpt-5",
          tools: ["read_file", "write_file"],
        },
        writer: { source: "workers/writer.worker", tools: ["write_file"] },
      },
    });
    expect(await loadProgram(dir)).toEqual(def.options);
  });

  it("module paths may be absolute or file: URLs; a relative dir argument is resolved", async () => {
    const dir = makeProgram({ "a.js": JS, "b.js": JS });
    writeTree(dir, {
      "program.yaml": `workers:\n  a: { module: ${JSON.stringify(join(dir, "a.js"))} }\n  b: { module: ${JSON.stringify(pathToFileURL(join(dir, "b.js")).href)} }\n`,
    });
    const options = await loadProgram(relative(process.cwd(), dir));
    expect(options.basePath).toBe(dir);
    expect(options.workers).toEqual({
      a: { module: join(dir, "a.js") },
      b: { module: join(dir, "b.js") },
    });
  });
});

describe("loadProgram: bad program.yaml", () => {
  it("missing program.yaml", async () => {
    expect(await loadError({ "other.yaml": "" }, { hostPaths: true })).toMatchInlineSnapshot(`
      "Invalid configuration in program.yaml:
      ✖ program.yaml was not found in the program folder '<dir>' (loadProgram(dir) reads dir/program.yaml)"
    `);
  });

  it("YAML syntax error names the line", async () => {
    expect(
      await loadError({ "program.yaml": "name: x\nworkers:\n  main: { module: [a.js }\n" }),
    ).toMatchInlineSnapshot(`
      "Invalid configuration in program.yaml:
      ✖ YAML syntax error at line 3, column 25: Flow sequence in block collection must be sufficiently indented and end with a ]
      ✖ YAML syntax error at line 3, column 26: Flow map in block collection must be sufficiently indented and end with a }"
    `);
  });

  it("duplicate YAML key", async () => {
    expect(await loadError({ "program.yaml": "name: a\nname: b\n" })).toMatchInlineSnapshot(`
      "Invalid configuration in program.yaml:
      ✖ YAML syntax error at line 2, column 1: Map keys must be unique"
    `);
  });

  it("unknown keys, with snake_case hints (camelCase is not accepted in YAML)", async () => {
    expect(
      await loadError({
        "program.yaml": `
maxDepth: 3
workers:
  main: { module: m.js, timeoutMs: 5, sandbox: { restrict: /src, read_only: true, allowRead: [/src] } }
sandbox: { root: "." }
colour: blue
`,
        "m.js": JS,
      }),
    ).toMatchInlineSnapshot(`
      "Invalid configuration in program.yaml:
      ✖ unknown key 'maxDepth' (did you mean 'max_depth'?) → at maxDepth
      ✖ unknown key 'colour' (allowed: name, model, sandbox, max_depth, max_agents, audit_log, warm_threads, warm_processes, isolation, mcp_servers, workers) → at colour
      ✖ unknown key 'timeoutMs' (did you mean 'timeout_ms'?) → at workers.main.timeoutMs
      ✖ unknown key 'read_only' (did you mean 'readonly'?) → at workers.main.sandbox.read_only
      ✖ unknown key 'allowRead' (did you mean 'allow_read'?) → at workers.main.sandbox.allowRead"
    `);
  });

  it("wrong types, every issue collected", async () => {
    expect(
      await loadError({
        "program.yaml": `
max_depth: 0
max_agents: 2.5
warm_threads: -1
sandbox: { root: "." }
workers:
  main:
    module: m.js
    timeout_ms: "60s"
    delegates: main
    sandbox: { readonly: "yes", restrict: 5, allow_write: [1] }
`,
        "m.js": JS,
      }),
    ).toMatchInlineSnapshot(`
      "Invalid configuration in program.yaml:
      ✖ expected a positive integer (delegation depth) → at max_depth
      ✖ expected a positive integer (agents) → at max_agents
      ✖ expected a non-negative integer (threads) → at warm_threads
      ✖ expected a list of worker names → at workers.main.delegates
      ✖ expected a positive integer (milliseconds) → at workers.main.timeout_ms
      ✖ expected string, received number → at workers.main.sandbox.restrict
      ✖ expected boolean, received string → at workers.main.sandbox.readonly
      ✖ expected a virtual path or a list of virtual paths → at workers.main.sandbox.allow_write"
    `);
  });

  it("sandbox errors come from parseSandboxConfig, under sandbox.", async () => {
    expect(
      await loadError({
        "program.yaml": "sandbox: { root: '.', read_only: true, readonly: 'no' }\n",
      }),
    ).toMatchInlineSnapshot(`
      "Invalid configuration in program.yaml:
      ✖ expected boolean, received string → at sandbox.readonly
      ✖ unknown key 'read_only' (did you mean 'readonly'?) → at sandbox.read_only"
    `);
  });

  it("a sandbox folder that does not exist", async () => {
    expect(
      await loadError(
        {
          "program.yaml": "sandbox: { root: ./missing, mounts: ['./gone:/gone'] }\n",
        },
        { hostPaths: true },
      ),
    ).toMatchInlineSnapshot(`
      "Invalid configuration in program.yaml:
      ✖ the folder for '/' does not exist: '<dir>/missing' ('./missing' resolved against basePath '<dir>') → at sandbox.root
      ✖ the folder for '/gone' does not exist: '<dir>/gone' ('./gone' resolved against basePath '<dir>') → at sandbox.mounts[0].source"
    `);
  });

  it("relative worker paths in root form", async () => {
    expect(
      await loadError({
        "program.yaml": `
sandbox: { root: "." }
workers:
  main: { module: m.js, sandbox: { restrict: src, allow_read: ["./docs", "/ok"], allow_write: "/../up" } }
`,
        "m.js": JS,
      }),
    ).toMatchInlineSnapshot(`
      "Invalid configuration in program.yaml:
      ✖ restrict must be an absolute virtual path such as '/src' → at workers.main.sandbox.restrict
      ✖ an allow_read entry must be an absolute virtual path such as '/docs' → at workers.main.sandbox.allow_read[0]
      ✖ allow_write climbs above '/' → at workers.main.sandbox.allow_write"
    `);
  });

  it("named-paths form: a path outside every name", async () => {
    expect(
      await loadError({
        "program.yaml": `
sandbox: { paths: { docs: { root: "." } } }
workers:
  main: { module: m.js, sandbox: { restrict: other/x, allow_read: "nope:y" } }
`,
        "m.js": JS,
      }),
    ).toMatchInlineSnapshot(`
      "Invalid configuration in program.yaml:
      ✖ 'other/x' is not under a named path of the program sandbox (names: docs) → at workers.main.sandbox.restrict
      ✖ 'nope:y' is not under a named path of the program sandbox (names: docs) → at workers.main.sandbox.allow_read"
    `);
  });

  it("a worker sandbox without a program sandbox", async () => {
    expect(
      await loadError({
        "program.yaml": "workers:\n  main: { module: m.js, sandbox: { restrict: /src } }\n",
        "m.js": JS,
      }),
    ).toMatchInlineSnapshot(`
      "Invalid configuration in program.yaml:
      ✖ this worker narrows the program's sandbox, but program.yaml has no 'sandbox' (so no worker has file access); add one to program.yaml or remove this key → at workers.main.sandbox"
    `);
  });

  it("missing module file, missing module key, module that is a folder", async () => {
    expect(
      await loadError(
        {
          "program.yaml": `
workers:
  a: { module: ./workers/nope.js }
  b: { description: no module }
  c: { module: ./lib }
  d: { module: ${JSON.stringify(join("/nonexistent-mountbox", "x.js"))} }
`,
          lib: {},
        },
        { hostPaths: true },
      ),
    ).toMatchInlineSnapshot(`
      "Invalid configuration in program.yaml:
      ✖ the module file './workers/nope.js' does not exist: '<dir>/workers/nope.js' (relative to the program folder) → at workers.a.module
      ✖ a worker in program.yaml is a code worker and needs 'module' (LLM workers go in workers/<name>.worker) → at workers.b.module
      ✖ the module file './lib' is not a file → at workers.c.module
      ✖ the module file does not exist: '/nonexistent-mountbox/x.js' → at workers.d.module"
    `);
  });

  it("unknown delegate", async () => {
    expect(
      await loadError({
        "program.yaml": "workers:\n  main: { module: m.js, delegates: [helper, ghost] }\n",
        "m.js": JS,
        "workers/helper.worker": "---\n---\nHelp.\n",
      }),
    ).toMatchInlineSnapshot(`
      "Invalid configuration in program.yaml:
      ✖ no worker named 'ghost' (workers: helper, main) → at workers.main.delegates[1]"
    `);
  });

  it("bad worker names and a non-map workers key", async () => {
    expect(
      await loadError({
        "program.yaml": "workers:\n  'bad name': { module: m.js }\n  __proto__: { module: m.js }\n",
      }),
    ).toMatchInlineSnapshot(`
      "Invalid configuration in program.yaml:
      ✖ a worker name may use letters, digits, '.', '_' and '-' only, and starts with a letter or digit → at workers["bad name"]
      ✖ a worker name may use letters, digits, '.', '_' and '-' only, and starts with a letter or digit → at workers.__proto__"
    `);
    expect(await loadError({ "program.yaml": "workers: [main]\n" })).toMatchInlineSnapshot(`
      "Invalid configuration in program.yaml:
      ✖ expected a map of worker names to worker entries → at workers"
    `);
    expect(await loadError({ "program.yaml": "- just a list\n" })).toMatchInlineSnapshot(`
      "Invalid configuration in program.yaml:
      ✖ expected a mapping of keys (name, sandbox, workers, …), received a list"
    `);
  });
});

describe("loadProgram: bad .worker files", () => {
  it("a worker defined in program.yaml and as a .worker file", async () => {
    expect(
      await loadError({
        "program.yaml": "workers:\n  main: { module: m.js }\n",
        "m.js": JS,
        "workers/main.worker": "---\ndescription: also main\n---\nHi.\n",
      }),
    ).toMatchInlineSnapshot(`
      "Invalid configuration in workers/main.worker:
      ✖ worker 'main' is also defined in program.yaml (at workers.main); define it in one place"
    `);
  });

  it("name that does not match the file name", async () => {
    expect(
      await loadError({
        "program.yaml": "",
        "workers/analyzer.worker": "---\nname: analyser\n---\nAnalyze.\n",
      }),
    ).toMatchInlineSnapshot(`
      "Invalid configuration in workers/analyzer.worker:
      ✖ the name 'analyser' does not match the file name 'analyzer.worker' (a worker is called by its file name) → at name"
    `);
  });

  it("frontmatter without a closing ---", async () => {
    expect(
      await loadError({
        "program.yaml": "",
        "workers/a.worker": "---\ndescription: x\n\nInstructions with no fence.\n",
      }),
    ).toMatchInlineSnapshot(`
      "Invalid configuration in workers/a.worker:
      ✖ the frontmatter has no closing '---' line (put one between the YAML and the instructions)"
    `);
  });

  it("a file without frontmatter", async () => {
    expect(
      await loadError({
        "program.yaml": "",
        "workers/a.worker": "sandbox: { restrict: /src }\n---\nBody.\n",
      }),
    ).toMatchInlineSnapshot(`
      "Invalid configuration in workers/a.worker:
      ✖ a .worker file starts with a '---' line, then YAML frontmatter, then a closing '---' line, then the instructions"
    `);
  });

  it("YAML syntax error in frontmatter names the file's line", async () => {
    expect(
      await loadError({
        "program.yaml": "",
        "workers/a.worker": "---\ndescription: ok\nsandbox: { restrict: /src\n---\nBody.\n",
      }),
    ).toMatchInlineSnapshot(`
      "Invalid configuration in workers/a.worker:
      ✖ YAML syntax error at line 3, column 26: Flow map in block collection must be sufficiently indented and end with a }"
    `);
  });

  it("unknown keys and wrong types in frontmatter", async () => {
    expect(
      await loadError({
        "program.yaml": "sandbox: { root: '.' }\n",
        "workers/a.worker":
          "---\nsandbox: { root: ./src, allow_read: src }\ntools: read_file\nmodel: 3\nmaxOldGenerationSizeMb: 10\n---\nBody.\n",
      }),
    ).toMatchInlineSnapshot(`
      "Invalid configuration in workers/a.worker:
      ✖ expected string, received number → at model
      ✖ expected a list of tool names → at tools
      ✖ unknown key 'maxOldGenerationSizeMb' (did you mean 'max_old_generation_size_mb'?) → at maxOldGenerationSizeMb
      ✖ unknown key 'root' (allowed: restrict, readonly, allow_read, allow_write, inherit, secrets) → at sandbox.root"
    `);
  });

  it("an LLM worker with no instructions; instructions given twice", async () => {
    expect(
      await loadError({
        "program.yaml": "",
        "workers/a.worker": "---\ndescription: empty\n---\n\n",
      }),
    ).toMatchInlineSnapshot(`
      "Invalid configuration in workers/a.worker:
      ✖ an LLM worker needs instructions after the frontmatter (or 'module' for a code worker)"
    `);
    expect(
      await loadError({
        "program.yaml": "",
        "workers/a.worker": "---\ninstructions: one\n---\ntwo\n",
      }),
    ).toMatchInlineSnapshot(`
      "Invalid configuration in workers/a.worker:
      ✖ give the instructions either in 'instructions' or after the frontmatter, not both → at instructions"
    `);
  });

  it("missing module and unknown delegate in a .worker file", async () => {
    expect(
      await loadError(
        {
          "program.yaml": "",
          "workers/a.worker": "---\nmodule: ./a.js\ndelegates: [b]\n---\n",
        },
        { hostPaths: true },
      ),
    ).toMatchInlineSnapshot(`
      "Invalid configuration in workers/a.worker:
      ✖ no worker named 'b' (workers: a) → at delegates[0]
      ✖ the module file './a.js' does not exist: '<dir>/a.js' (relative to the program folder) → at module"
    `);
  });

  it("an invalid worker file name", async () => {
    expect(
      await loadError({ "program.yaml": "", "workers/-x.worker": "---\n---\nBody.\n" }),
    ).toMatchInlineSnapshot(`
      "Invalid configuration in workers/-x.worker:
      ✖ the file name gives the worker name '-x': a worker name may use letters, digits, '.', '_' and '-' only, and starts with a letter or digit"
    `);
  });
});

describe("loadProgram: program files are protected from agents (review 3, t13)", () => {
  it("refuses writes to program.yaml and workers/ (new files, moves) inside the sandbox; reads still work", async () => {
    const yaml = 'sandbox: { root: "." }\nworkers:\n  main: { module: ./main.js }\n';
    const dir = makeProgram({
      "program.yaml": yaml,
      "main.js": JS,
      workers: { "x.worker": "---\ninstructions: hi\n---\n" },
      notes: { "a.md": "a" },
    });
    const options = await loadProgram(dir);
    const protectedList = (options.sandbox as { protected?: string[] }).protected;
    expect(protectedList).toEqual([...DEFAULT_PROTECTED, "/program.yaml", "/workers"]);
    const sb = createSandbox(options.sandbox as SandboxConfig, { basePath: dir });
    for (const [path, content] of [
      ["/program.yaml", 'sandbox: { root: "/" }\n'],
      ["/workers/x.worker", "---\nshell: true\n---\n"],
      ["/workers/new.worker", "---\nmodule: ./evil.js\n---\n"],
    ] as const) {
      const e = await sb.writeFile(path, content).catch((err: Error) => err);
      expect(e, path).toBeInstanceOf(Error);
      expect((e as { code?: string }).code, path).toBe("path_not_writable");
    }
    expect((await sb.move("/workers", "/w2").catch((err: Error) => err)) instanceof Error).toBe(
      true,
    );
    expect((await sb.remove("/program.yaml").catch((err: Error) => err)) instanceof Error).toBe(
      true,
    );
    expect(await sb.readFile("/program.yaml")).toBe(yaml);
    expect(await sb.readFile("/workers/x.worker")).toContain("instructions");
    await sb.writeFile("/notes/b.md", "ok");
    // The next load still sees the program as written.
    expect(await loadProgram(dir)).toEqual(options);
  });

  it("keeps a protected list that was given, and adds nothing outside the sandbox", async () => {
    const dir = makeProgram({
      "program.yaml":
        'sandbox: { root: "./data", protected: [".svn"] }\nworkers:\n  main: { module: ./main.js }\n',
      "main.js": JS,
      data: { "a.md": "a" },
    });
    const options = await loadProgram(dir);
    expect((options.sandbox as { protected?: string[] }).protected).toEqual([".svn"]);
  });
});
