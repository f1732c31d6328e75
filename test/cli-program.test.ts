/**
 * `mountbox check` and `mountbox run` as a user runs them: the bin of the
 * packed package, installed by npm, spawned from an app folder on a program
 * folder — the permission matrix, a run's lines, result and summary, JSON
 * output, approvals by policy, exit codes (0, 1, 2, 130), nothing left
 * running after Ctrl-C, and no host path in what a successful command prints.
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync, readFileSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, expect, it } from "vitest";
import { assertBuilt } from "./conformance/thread.js";
import { describeWithBwrap } from "./helpers/bwrap.js";
import { layOut, packAndInstall, writeFiles } from "./helpers/packed.js";
import { listDescendants } from "./helpers/processes.js";
import { makeTempDir, removeDir } from "./helpers/tree.js";

let base: string;
let app: string;
let bin: string;

const WORKER =
  'import { defineWorker } from "mountbox/worker";\nexport default defineWorker(async () => "ok");\n';

beforeAll(() => {
  assertBuilt();
  base = makeTempDir("mountbox-cli-check-");
  const { modules } = packAndInstall(join(base, "pack"));
  // An app with mountbox installed in its own node_modules, as npm lays it out.
  app = layOut("npm", base, modules);
  bin = join(app, "node_modules", "mountbox", "dist", "src", "cli", "main.js");
  writeFiles(app, {
    "review/program.yaml": [
      "name: review",
      'sandbox: { root: ".", mounts: ["./cache:/cache:ro", { source: "./inbox", target: "/inbox", write_approval: true }] }',
      "workers:",
      "  main: { module: ./workers/main.js, delegates: [analyser, reporter] }",
      "  analyser:",
      "    module: ./workers/analyser.js",
      "    sandbox: { restrict: /src, readonly: true }",
      "",
    ].join("\n"),
    "review/workers/main.js": [
      'import { defineWorker } from "mountbox/worker";',
      "export default defineWorker(async (input, ctx) => {",
      '  const analysis = await ctx.delegate("analyser", {});',
      '  const report = await ctx.delegate("reporter", { lines: analysis.lines });',
      "  return { analysis, report };",
      "});",
      "",
    ].join("\n"),
    "review/workers/analyser.js": [
      'import { defineWorker } from "mountbox/worker";',
      "export default defineWorker(async (input, ctx) => {",
      '  const text = await ctx.sandbox.readFile("/src/a.ts");',
      '  ctx.log("read a.ts");',
      "  let refused;",
      "  try {",
      '    await ctx.sandbox.writeFile("/src/b.ts", "x");',
      "  } catch (e) {",
      "    refused = e.code;",
      "  }",
      '  return { lines: text.split("\\n").length - 1, refused };',
      "});",
      "",
    ].join("\n"),
    "review/workers/reporter.js": [
      'import { defineWorker } from "mountbox/worker";',
      "export default defineWorker(async (input, ctx) => {",
      '  await ctx.sandbox.writeFile("/reports/summary.md", "lines: " + input.lines + "\\n");',
      '  return "written";',
      "});",
      "",
    ].join("\n"),
    "ops/program.yaml": [
      'sandbox: { root: ".", mounts: [{ source: "./inbox", target: "/inbox", write_approval: true }] }',
      "workers:",
      "  thrower: { module: ./w.js }",
      "  sleeper: { module: ./w.js }",
      "  inboxer: { module: ./w.js }",
      "",
    ].join("\n"),
    "ops/w.js": [
      'import { defineWorker } from "mountbox/worker";',
      "export default defineWorker(async (input, ctx) => {",
      '  if (input.do === "throw") throw new Error("no luck");',
      '  if (input.do === "sleep") await new Promise((r) => setTimeout(r, 60_000));',
      '  if (input.do === "inbox") {',
      "    try {",
      '      await ctx.sandbox.writeFile("/inbox/note.txt", "hi");',
      '      return "written";',
      "    } catch (e) {",
      "      return e.code;",
      "    }",
      "  }",
      '  return "done";',
      "});",
      "",
    ].join("\n"),
    "ops/inbox/.keep": "",
    "here/program.yaml": [
      'sandbox: { root: "." }',
      "workers:",
      "  main: { module: ./w.js }",
      "",
    ].join("\n"),
    "here/workers/writer.worker": "---\nmodel: fast\ntools: [write_file]\n---\nWrite notes.\n",
    "here/secret.txt": "the sandbox root's own file",
    // A provider package where the program's agents can write (planted by
    // one in an earlier run, say): importing it would run it in the host.
    "plant/program.yaml": 'sandbox: { root: "." }\nworkers: {}\n',
    "plant/workers/coder.worker": "---\nmodel: fast\ntools: [write_file]\n---\nWrite.\n",
    "plant/node_modules/@ai-sdk/openai-compatible/package.json": JSON.stringify({
      name: "@ai-sdk/openai-compatible",
      type: "module",
      exports: { ".": { import: "./index.mjs" }, "./package.json": "./package.json" },
    }),
    "plant/node_modules/@ai-sdk/openai-compatible/index.mjs": [
      'import { writeFileSync } from "node:fs";',
      'writeFileSync(new URL("../../../../PWNED", import.meta.url), "host code ran");',
      "export const createOpenAICompatible = () => () => ({});",
      "",
    ].join("\n"),
    // A low worker that may write where a higher one's module lies.
    "grow/program.yaml": [
      'sandbox: { root: "." }',
      "workers:",
      "  writer: { module: ./workers/writer.js, sandbox: { allow_write: [/agents] } }",
      "  admin: { module: ./agents/admin.js, shell: true }",
      "",
    ].join("\n"),
    "grow/workers/writer.js": [
      'import { defineWorker } from "mountbox/worker";',
      "export default defineWorker(async (input, ctx) => {",
      "  try {",
      '    await ctx.sandbox.writeFile("/agents/admin.js", "export default 1;");',
      '    return "rewrote";',
      "  } catch (e) {",
      "    return e.code;",
      "  }",
      "});",
      "",
    ].join("\n"),
    "grow/agents/admin.js": WORKER,
    "audit/program.yaml":
      'audit_log: "../../outside.jsonl"\nworkers:\n  main: { module: ./w.js }\n',
    "audit/w.js": WORKER,
    "odd/program.yaml": "workers:\n  main: { module: ./w.js }\n",
    "odd/w.js": [
      'import { defineWorker } from "mountbox/worker";',
      'export default defineWorker(async () => "a\u202eb\u2028c\u009bd");',
      "",
    ].join("\n"),
    "escapes/program.yaml": "workers: {}\n",
    "escapes/workers/ev\u001b]52;c;SGk=\u0007il.worker": "---\nmodule: ./nope.js\n---\n",
    "here/w.js": [
      'import { readFileSync } from "node:fs";',
      'import { defineWorker } from "mountbox/worker";',
      "export default defineWorker(async () => {",
      "  let read;",
      "  try {",
      '    read = readFileSync("secret.txt", "utf8");',
      "  } catch (e) {",
      "    read = e.code;",
      "  }",
      "  return { cwd: process.cwd(), read };",
      "});",
      "",
    ].join("\n"),
    "review/workers/reporter.worker": [
      "---",
      "module: ./workers/reporter.js",
      "shell: true",
      "network: true",
      "isolation: process",
      "sandbox: { allow_read: [/src], allow_write: [/reports] }",
      "---",
      "",
    ].join("\n"),
    "review/src/a.ts": "export const a = 1;\n",
    "review/reports/.keep": "",
    "review/cache/c.txt": "c",
    "review/inbox/.keep": "",
  });
});
afterAll(() => removeDir(base));

/** `mountbox <command> …` from the app folder, to its end. */
function mountbox(command: string, args: string[]) {
  const r = spawnSync(process.execPath, [bin, command, ...args], {
    cwd: app,
    encoding: "utf8",
    timeout: 60_000,
  });
  // (A file it cannot find is named by its host path: the user's own folder.)
  if (r.status === 0) expect(r.stdout + r.stderr).not.toContain(base);
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

const check = (...args: string[]) => mountbox("check", args);
const run = (...args: string[]) => mountbox("run", args);

it("prints each worker's access along each delegation path, with the areas' approvals", () => {
  const r = check("review");
  expect([r.code, r.stderr]).toEqual([0, ""]);
  expect(r.stdout).toMatchInlineSnapshot(`
    "✔ program.yaml and 3 workers are valid.

    Areas:
      /  read-write
      /cache  read-only
      /inbox  read-write, writes need approval

    Each worker along each path it can be called along (r read, w write, * only part of the area, - nothing; host code and .git are never writable):
      worker (delegation path)  /     /cache  /inbox  shell  network  runs as
      analyser                  r*    -       -       no     no       thread
      main                      rw    r       rw      no     no       thread
      reporter                  r*w*  -       -       yes    yes      process
      main → analyser           r*    -       -       no     no       thread
      main → reporter           r*w*  -       -       yes    yes      process
    "
  `);
});

it("prints what the README shows for examples/review", () => {
  const dir = fileURLToPath(new URL("../examples/review", import.meta.url));
  const r = check(dir);
  expect(r.code).toBe(0);
  const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8");
  const shown = /\$ mountbox check examples\/review\n([\s\S]*?)```/.exec(readme)?.[1];
  expect(shown).toBe(r.stdout);
});

it("--json gives the same as one object", () => {
  const r = check("review", "--json");
  expect(r.code).toBe(0);
  const out = JSON.parse(r.stdout) as {
    ok: boolean;
    areas: { path: string; writeApproval: boolean }[];
    rows: { chain: string[]; access: Record<string, string>; isolation: string }[];
  };
  expect(out.ok).toBe(true);
  expect(out.areas.map((a) => [a.path, a.writeApproval])).toEqual([
    ["/", false],
    ["/cache", false],
    ["/inbox", true],
  ]);
  expect(out.rows.find((x) => x.chain.join(">") === "main>reporter")).toEqual({
    chain: ["main", "reporter"],
    access: { "/": "r*w*", "/cache": "-", "/inbox": "-" },
    kind: "code",
    shell: true,
    network: true,
    isolation: "process",
  });
});

it("a bad program prints its errors with file and key path, and exits 2", () => {
  writeFiles(app, {
    "bad/program.yaml": [
      'sandbox: { root: ".", readonly: true }',
      "workers:",
      "  main: { module: ./main.js, delegats: [x] }",
      "",
    ].join("\n"),
    "bad/main.js": WORKER,
    "bad2/program.yaml": ['sandbox: { root: ".", readonly: true }', "workers: {}", ""].join("\n"),
    "bad2/workers/w.worker": "---\nmodule: ./main.js\nsandbox: { allow_write: [/out] }\n---\n",
    "bad2/main.js": WORKER,
  });
  const r = check("bad");
  expect([r.code, r.stdout]).toEqual([2, ""]);
  expect(r.stderr).toMatch(
    /^mountbox: Invalid configuration in program\.yaml:\n✖ .*delegats.* → at workers\.main\.delegats\n/,
  );
  const r2 = check("bad2");
  expect(r2.code).toBe(2);
  expect(r2.stderr).toMatch(
    /Invalid configuration in workers\/w\.worker:\n✖ .*worker 'w'.* → at sandbox\.allow_write\[0\]/,
  );
  const j = check("bad2", "--json");
  expect(j.code).toBe(2);
  const out = JSON.parse(j.stdout) as { ok: boolean; issues: { path: unknown[] }[] };
  expect(out.ok).toBe(false);
  expect(out.issues[0]?.path).toEqual(["sandbox", "allow_write", 0]);
});

it("bad usage says how to get help, and exits 2", () => {
  expect(check()).toMatchObject({
    code: 2,
    stderr: "mountbox: check needs a program folder\nRun 'mountbox check --help' for usage.\n",
  });
  expect(check("review", "--jsn").code).toBe(2);
  const help = check("--help");
  expect([help.code, help.stdout.split("\n")[0]]).toEqual([
    0,
    "Usage: mountbox check <program-dir> [--json]",
  ]);
});

/** Runs the bin asynchronously (for signals), resolving with its outcome. */
function start(args: string[]) {
  const child = spawn(process.execPath, [bin, ...args], {
    cwd: app,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d: Buffer) => {
    stdout += d.toString();
  });
  child.stderr.on("data", (d: Buffer) => {
    stderr += d.toString();
  });
  const done = new Promise<{ code: number | null; stdout: string; stderr: string }>((res) =>
    child.once("close", (code) => res({ code, stdout, stderr })),
  );
  return { child, done, out: () => stdout };
}

describeWithBwrap("mountbox run", () => {
  it("runs main and its delegates, prints what matters, the result and a summary", () => {
    const r = run("review");
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const [lines, rest] = r.stdout.split("\nResult:\n") as [string, string];
    expect(
      lines
        .trimEnd()
        .replace(/\(\d+ ms\)/g, "(<ms> ms)")
        .split("\n")
        .sort(),
    ).toEqual(
      [
        "▶ main started",
        "  ▶ analyser started",
        "  analyser: read a.ts",
        "✖ analyser: writeFile /src/b.ts refused (path_not_writable)",
        "✔ analyser finished (<ms> ms)",
        "  ▶ reporter started",
        "✔ reporter finished (<ms> ms)",
        "✔ main finished (<ms> ms)",
      ].sort(),
    );
    expect(rest.replace(/\d+\.\d s$/m, "<s> s")).toMatchInlineSnapshot(`
      "{
        "analysis": {
          "lines": 1,
          "refused": "path_not_writable"
        },
        "report": "written"
      }

      3 agents, 3 operations, 1 denial, 0 model steps (0 tokens), <s> s
      "
    `);
    expect(readFileSync(join(app, "review/reports/summary.md"), "utf8")).toBe("lines: 1\n");
  });

  it("--json prints every event as a line, then the result", () => {
    const r = run("review", "main", "--json");
    expect(r.code).toBe(0);
    const lines = r.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines.at(-1)).toEqual({
      type: "result",
      ok: true,
      value: { analysis: { lines: 1, refused: "path_not_writable" }, report: "written" },
    });
    const types = new Set(lines.slice(0, -1).map((e) => e.type));
    expect([...types].sort()).toEqual([
      "agent_finished",
      "agent_started",
      "denial",
      "log",
      "operation",
    ]);
  });

  it("a failed run exits 1 and says why", () => {
    const r = run("ops", "thrower", "--input", '{"do":"throw"}');
    expect(r.code).toBe(1);
    expect(r.stdout).toContain("✖ The run failed: Worker 'thrower' failed: Error: no luck");
    const j = run("ops", "thrower", "--input", '{"do":"throw"}', "--json");
    expect(j.code).toBe(1);
    expect(JSON.parse(j.stdout.trim().split("\n").at(-1) as string)).toMatchObject({
      type: "result",
      ok: false,
      error: { code: "agent_failed" },
    });
  });

  it("--approve none refuses what needs an approval, all grants it once; --audit writes the log", () => {
    const audit = join(base, "audit.jsonl");
    expect(run("ops", "inboxer", "--input", '{"do":"inbox"}').stdout).toContain(
      "✖ inboxer: writeFile /inbox/note.txt refused (approval_denied)",
    );
    expect(existsSync(join(app, "ops/inbox/note.txt"))).toBe(false);
    const r = run(
      "ops",
      "inboxer",
      "--input",
      '{"do":"inbox"}',
      "--approve",
      "all",
      "--audit",
      audit,
    );
    expect(r.stdout).toContain("\nResult:\nwritten\n");
    expect(readFileSync(join(app, "ops/inbox/note.txt"), "utf8")).toBe("hi");
    const kinds = readFileSync(audit, "utf8")
      .trim()
      .split("\n")
      .map((l) => (JSON.parse(l) as { type: string }).type);
    expect(kinds).toEqual(expect.arrayContaining(["approval_request", "approval_decision"]));
  });

  it("Ctrl-C stops every agent, exits 130 and leaves nothing running", async () => {
    const before = new Set(listDescendants().map((p) => p.pid));
    const p = start(["run", "ops", "sleeper", "--input", '{"do":"sleep"}']);
    for (let i = 0; i < 200 && !p.out().includes("▶ sleeper started"); i++)
      await new Promise((r) => setTimeout(r, 50));
    expect(p.out()).toContain("▶ sleeper started");
    p.child.kill("SIGINT");
    const r = await p.done;
    expect(r.code).toBe(130);
    expect(r.stderr).toContain("mountbox: interrupted; every agent was stopped.\n");
    expect(listDescendants().filter((x) => !before.has(x.pid))).toEqual([]);
  });

  it("bad usage and unknown workers exit 2", () => {
    expect(run("ops").stderr).toContain(
      "mountbox: name the worker to run; workers: thrower, sleeper, inboxer",
    );
    expect(run("ops", "nope").code).toBe(2);
    expect(run("ops", "thrower", "--input", "{oops").stderr).toContain("--input takes JSON");
    expect(run("ops", "thrower", "--approve", "maybe").code).toBe(2);
    expect(run("missing-folder").code).toBe(2);
    expect(run("ops", "thrower", "--approve", "ask").stderr).toContain(
      "mountbox: --approve ask needs a terminal (and not --json); use --approve none or all here",
    );
  });

  it("agent threads stand in '/', not in the folder mountbox was run from (here: the sandbox root)", () => {
    const r = spawnSync(process.execPath, [bin, "run", ".", "--json"], {
      cwd: join(app, "here"),
      encoding: "utf8",
      timeout: 60_000,
    });
    expect(r.status, r.stderr).toBe(0);
    // Node's permission model refuses the relative read (no working-folder grant).
    expect(JSON.parse(r.stdout.trim().split("\n").at(-1) as string).value).toEqual({
      cwd: "/",
      read: "ERR_ACCESS_DENIED",
    });
  });

  it("--model binds a model name to an installed provider; what it cannot bind exits 2 and says why", () => {
    const model = (...flags: string[]) => run("here", "writer", ...flags);
    expect(model("--model", "fast").stderr).toContain(
      "mountbox: --model takes NAME=PROVIDER:ID (e.g. --model fast=openai:gpt-5-mini), not 'fast'",
    );
    expect(model("--model", "slow=openai:gpt-5-mini").stderr).toContain(
      "mountbox: --model: no LLM worker of this run uses a model named 'slow'; models used: fast",
    );
    expect(model("--model", "fast=acme:x1").stderr).toContain(
      "mountbox: --model: unknown provider 'acme'; providers: openai, anthropic, google, mistral, groq, xai, deepseek, ollama, openai-compatible",
    );
    expect(model("--model", "fast=anthropic:claude-haiku-4-5").stderr).toContain(
      "mountbox: --model fast=anthropic:…: set ANTHROPIC_API_KEY (the host reads it; agents never see it)",
    );
    expect(model("--model", "fast=ollama:llama3.2").stderr).toContain(
      "mountbox: --model: the app has no '@ai-sdk/openai-compatible'; install it beside mountbox (npm install @ai-sdk/openai-compatible)",
    );
    expect(model("--model", "fast=openai-compatible:m").stderr).toContain(
      "mountbox: --model …=openai-compatible:ID needs OPENAI_COMPATIBLE_BASE_URL",
    );
    // Without --model, the LLM worker has no model: a configuration error.
    const none = model();
    expect(none.code).toBe(2);
    expect(none.stderr).toContain("model 'fast' of worker 'writer'");
    // main does not delegate to the LLM worker: it runs with no model at all.
    expect(run("here", "main").code).toBe(0);
  });

  it("--model never imports a provider from the program folder, nor from where its agents can write", () => {
    const env = { ...process.env, OPENAI_COMPATIBLE_BASE_URL: "http://127.0.0.1:9/v1" };
    const args = ["run", "plant", "coder", "--model", "fast=openai-compatible:m"];
    // From the app: the program folder's node_modules is not looked in.
    const fromApp = spawnSync(process.execPath, [bin, ...args], {
      cwd: app,
      env,
      encoding: "utf8",
    });
    expect([fromApp.status, fromApp.stderr]).toEqual([
      2,
      "mountbox: --model: the app has no '@ai-sdk/openai-compatible'; install it beside mountbox (npm install @ai-sdk/openai-compatible)\nRun 'mountbox run --help' for usage.\n",
    ]);
    // From inside it (the working folder is looked in): a writable area.
    args[1] = ".";
    const inside = spawnSync(process.execPath, [bin, ...args], {
      cwd: join(app, "plant"),
      env,
      encoding: "utf8",
    });
    expect([inside.status, inside.stderr.split("\n")[0]]).toEqual([
      2,
      "mountbox: --model: the '@ai-sdk/openai-compatible' found lies where the program's agents can write; install it where they cannot (beside mountbox, outside the sandbox's writable areas)",
    ]);
    expect(existsSync(join(app, "PWNED"))).toBe(false);
  });

  it("a worker run alone cannot rewrite the module of a worker it does not reach", () => {
    expect(run("grow", "writer", "--json").stdout).toContain(
      '{"type":"result","ok":true,"value":"path_not_writable"}',
    );
    expect(readFileSync(join(app, "grow/agents/admin.js"), "utf8")).toBe(WORKER);
  });

  it("program.yaml's audit_log is written only to a plain file inside the program folder", () => {
    const r = run("audit");
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      "✖ mountbox run writes a program's audit log only to a plain file inside its folder (it is outside); give --audit FILE to write it elsewhere → at audit_log",
    );
    expect(existsSync(join(base, "outside.jsonl"))).toBe(false);
    // Through a link in the folder, to a file or a folder outside: refused too.
    writeFiles(join(base, "home"), { ".bashrc": "# rc\n" });
    writeFiles(app, {
      "audit2/program.yaml": 'audit_log: "./audit.log"\nworkers:\n  main: { module: ./w.js }\n',
      "audit2/w.js": WORKER,
      "audit3/program.yaml": 'audit_log: "./logs/a.log"\nworkers:\n  main: { module: ./w.js }\n',
      "audit3/w.js": WORKER,
      "audit4/program.yaml":
        'audit_log: "./.git/hooks/pre-commit"\nworkers:\n  main: { module: ./w.js }\n',
      "audit4/w.js": WORKER,
      "audit4/.git/hooks/.keep": "",
    });
    symlinkSync(join(base, "home", ".bashrc"), join(app, "audit2", "audit.log"));
    symlinkSync(join(base, "home"), join(app, "audit3", "logs"));
    expect(run("audit2").stderr).toContain("(it is a link or not a file)");
    expect(run("audit3").stderr).toContain("(it is outside)");
    expect(run("audit4").stderr).toContain(
      "(not in a dot folder, node_modules or workers/, nor a dotfile)",
    );
    expect(readFileSync(join(base, "home", ".bashrc"), "utf8")).toBe("# rc\n");
    // Inside, as a plain file: written.
    writeFiles(app, {
      "audit5/program.yaml":
        'audit_log: "./logs/audit.jsonl"\nworkers:\n  main: { module: ./w.js }\n',
      "audit5/w.js": WORKER,
      "audit5/logs/.keep": "",
    });
    expect(run("audit5").code).toBe(0);
    // (Its worker does no file operation: the log is made, with nothing to say.)
    expect(existsSync(join(app, "audit5/logs/audit.jsonl"))).toBe(true);
  });

  it("JSON output escapes what a terminal acts on and JSON leaves raw; config errors escape file names", () => {
    const r = run("odd", "--json");
    expect(r.stdout.trim().split("\n").at(-1)).toBe(
      '{"type":"result","ok":true,"value":"a\\u202eb\\u2028c\\u009bd"}',
    );
    expect(JSON.parse(r.stdout.trim().split("\n").at(-1) as string).value).toBe(
      "a\u202eb\u2028c\u009bd",
    );
    const c = check("escapes");
    expect(c.code).toBe(2);
    expect(c.stderr).not.toContain("\u001b");
    expect(c.stderr).toContain("ev\\u001b]52;c;SGk=\\u0007il");
  });
});
