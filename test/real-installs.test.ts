/**
 * Agents from installs made by the real clients (issue 20): npm, pnpm (its
 * isolated store and `node-linker=hoisted`), yarn 4 (`nodeLinker:
 * node-modules`), a linked package folder and an npm workspace — each app
 * with the packed tarball, `ai` (6 on Node 20; 7, which needs Node 22, and
 * 6 elsewhere) and zod, the host started from a neutral folder. Each app
 * runs a code worker that declares `ai` (a dependency whose own
 * dependencies are scoped packages, linked beside it by pnpm) and an LLM
 * worker (the built-in worker imports `ai` the same way), and is refused
 * an undeclared import with a message whose advice works.
 */
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { assertBuilt } from "./conformance/thread.js";
import { HAS_BWRAP, REQUIRE_BWRAP } from "./helpers/bwrap.js";
import { CLIENTS, type Client, ensureClients, installApp } from "./helpers/clients.js";
import { packTarball, runNode, writeFiles } from "./helpers/packed.js";
import { makeTempDir, removeDir } from "./helpers/tree.js";

const NODE_MAJOR = Number(process.versions.node.split(".")[0]);
/** `ai` majors this Node can run: ai 7 needs Node 22. */
const AI_MAJORS = NODE_MAJOR >= 22 ? [7, 6] : [6];

/** A code worker that uses `ai` (whose dependencies are `@ai-sdk/*`). */
const CODE_WORKER = `
import { defineWorker } from "mountbox/worker";
import { jsonSchema, tool } from "ai";
export default defineWorker(async (input, ctx) => {
  const t = tool({ description: "d", inputSchema: jsonSchema({ type: "object" }) });
  return { text: await ctx.sandbox.readFile("/a.txt"), tool: typeof t.inputSchema };
});
`;
/** Imports a package it did not declare. */
const UNDECLARED_WORKER = `
import { defineWorker } from "mountbox/worker";
export default defineWorker(async () => (await import("zod")).z.string().parse("x"));
`;
/** The host: a scripted model (V4 where `ai` has it), a code and an LLM worker. */
const HOST = `
import * as aiTest from "ai/test";
import { createHost } from "mountbox";
const [root, which, declare, isolation = "thread"] = process.argv.slice(2);
const Mock = aiTest.MockLanguageModelV4 ?? aiTest.MockLanguageModelV3;
const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 1, text: 1, reasoning: undefined },
};
const turn = (content, unified) => ({ content, finishReason: { unified, raw: undefined }, usage, warnings: [] });
const model = new Mock({
  doGenerate: async ({ prompt }) => {
    const seen = prompt.filter((m) => m.role === "tool").flatMap((m) => m.content.map((p) => p.output.value));
    return seen.length === 0
      ? turn([{ type: "tool-call", toolCallId: "c1", toolName: "read_file", input: '{"path":"/a.txt"}' }], "tool-calls")
      : turn([{ type: "text", text: "read: " + seen[0] }], "stop");
  },
});
const host = await createHost({
  sandbox: { root },
  basePath: import.meta.dirname,
  isolation,
  models: { m: model },
  workers: {
    code: { module: "./workers/code.js", dependencies: ["ai"] },
    undeclared: { module: "./workers/undeclared.js", dependencies: declare === "zod" ? ["zod"] : [] },
    llm: { instructions: "You read files.", model: "m", tools: ["read_file"], maxSteps: 3 },
  },
});
try {
  console.log(JSON.stringify({ ok: await host.run(which, "read /a.txt") }));
} catch (e) {
  console.log(JSON.stringify({ error: e.message, reason: e.reason }));
} finally {
  await host.close();
}
`;

let base: string;
let tarball: string;

beforeAll(() => {
  assertBuilt();
  ensureClients();
  base = makeTempDir("mountbox-clients-");
  tarball = packTarball(join(base, "pack"));
}, 300_000);
afterAll(() => removeDir(base));

function parse(run: { stdout: string; stderr: string; status: number | null }): {
  ok?: unknown;
  error?: string;
  reason?: string;
} {
  const line = run.stdout.trim().split("\n").pop() ?? "";
  try {
    return JSON.parse(line);
  } catch {
    throw new Error(`host printed no result (status ${run.status}): ${run.stdout}\n${run.stderr}`);
  }
}

const CASES: [Client, number][] = CLIENTS.flatMap((c) =>
  AI_MAJORS.map((ai) => [c, ai] as [Client, number]),
);

describe.each(CASES)("installed by %s with ai %i", (client, aiMajor) => {
  let app: string;
  let root: string;
  let neutral: string;

  beforeAll(() => {
    const dir = join(base, `${client}-ai${aiMajor}`);
    app = installApp(client, tarball, [`ai@${aiMajor}`, "zod@4"]);
    root = join(dir, "data");
    neutral = join(dir, "neutral");
    writeFiles(app, {
      "host.mjs": HOST,
      "workers/code.js": CODE_WORKER,
      "workers/undeclared.js": UNDECLARED_WORKER,
    });
    writeFiles(root, { "a.txt": "hello" });
    writeFiles(neutral, { ".keep": "" });
  }, 300_000);

  const host = (...args: string[]) =>
    parse(runNode(join(app, "host.mjs"), neutral, [root, ...args]));

  it("runs a code worker that declares a package with scoped dependencies", () => {
    expect(host("code")).toEqual({ ok: { text: "hello", tool: "object" } });
  });

  it("runs an LLM worker (the built-in worker imports ai)", () => {
    expect(host("llm")).toEqual({ ok: "read: hello" });
  });

  it("refuses an undeclared import, and its advice works", () => {
    const refused = host("undeclared");
    expect(refused.reason).toBe("threw");
    expect(refused.error).toContain(`Cannot import 'zod'`);
    expect(refused.error).toContain(`add "zod" to them`);
    expect(refused.error).not.toContain(base);
    expect(refused.error).not.toContain(app);
    expect(host("undeclared", "zod")).toEqual({ ok: "x" });
  });

  // The same app's agents in confined processes: each sees exactly its own
  // files, laid out as the client laid them out (links recreated).
  it.runIf(HAS_BWRAP || REQUIRE_BWRAP)("runs the code worker as a process", () => {
    expect(host("code", "", "process")).toEqual({ ok: { text: "hello", tool: "object" } });
  });

  it.runIf(HAS_BWRAP || REQUIRE_BWRAP)("runs the LLM worker as a process", () => {
    expect(host("llm", "", "process")).toEqual({ ok: "read: hello" });
  });

  it.runIf(HAS_BWRAP || REQUIRE_BWRAP)(
    "refuses an undeclared import in a process, and its advice works",
    () => {
      const refused = host("undeclared", "", "process");
      expect(refused.reason).toBe("threw");
      expect(refused.error).toContain(`Cannot import 'zod'`);
      expect(refused.error).toContain(`add "zod" to them`);
      expect(refused.error).not.toContain(base);
      expect(refused.error).not.toContain(app);
      expect(host("undeclared", "zod", "process")).toEqual({ ok: "x" });
    },
  );
});
