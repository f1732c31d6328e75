/**
 * The review example (`examples/review`, what `npm start` runs) as a user
 * runs it: the bin of the packed package, installed by real npm into an app
 * with `ai@^6` and `@ai-sdk/openai-compatible@^2`, spawned from the app
 * folder on a copy of the example. The code variant: main fans out one
 * analyser per file in parallel, one analyser's write is refused, the
 * reporter writes `/reports/summary.md` with the real findings and nothing
 * changes in `/src`. The LLM variant (`review/llm`): the same main with LLM
 * analysers and reporter, bound by `--model reviewer=openai-compatible:…`
 * to a scripted OpenAI-compatible server on loopback (the only stand-in):
 * tool calls, the refused write and the report as events, the API key never
 * printed. No host path in anything printed.
 */
import { execFile } from "node:child_process";
import { cpSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { assertBuilt } from "./conformance/thread.js";
import { type FakeReply, type FakeRequest, startFakeOpenAI } from "./helpers/fake-openai.js";
import { copyNpmInstall } from "./helpers/install-cache.js";
import { packTarball, writeFiles } from "./helpers/packed.js";
import { makeTempDir, removeDir } from "./helpers/tree.js";

const EXAMPLE = fileURLToPath(new URL("../examples/review", import.meta.url));
const FILES = [
  "/src/cart.ts",
  "/src/checkout.ts",
  "/src/format.ts",
  "/src/index.ts",
  "/src/pricing.ts",
];
const KEY = "sk-test-5b1c9e0d7a4f4e2b8c3d6a9f0e1b2c3d";

let base: string;
let app: string;
let project: string;

beforeAll(() => {
  assertBuilt();
  base = makeTempDir("mountbox-review-");
  const tarball = packTarball(join(base, "pack"));
  app = join(base, "app");
  writeFiles(app, { "package.json": '{"name":"app","private":true,"type":"module"}' });
  // A real install, as a user's app has it (ai and the provider only matter
  // to the LLM variant); npm's cache has them: they are dev dependencies.
  copyNpmInstall(tarball, ["ai@^6", "@ai-sdk/openai-compatible@^2"], app);
  // The example as shipped (not a report left by an `npm start`).
  cpSync(EXAMPLE, join(app, "review"), {
    recursive: true,
    filter: (src) => !src.endsWith(join("reports", "summary.md")),
  });
  project = join(app, "review", "project");
}, 300_000);
afterAll(() => removeDir(base));

/** `mountbox run …` from the app folder, to its end (asynchronously: a fake server may be serving it). */
async function run(args: string[], env: Record<string, string> = {}) {
  const bin = join(app, "node_modules", "mountbox", "dist", "src", "cli", "main.js");
  const r = await promisify(execFile)(process.execPath, [bin, "run", ...args], {
    cwd: app,
    encoding: "utf8",
    timeout: 60_000,
    env: { ...process.env, NODE_OPTIONS: "", ...env },
  }).then(
    (ok) => ({ code: 0, ...ok }),
    (e: { code: number; stdout: string; stderr: string }) => e,
  );
  expect(r.stdout + r.stderr).not.toContain(base);
  return { code: r.code, stdout: r.stdout, stderr: r.stderr };
}

type Event = Record<string, unknown> & { type: string; time: number };

/** The events of a `--json` run, and its result line. */
function parseJson(stdout: string) {
  const lines = stdout
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as Event);
  return { events: lines.slice(0, -1), result: lines.at(-1) };
}

/** The agents of each worker, with when each started and ended. */
function agentsOf(events: Event[], worker: string) {
  return events
    .filter((e) => e.type === "agent_started" && e.worker === worker)
    .map((s) => {
      const end = events.find((e) => e.type === "agent_finished" && e.agentId === s.agentId);
      return { id: s.agentId, parentId: s.parentId, start: s.time, end: end?.time };
    });
}

/** `/src` as shipped, and as it is in the app after a run. */
function listSrc(root: string) {
  return readdirSync(join(root, "src"))
    .sort()
    .map((name) => [name, readFileSync(join(root, "src", name), "utf8")]);
}

const REPORT = `# Code review of /src

5 files, 143 lines, 4 findings.

| file | lines | findings |
|---|---:|---:|
| /src/cart.ts | 36 | 1 |
| /src/checkout.ts | 27 | 1 |
| /src/format.ts | 20 | 1 |
| /src/index.ts | 5 | 0 |
| /src/pricing.ts | 55 | 1 |

## /src/cart.ts

- line 14, TODO: \`merge a line of the same sku instead of adding a second one\`

## /src/checkout.ts

- line 24, console.log: \`console.log("charging", reference, price.total);\`

## /src/format.ts

- line 13, any: \`export function parseMoney(input: any): number {\`

## /src/pricing.ts

- line 14, long function: \`priceOrder: 42 lines\`

## Fixes refused

- /src/checkout.ts: remove 1 console.log line — refused (path_not_writable); analysers only read.
`;

describe("the code variant (npm start)", () => {
  it("main, five analysers at once, one refused write, the reporter's summary", async () => {
    const r = await run(["review", "--json"]);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const { events, result } = parseJson(r.stdout);
    expect(result).toEqual({
      type: "result",
      ok: true,
      value: {
        reviewed: FILES,
        refused: ["/src/checkout.ts: path_not_writable"],
        report: "/reports/summary.md",
      },
    });

    const [main, ...others] = agentsOf(events, "main");
    const analysers = agentsOf(events, "analyser");
    const reporters = agentsOf(events, "reporter");
    expect([others.length, analysers.length, reporters.length]).toEqual([0, 5, 1]);
    for (const a of [...analysers, ...reporters]) expect(a.parentId).toBe(main?.id);
    // In parallel: every analyser had started before the first one finished.
    const lastStart = Math.max(...analysers.map((a) => a.start));
    const firstEnd = Math.min(...analysers.map((a) => a.end ?? Number.NaN));
    expect(lastStart).toBeLessThanOrEqual(firstEnd);
    // The reporter only once they were all done.
    expect(reporters[0]!.start).toBeGreaterThanOrEqual(
      Math.max(...analysers.map((a) => a.end ?? Number.NaN)),
    );

    // Exactly one refusal: an analyser's write to the file it was fixing.
    const denials = events.filter((e) => e.type === "denial");
    expect(denials).toEqual([
      expect.objectContaining({
        op: "writeFile",
        path: "/src/checkout.ts",
        code: "path_not_writable",
      }),
    ]);
    expect(analysers.map((a) => a.id)).toContain(denials[0]!.agentId);
    expect(events).toContainEqual(
      expect.objectContaining({
        type: "log",
        worker: "analyser",
        message: "could not fix /src/checkout.ts: path_not_writable",
      }),
    );
    // Each analyser read one file, its own: one each, all five between them.
    const reads = events.filter((e) => e.type === "operation" && e.op === "readFile");
    const readBy = analysers.map((a) => reads.filter((e) => e.agentId === a.id).map((e) => e.path));
    expect(readBy.map((paths) => paths.length)).toEqual([1, 1, 1, 1, 1]);
    expect(readBy.flat().sort()).toEqual(FILES);
    const writes = events.filter(
      (e) => e.type === "operation" && e.ok && /write/i.test(String(e.op)),
    );
    expect(writes.map((e) => e.path)).toEqual(["/reports/summary.md"]);

    expect(readFileSync(join(project, "reports", "summary.md"), "utf8")).toBe(REPORT);
    expect(readdirSync(join(project, "reports")).sort()).toEqual([".gitkeep", "summary.md"]);
    expect(listSrc(project)).toEqual(listSrc(join(EXAMPLE, "project")));
  });

  it("without --json: a line per agent, the refusal, the log lines, the result and the summary line", async () => {
    const r = await run(["review"]);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const lines = r.stdout.split("\n");
    expect(lines.filter((l) => l === "  ▶ analyser started")).toHaveLength(5);
    expect(lines).toEqual(
      expect.arrayContaining([
        "▶ main started",
        "  main: reviewing 5 files",
        "✖ analyser: writeFile /src/checkout.ts refused (path_not_writable)",
        "  analyser: could not fix /src/checkout.ts: path_not_writable",
        "  ▶ reporter started",
        "  reporter: wrote /reports/summary.md: 4 findings",
        '  "report": "/reports/summary.md"',
      ]),
    );
    expect(r.stdout).toMatch(
      /\n7 agents, 8 operations, 1 denial, 0 model steps \(0 tokens\), \d+\.\d s\n$/,
    );
    expect(readFileSync(join(project, "reports", "summary.md"), "utf8")).toBe(REPORT);
    expect(listSrc(project)).toEqual(listSrc(join(EXAMPLE, "project")));
  });
});

/** The text of a chat request's messages of `role`, in order. */
function textsOf(req: FakeRequest, role: string): string[] {
  const messages = (req.body.messages ?? []) as { role: string; content: unknown }[];
  return messages
    .filter((m) => m.role === role)
    .map((m) => (typeof m.content === "string" ? m.content : JSON.stringify(m.content)));
}

/**
 * The scripted model: an analyser reads its file (the one its prompt
 * names), tries to write checkout.ts back without its console.log, then
 * answers; the reporter writes the reviews it was given to
 * /reports/summary.md, then answers with the path. Decided from each
 * request alone: the analysers run at once.
 */
function reviewerScript(req: FakeRequest): FakeReply {
  const system = textsOf(req, "system").join("\n");
  const prompt = textsOf(req, "user")[0] ?? "";
  const results = textsOf(req, "tool");
  if (system.startsWith("You review one TypeScript file.")) {
    const { file } = JSON.parse(prompt) as { file: string };
    const tag = file.replace(/\W/g, "_");
    if (results.length === 0)
      return { kind: "tool", id: `${tag}_read`, name: "read_file", args: { path: file } };
    if (file === "/src/checkout.ts" && results.length === 1)
      return {
        kind: "tool",
        id: `${tag}_fix`,
        name: "write_file",
        args: { path: file, content: "// without the console.log\n" },
      };
    const refused = results.some((t) => t.includes("path_not_writable"));
    return {
      kind: "text",
      text: `${file}: reviewed${refused ? "; the fix was refused (path_not_writable)" : ""}`,
    };
  }
  if (results.length === 0) {
    const { reviews } = JSON.parse(prompt) as { reviews: string[] };
    const content = `# Code review (mock model)\n\n${reviews.map((t) => `- ${t}\n`).join("")}`;
    return {
      kind: "tool",
      id: "report_write",
      name: "write_file",
      args: { path: "/reports/summary.md", content },
    };
  }
  return { kind: "text", text: "/reports/summary.md" };
}

describe("the LLM variant, on a scripted OpenAI-compatible server", () => {
  it("--model binds 'reviewer': tool calls, the refused write and the report; the key stays in the host", async () => {
    const server = await startFakeOpenAI(reviewerScript);
    try {
      const r = await run(
        ["review/llm", "--model", "reviewer=openai-compatible:review-model", "--json"],
        { OPENAI_COMPATIBLE_BASE_URL: server.url, OPENAI_COMPATIBLE_API_KEY: KEY },
      );
      expect(r.code, r.stdout + r.stderr).toBe(0);
      expect(r.stdout + r.stderr).not.toContain(KEY);
      const { events, result } = parseJson(r.stdout);
      // main is the code variant's: it passes the models' texts on as they are.
      expect(result).toEqual({
        type: "result",
        ok: true,
        value: { reviewed: FILES, refused: [], report: "/reports/summary.md" },
      });
      expect(agentsOf(events, "analyser")).toHaveLength(5);
      expect(agentsOf(events, "reporter")).toHaveLength(1);

      const calls = events
        .filter((e) => e.type === "tool_call")
        .map((e) => `${e.tool} ${e.path} ${e.outcome}`)
        .sort();
      expect(calls).toEqual(
        [
          ...FILES.map((f) => `read_file ${f} ok`),
          "write_file /src/checkout.ts error",
          "write_file /reports/summary.md ok",
        ].sort(),
      );
      expect(events.filter((e) => e.type === "denial")).toEqual([
        expect.objectContaining({
          op: "writeFile",
          path: "/src/checkout.ts",
          code: "path_not_writable",
        }),
      ]);
      const steps = events.filter((e) => e.type === "model_call");
      expect(steps).toHaveLength(5 * 2 + 1 + 2);
      expect(steps.every((e) => e.status === "ok" && e.model === "reviewer")).toBe(true);

      // The model got the refusal as its tool result, and said so; main
      // handed that text on to the reporter, which wrote it.
      const report = readFileSync(join(project, "reports", "summary.md"), "utf8");
      expect(report).toBe(
        [
          "# Code review (mock model)",
          "",
          "- /src/cart.ts: reviewed",
          "- /src/checkout.ts: reviewed; the fix was refused (path_not_writable)",
          "- /src/format.ts: reviewed",
          "- /src/index.ts: reviewed",
          "- /src/pricing.ts: reviewed",
          "",
        ].join("\n"),
      );
      expect(listSrc(project)).toEqual(listSrc(join(EXAMPLE, "project")));
      // The host sent the key to the provider; no request carried it in its body.
      expect(server.requests).toHaveLength(13);
      for (const q of server.requests) {
        expect(q.headers.authorization).toBe(`Bearer ${KEY}`);
        expect(q.body.model).toBe("review-model");
        expect(q.raw).not.toContain(KEY);
      }
    } finally {
      await server.close();
    }
  });
});
