/**
 * Host-held models at `createHost` and the host's model-call policies
 * (issue 20): which `models` entries are taken, what a refusal says, the
 * retry delays of the AI SDK's policy, secrets removed from a provider's
 * message, and the v3 ↔ v4 forms of a request and an answer.
 */

import { fileURLToPath } from "node:url";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { APICallError, createProviderRegistry } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { createHost as createBuiltHost, loadProgram } from "../dist/src/index.js";
import type { Host, HostEvent, HostOptions } from "../src/index.js";
import { isRetryable, retryDelayMs } from "../src/models/model-retries.js";
import { heldSecrets, REDACTED, scrubSecrets } from "../src/models/model-secrets.js";
import { fromV4Parts, toV4Options } from "../src/models/model-v4.js";
import { makeTempDir, removeDir, writeTree } from "./helpers/tree.js";

const createHost = createBuiltHost as unknown as (o: HostOptions) => Promise<Host>;

/** The message `createHost(options)` is refused with. */
async function refusal(options: HostOptions): Promise<string> {
  try {
    const host = await createHost(options);
    await host.close();
  } catch (err) {
    return (err as Error).message;
  }
  throw new Error("createHost took the options");
}

describe("models at createHost", () => {
  it("takes a provider function, a registry and models of specification v3 and v4", async () => {
    const compat = createOpenAICompatible({
      name: "c",
      apiKey: "k",
      baseURL: "http://127.0.0.1:9",
    });
    // A v4 model as AI SDK 7 gives it, structurally (AI SDK 7 itself runs in model-providers.test.ts).
    const v4 = { ...new MockLanguageModelV3(), specificationVersion: "v4" as const };
    v4.doGenerate = async () => ({}) as never;
    v4.doStream = async () => ({}) as never;
    const host = await createHost({
      workers: {
        a: { instructions: "x", model: "compat:m" },
        b: { instructions: "x", model: "reg:compat:m" },
        c: { instructions: "x", model: "v3" },
        d: { instructions: "x", model: "v4" },
      },
      models: {
        compat,
        reg: createProviderRegistry({ compat }),
        v3: new MockLanguageModelV3(),
        v4,
      },
    });
    await host.close();
  });

  it("says what is wrong with an entry once, and what a provider needs", async () => {
    const compat = createOpenAICompatible({
      name: "c",
      apiKey: "k",
      baseURL: "http://127.0.0.1:9",
    });
    const message = await refusal({
      workers: {
        a: { instructions: "x", model: "old" },
        b: { instructions: "x", model: "bad:id" },
        c: { instructions: "x", model: "compat" },
        d: { instructions: "x", model: "nope" },
      },
      models: {
        old: { specificationVersion: "v2", doGenerate() {}, doStream() {} } as never,
        bad: 42 as never,
        compat,
      },
    });
    expect(message).toMatchInlineSnapshot(`
      "Invalid configuration:
      ✖ a language model of specification 'v2' (AI SDK 5 or older) is not supported: use a provider package of the AI SDK 6 (specification 'v3') or 7 ('v4') line, e.g. @ai-sdk/openai@^3 with ai@^6 → at models.old
      ✖ expected an AI SDK language model (specificationVersion 'v3' or 'v4', with doGenerate and doStream), a provider (e.g. createOpenAI()) or a provider registry (createProviderRegistry): something with languageModel(id) → at models.bad
      ✖ model 'compat' of worker 'c': 'compat' is a provider; name one of its models as 'compat:<id>' → at workers.c.model
      ✖ model 'nope' of worker 'd': not available (models: old, bad, compat) → at workers.d.model"
    `);
  });

  it("a .worker file's stream: true reaches the worker's spec", async () => {
    const dir = makeTempDir("mountbox-stream-");
    try {
      writeTree(dir, {
        "program.yaml": "name: s\n",
        workers: { "w.worker": "---\nmodel: m\nstream: true\n---\nYou stream.\n" },
      });
      const options = await loadProgram(dir);
      expect(options.workers.w).toMatchObject({ model: "m", stream: true });
    } finally {
      removeDir(dir);
    }
  });

  it("checks modelRetries and a worker's stream", async () => {
    const message = await refusal({
      workers: { a: { instructions: "x", model: "m", stream: "yes" as never } },
      models: { m: new MockLanguageModelV3() },
      modelRetries: -1,
    });
    expect(message).toMatchInlineSnapshot(`
      "Invalid configuration:
      ✖ expected a boolean → at workers.a.stream
      ✖ expected an integer ≥ 0 → at modelRetries"
    `);
  });
});

describe("a failed model call's error, in threads and at host.run", () => {
  it("keeps statusCode and isRetryable in the calling thread and in host.run's rejection", async () => {
    const down = new MockLanguageModelV3({
      doGenerate: async () => {
        throw new APICallError({
          message: "The service is down for maintenance.",
          url: "http://127.0.0.1:9/v1/chat/completions",
          requestBodyValues: {},
          statusCode: 503,
          responseHeaders: {},
        });
      },
    });
    const events: HostEvent[] = [];
    const host = await createHost({
      workers: {
        caller: {
          module: fileURLToPath(new URL("./fixtures/llm/delegate-catch.js", import.meta.url)),
          delegates: ["llm"],
        },
        llm: { instructions: "x", model: "down" },
      },
      models: { down },
      modelRetries: 0,
      onEvent: (e) => events.push(e),
    });
    try {
      await expect(host.run("caller", { to: "llm", input: "go" })).resolves.toEqual({
        name: "AgentThreadError",
        statusCode: 503,
        isRetryable: true,
        message:
          "Worker 'llm' failed: The model 'down' failed (HTTP 503): The service is down for maintenance.",
      });
      await expect(host.run("llm", "go")).rejects.toMatchObject({
        name: "AgentThreadError",
        reason: "threw",
        statusCode: 503,
        isRetryable: true,
      });
    } finally {
      await host.close();
    }
    expect(events.filter((e) => e.type === "model_call")).toMatchObject([
      { status: "error", errorCode: "provider_error", statusCode: 503, isRetryable: true },
      { status: "error", errorCode: "provider_error", statusCode: 503, isRetryable: true },
    ]);
  });
});

describe("retries as the AI SDK makes them", () => {
  const apiError = (statusCode: number, headers?: Record<string, string>) =>
    Object.assign(new Error("x"), {
      [Symbol.for("vercel.ai.error.AI_APICallError")]: true,
      statusCode,
      isRetryable: statusCode === 429 || statusCode >= 500,
      responseHeaders: headers,
    });

  it("retries what the provider marks retryable, and nothing else", () => {
    expect(isRetryable(apiError(429))).toBe(true);
    expect(isRetryable(apiError(500))).toBe(true);
    expect(isRetryable(apiError(401))).toBe(false);
    expect(isRetryable(Object.assign(new Error("x"), { isRetryable: true }))).toBe(false);
  });

  it("waits what retry-after-ms or retry-after asks (under a minute), else the backoff", () => {
    expect(retryDelayMs(apiError(429, { "retry-after-ms": "150" }), 2000)).toBe(150);
    expect(retryDelayMs(apiError(429, { "retry-after": "1" }), 2000)).toBe(1000);
    expect(retryDelayMs(apiError(429, { "retry-after": "120" }), 2000)).toBe(2000);
    expect(retryDelayMs(apiError(429, { "retry-after": "120" }), 200_000)).toBe(120_000);
    expect(retryDelayMs(apiError(429, { "retry-after": "soon" }), 4000)).toBe(4000);
    expect(retryDelayMs(apiError(500), 4000)).toBe(4000);
  });
});

describe("secrets removed from a provider's message", () => {
  const saved = { ...process.env };
  afterEach(() => {
    for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
  });

  it("removes the values the host holds: the provider's headers and credential-named variables", async () => {
    process.env.ACME_SERVICE_TOKEN = "tok-value-from-the-environment";
    const compat = createOpenAICompatible({
      name: "c",
      apiKey: "held-but-plain",
      baseURL: "http://127.0.0.1:9",
    });
    const secrets = await heldSecrets(compat("m"));
    expect(secrets).toContain("held-but-plain");
    expect(secrets).toContain("tok-value-from-the-environment");
    const text = "key held-but-plain; env tok-value-from-the-environment";
    expect(scrubSecrets(text, secrets)).toBe(`key ${REDACTED}; env ${REDACTED}`);
  });

  it("removes a held key a provider altered: case, line breaks, base64, hex, cut short", () => {
    const key = "Zq8Vb2Lm9Pz4Rt6WxY3k";
    const b64 = Buffer.from(key).toString("base64");
    const hex = Buffer.from(key).toString("hex");
    const cases = [
      `split Zq8Vb2Lm9P\nz4Rt6WxY3k`,
      `lower ${key.toLowerCase()}`,
      `b64 ${b64}`,
      `hex ${hex.toUpperCase()}`,
      `prefix ${key.slice(0, 12)}…`,
    ];
    // Held as "Bearer KEY" too (an Authorization header): nothing of the key is left.
    expect(scrubSecrets(`bad key ${key.toLowerCase()}`, [`Bearer ${key}`, key])).toBe(
      `bad key ${REDACTED}`,
    );
    expect(scrubSecrets(`cut ${key.slice(0, 15)}`, [`Bearer ${key}`, key])).toBe(`cut ${REDACTED}`);
    expect(cases.map((c) => scrubSecrets(c, [key]))).toEqual([
      `split ${REDACTED}`,
      `lower ${REDACTED}`,
      `b64 ${REDACTED}`,
      `hex ${REDACTED}`,
      `prefix ${REDACTED}…`,
    ]);
  });

  it("leaves no stretch of a held key, and touches nothing else (random text)", () => {
    // Stretches are found, then widened over the key characters beside them
    // by hand: a pattern that widens itself (/[\w-]*STRETCH[\w-]*/)
    // backtracks quadratically on a long run of word characters (found by
    // an adversarial review).
    const key = "Zq8Vb2Lm9Pz4Rt6WxY3kQ0";
    const stretches = Array.from(
      { length: key.length - 11 },
      (_, i) => new RegExp([...key.slice(i, i + 12)].join("\\s*"), "i"),
    );
    const hasStretch = (t: string) => stretches.some((r) => r.test(t));
    fc.assert(
      fc.property(
        fc.array(
          fc.oneof(
            fc.constantFrom(" ", "-", "x", "_", ".", "Z", "\n"),
            fc.integer({ min: 0, max: key.length - 12 }).map((i) => key.slice(i, i + 12 + (i % 3))),
          ),
          { maxLength: 12 },
        ),
        (pieces) => {
          const text = pieces.join("");
          const out = scrubSecrets(text, [key]);
          expect(hasStretch(out)).toBe(false);
          if (!hasStretch(text)) expect(out).toBe(text);
          // What is kept is the text's own, in order.
          let at = 0;
          for (const c of out.split(REDACTED).join("")) {
            at = text.indexOf(c, at) + 1;
            expect(at).toBeGreaterThan(0);
          }
        },
      ),
    );
  });

  it("looks at a message's first 4096 characters only (callers keep 2000)", () => {
    const key = "Zq8Vb2Lm9Pz4Rt6WxY3kQ0";
    const out = scrubSecrets(`Invalid input: ${"A".repeat(64_000)} ${key}`, [key]);
    expect(out).toBe(`Invalid input: ${"A".repeat(4096 - 15)}`);
  });

  it("removes what is shaped like a key, whoever's it is", () => {
    const cases = [
      "Incorrect API key provided: sk-proj-abcDEF123456ghiJKL789.",
      "Incorrect API key provided: sk-proj-****************************wxyz.",
      "header was Authorization: Bearer abc.DEF-123_456",
      "Google: AIzaSyA1234567890abcdefghijklmnopqrstu",
      "AWS AKIAIOSFODNN7EXAMPLE denied",
      "token ghp_1234567890abcdefghijABCDEFGHIJ",
      "the token counting went wrong",
      "jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.sig",
      "groq gsk_abcdefghij1234567890KLMNOP",
      'body {"api_key": "whatever-it-was"}',
      "url ?key=AbC123dEf456GhI789jKl012MnO345pQr678",
    ];
    expect(cases.map((c) => scrubSecrets(c, []))).toMatchInlineSnapshot(`
      [
        "Incorrect API key provided: [redacted].",
        "Incorrect API key provided: [redacted].",
        "header was Authorization: [redacted]",
        "Google: [redacted]",
        "AWS [redacted] denied",
        "token [redacted]",
        "the token counting went wrong",
        "jwt [redacted]",
        "groq [redacted]",
        "body {"api_key": "[redacted]"}",
        "url ?key=[redacted]",
      ]
    `);
  });

  it("leaves ordinary text alone", () => {
    const text =
      "Rate limit reached for requests on gpt-4o-mini-2024-07-18 in organization org-1. See https://platform.openai.com/account/api-keys.";
    expect(scrubSecrets(text, [])).toBe(text);
  });
});

describe("specification v4: the request and the answer in their forms", () => {
  it("wraps file data and tool results' file items for a v4 model, and unwraps the answer", () => {
    const options = {
      prompt: [
        { role: "system", content: "s" },
        { role: "user", content: [{ type: "file", data: "QUJD", mediaType: "image/png" }] },
        {
          role: "tool",
          content: [
            {
              type: "tool-result",
              toolCallId: "1",
              toolName: "t",
              output: {
                type: "content",
                value: [
                  { type: "text", text: "t" },
                  { type: "image-data", data: "QUJD", mediaType: "image/png" },
                  { type: "file-data", data: "QUJD", mediaType: "text/plain", filename: "a.txt" },
                ],
              },
            },
          ],
        },
      ],
    };
    expect(toV4Options(options)).toMatchInlineSnapshot(`
      {
        "prompt": [
          {
            "content": "s",
            "role": "system",
          },
          {
            "content": [
              {
                "data": {
                  "data": "QUJD",
                  "type": "data",
                },
                "mediaType": "image/png",
                "type": "file",
              },
            ],
            "role": "user",
          },
          {
            "content": [
              {
                "output": {
                  "type": "content",
                  "value": [
                    {
                      "text": "t",
                      "type": "text",
                    },
                    {
                      "data": {
                        "data": "QUJD",
                        "type": "data",
                      },
                      "mediaType": "image/png",
                      "type": "file",
                    },
                    {
                      "data": {
                        "data": "QUJD",
                        "type": "data",
                      },
                      "filename": "a.txt",
                      "mediaType": "text/plain",
                      "type": "file",
                    },
                  ],
                },
                "toolCallId": "1",
                "toolName": "t",
                "type": "tool-result",
              },
            ],
            "role": "tool",
          },
        ],
      }
    `);
    expect(
      fromV4Parts([
        { type: "text", text: "hi" },
        { type: "file", mediaType: "image/png", data: { type: "data", data: "QUJD" } },
        { type: "file", mediaType: "image/png", data: { type: "url", url: "https://x/y.png" } },
        { type: "reasoning-file", mediaType: "image/png", data: { type: "data", data: "QUJD" } },
        { type: "custom", kind: "a.b" },
      ]),
    ).toMatchInlineSnapshot(`
      [
        {
          "text": "hi",
          "type": "text",
        },
        {
          "data": "QUJD",
          "mediaType": "image/png",
          "type": "file",
        },
      ]
    `);
  });
});
