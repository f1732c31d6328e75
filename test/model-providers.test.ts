/**
 * Host-held models from real provider packages (issue 20, items 6–8):
 * `@ai-sdk/openai-compatible` and `@ai-sdk/openai`, as `createOpenAI()` /
 * `createOpenAICompatible()` return them (provider functions), in a
 * registry, wrapped in middleware — speaking HTTP to a fake
 * OpenAI-compatible server on loopback. The same scenarios
 * (fixtures/providers/scenarios.mjs) run with AI SDK 6 here, and with AI
 * SDK 7 in an app that installed the packed tarball, on Node ≥ 22 (which
 * AI SDK 7 needs). Each package × major: a run with a tool call, a
 * streamed run, a 429 retried, 429s without retries, 500s, a provider
 * that hangs, and a 401 that echoes the API key.
 */
import { execFile, execFileSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { createOpenAI } from "@ai-sdk/openai";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { createProviderRegistry, defaultSettingsMiddleware, wrapLanguageModel } from "ai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHost } from "../dist/src/index.js";
import { assertBuilt } from "./conformance/thread.js";
import {
  PLAIN_KEY,
  runScenarios,
  type ScenarioResults,
  SK_KEY,
} from "./fixtures/providers/scenarios.mjs";
import { type FakeServer, scriptByModel, startFakeOpenAI } from "./helpers/fake-openai.js";
import { packTarball, writeFiles } from "./helpers/packed.js";
import { makeTempDir, removeDir, writeTree } from "./helpers/tree.js";

const NODE_MAJOR = Number(process.versions.node.split(".")[0]);
const PACKAGES = ["openai-compatible", "openai"] as const;
const SCENARIOS = fileURLToPath(new URL("./fixtures/providers/scenarios.mjs", import.meta.url));
const REPO = fileURLToPath(new URL("..", import.meta.url));

let base: string;
let data: string;

beforeAll(() => {
  assertBuilt();
  base = makeTempDir("mountbox-providers-");
  data = join(base, "data");
  writeTree(data, { "notes.txt": "draft notes" });
});

afterAll(() => removeDir(base));

/** What one major's run of the scenarios left: its results, its server, its audit logs. */
interface Run {
  results: ScenarioResults;
  server: FakeServer;
  auditLog: string;
}

/**
 * The checks of one AI SDK major's results: the same for 6 and 7, but for
 * the specification version of the packages' models.
 */
function checkResults(run: () => Run, version: "v3" | "v4"): void {
  for (const pkg of PACKAGES) {
    describe(`@ai-sdk/${pkg}`, () => {
      const r = () => run().results[pkg];
      const requestsOf = (scenario: string) =>
        run().server.requests.filter((q) => q.body.model === scenario);

      it(`its provider function is taken; its models are of specification ${version}`, () => {
        expect(r().specificationVersion).toBe(version);
        expect(r().run.error).toBeUndefined();
      });

      it("run: a tool call, then the answer naming the tool's result", () => {
        expect(r().run).toMatchObject({
          ok: true,
          text: expect.stringMatching(/^done: .*draft notes/),
        });
        expect(r().run.calls).toEqual([
          { status: "ok", attempts: 1, finishReason: "tool-calls" },
          { status: "ok", attempts: 1, finishReason: "stop" },
        ]);
      });

      it("stream: the model's text arrives as model_text events before its step's model_call", () => {
        const { ok, text, order = [] } = r().stream;
        expect(ok).toBe(true);
        const pieces = order.filter((e) => e.startsWith("text:")).map((e) => e.slice(5));
        expect(pieces.slice(0, 2)).toEqual(["done", ": "]);
        expect(pieces.join("")).toBe(text);
        // The tool step (no text), then the pieces, then the step's call.
        expect(order[0]).toBe("call:ok");
        expect(order.at(-1)).toBe("call:ok");
        expect(order.slice(1, -1).every((e) => e.startsWith("text:"))).toBe(true);
        expect(requestsOf(`ok.stream-${pkg}`).every((q) => q.body.stream === true)).toBe(true);
      });

      it("429 with retry-after: the host retries, as generateText would, and the run succeeds", () => {
        expect(r().rateLimited).toMatchObject({ ok: true });
        expect(r().rateLimited.calls?.[0]).toEqual({
          status: "ok",
          attempts: 2,
          finishReason: "tool-calls",
        });
        expect(requestsOf(`429-once.${pkg}`)).toHaveLength(3);
      });

      it("429 with modelRetries: 0: the agent's error keeps statusCode and isRetryable", () => {
        expect(r().rateLimitedNoRetries.error).toEqual({
          name: "AgentThreadError",
          reason: "threw",
          statusCode: 429,
          isRetryable: true,
          message: `Worker 'reader' failed: The model 'p:429-always.${pkg}' failed (HTTP 429): Rate limit reached for requests`,
        });
        expect(r().rateLimitedNoRetries.calls).toEqual([
          {
            status: "error",
            attempts: 1,
            finishReason: "error",
            errorCode: "rate_limited",
            statusCode: 429,
            isRetryable: true,
          },
        ]);
        expect(requestsOf(`429-always.${pkg}`)).toHaveLength(1);
      });

      it("500: retried twice, then a model_call event and an error with the status", () => {
        expect(r().serverError.error).toEqual({
          name: "AgentThreadError",
          reason: "threw",
          statusCode: 500,
          isRetryable: true,
          message: `Worker 'reader' failed: The model 'p:500.${pkg}' failed after 3 attempts (HTTP 500): The server had an error while processing your request.`,
        });
        expect(r().serverError.calls).toEqual([
          {
            status: "error",
            attempts: 3,
            finishReason: "error",
            errorCode: "provider_error",
            statusCode: 500,
            isRetryable: true,
          },
        ]);
        expect(requestsOf(`500.${pkg}`)).toHaveLength(3);
      });

      it("a provider that never answers: the deadline fails the agent and closes the request", async () => {
        expect(r().timeout.error).toMatchObject({ name: "AgentThreadError", reason: "timeout" });
        expect(r().timeout.calls).toEqual([
          {
            status: "error",
            attempts: 1,
            finishReason: "error",
            errorCode: "aborted",
            isRetryable: false,
          },
        ]);
        expect(requestsOf(`hang.${pkg}`)).toHaveLength(1);
        // The provider's HTTP request was aborted with the agent.
        await expect.poll(() => run().server.abortedHangs()).toContain(`hang.${pkg}`);
      });

      it("a 401 echoing the key: no key in the errors, the events, the audit log or another model's request", () => {
        const { editor, counter, plain, eventsJson } = r().secret;
        expect(counter.error).toEqual({
          name: "AgentThreadError",
          reason: "threw",
          statusCode: 401,
          isRetryable: false,
          message: `Worker 'counter' failed: The model 'sk:401.${pkg}' failed (HTTP 401): Incorrect API key provided: [redacted]. You can find your API key at https://platform.openai.com/account/api-keys.`,
        });
        // A key shaped like nothing: found as the host's own copy (the provider's headers).
        expect(plain.error?.message).toBe(
          `Worker 'plain' failed: The model 'plain:401.plain-${pkg}' failed (HTTP 401): Incorrect API key provided: [redacted]. You can find your API key at https://platform.openai.com/account/api-keys.`,
        );
        // Through call_worker: the editor's model saw the refusal, never the key.
        expect(editor).toMatchObject({ ok: true, text: expect.stringContaining("[redacted]") });
        const seen = [
          JSON.stringify(r().secret),
          eventsJson,
          readFileSync(`${run().auditLog}.${pkg}`, "utf8"),
          ...run().server.requests.map((q) => q.raw),
        ];
        for (const text of seen) {
          expect(text).not.toContain(SK_KEY);
          expect(text).not.toContain(PLAIN_KEY);
        }
        const editorRequests = requestsOf(`ok.secret-${pkg}`);
        expect(editorRequests).toHaveLength(2);
        expect(editorRequests[1]?.raw).toContain("Incorrect API key provided: [redacted]");
      });
    });
  }

  it("a registry, a middleware-wrapped model and openai.chat(id) as models entries", () => {
    const { registry, wrapped, chat } = run().results.others;
    for (const o of [registry, wrapped, chat])
      expect(o).toMatchObject({ ok: true, text: expect.stringMatching(/^done: .*draft notes/) });
    expect(wrapped.version).toBe(version);
    // The middleware ran host-side: its setting reached the provider.
    const asked = run().server.requests.filter((q) => q.body.model === "ok.wrapped");
    expect(asked.map((q) => q.body.temperature)).toEqual([0.25, 0.25]);
  });
}

describe("real provider packages with AI SDK 6 (the dev dependencies)", () => {
  let run: Run;
  beforeAll(async () => {
    const server = await startFakeOpenAI(scriptByModel());
    const auditLog = join(base, "audit-ai6.jsonl");
    const sdk = {
      createHost,
      createOpenAI,
      createOpenAICompatible,
      createProviderRegistry,
      wrapLanguageModel,
      defaultSettingsMiddleware,
    };
    const results = await runScenarios(sdk, { url: server.url, dataDir: data, auditLog });
    run = { results, server, auditLog };
  }, 120_000);
  afterAll(() => run?.server.close());

  checkResults(() => run, "v3");
});

// AI SDK 7 needs Node ≥ 22: on an older Node this describe does not exist
// (rather than passing without running); CI runs the suite on 22, 24, 26.
if (NODE_MAJOR >= 22) {
  describe("real provider packages with AI SDK 7, packed tarball in an app (Node ≥ 22)", () => {
    let run: Run;
    beforeAll(async () => {
      const app = installAi7App();
      const server = await startFakeOpenAI(scriptByModel());
      const auditLog = join(base, "audit-ai7.jsonl");
      // The host runs from a folder of its own, not the app's.
      const neutral = join(base, "neutral");
      mkdirSync(neutral, { recursive: true });
      const { stdout } = await promisify(execFile)(
        process.execPath,
        [join(app, "host.mjs"), server.url, data, auditLog],
        {
          cwd: neutral,
          encoding: "utf8",
          timeout: 240_000,
          maxBuffer: 64 * 1024 * 1024,
          env: { ...process.env, NODE_OPTIONS: "" },
        },
      );
      run = { results: JSON.parse(stdout) as ScenarioResults, server, auditLog };
    }, 300_000);
    afterAll(() => run?.server.close());

    checkResults(() => run, "v4");
  });
}

/**
 * An app with the packed tarball, `ai@7` and the providers' current
 * majors, installed by npm under `.cache/` (kept between runs; npm's own
 * cache and `--prefer-offline` make a re-run quick). Returns its folder.
 */
function installAi7App(): string {
  const dir = join(REPO, ".cache", "ai7-providers");
  const app = join(dir, "app");
  const tarball = packTarball(join(dir, "pack"));
  writeFiles(app, {
    "package.json": '{"name":"app","private":true,"type":"module"}',
    "host.mjs": AI7_HOST,
  });
  copyFileSync(SCENARIOS, join(app, "scenarios.mjs"));
  // The tarball's version does not change between builds: install it afresh.
  if (existsSync(join(app, "node_modules", "mountbox")))
    rmSync(join(app, "node_modules", "mountbox"), { recursive: true });
  execFileSync(
    process.platform === "win32" ? "npm.cmd" : "npm",
    [
      "install",
      "--no-audit",
      "--no-fund",
      "--prefer-offline",
      "--ignore-scripts",
      tarball,
      "ai@7",
      "@ai-sdk/openai@latest",
      "@ai-sdk/openai-compatible@latest",
    ],
    { cwd: app, stdio: "ignore", timeout: 240_000 },
  );
  return app;
}

/** The app's host: the scenarios with AI SDK 7 and the providers as the app installed them. */
const AI7_HOST = `import { createOpenAI } from "@ai-sdk/openai";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { createProviderRegistry, defaultSettingsMiddleware, wrapLanguageModel } from "ai";
import { createHost } from "mountbox";
import { runScenarios } from "./scenarios.mjs";

const [url, dataDir, auditLog] = process.argv.slice(2);
const sdk = { createHost, createOpenAI, createOpenAICompatible, createProviderRegistry, wrapLanguageModel, defaultSettingsMiddleware };
process.stdout.write(JSON.stringify(await runScenarios(sdk, { url, dataDir, auditLog })));
`;
