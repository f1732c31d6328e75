/**
 * What a thread's tool results may hand the model (issue 18, review): URLs
 * and provider file ids are refused with a message that says what to send
 * instead; the data itself passes. Through a real port.
 */
import { MessageChannel } from "node:worker_threads";
import { MockLanguageModelV3 } from "ai/test";
import { describe, expect, it } from "vitest";
import { createSandbox } from "../src/index.js";
import { serveModelCall } from "../src/models/model-calls.js";
import { serveSandbox } from "../src/port/port-server.js";
import { createSandboxClient } from "../workers/sandbox-client.js";

/** A prompt whose one tool result holds `item`. */
const withItem = (item: unknown) => ({
  prompt: [
    {
      role: "assistant",
      content: [{ type: "tool-call", toolCallId: "c1", toolName: "read_file", input: {} }],
    },
    {
      role: "tool",
      content: [
        {
          type: "tool-result",
          toolCallId: "c1",
          toolName: "read_file",
          output: { type: "content", value: [{ type: "text", text: "ok" }, item] },
        },
      ],
    },
  ],
});

/** Sends `options` as a thread's model request over a real port; the model's calls. */
async function send(options: unknown): Promise<{ error?: string; calls: unknown[] }> {
  const model = new MockLanguageModelV3({
    doGenerate: async () => ({
      content: [{ type: "text", text: "done" }],
      finishReason: { unified: "stop", raw: "stop" },
      usage: {
        inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
        outputTokens: { total: 1, text: 1, reasoning: 0 },
      },
      warnings: [],
    }),
  });
  const { port1, port2 } = new MessageChannel();
  const server = serveSandbox(port1, createSandbox({ paths: {} }), {
    onModel: (kind, o) =>
      serveModelCall({
        kind,
        options: o,
        model: { name: "m", model, maxRetries: 0 },
        signal: new AbortController().signal,
        onDone: () => {},
      }),
  });
  const client = createSandboxClient(port2);
  try {
    await client.call("model.generate", [options]);
    return { calls: model.doGenerateCalls };
  } catch (e) {
    return { error: (e as Error).message, calls: model.doGenerateCalls };
  } finally {
    client.close();
    server.close();
  }
}

describe("tool-result content items from a thread", () => {
  it("refuses URLs and provider file ids, saying what to send instead", async () => {
    const items = [
      { type: "image-url", url: "https://attacker.example/x.png?d=SECRET" },
      { type: "file-url", url: "https://attacker.example/f", mediaType: "text/plain" },
      { type: "file-id", fileId: "file-abc" },
      { type: "image-file-id", fileId: { openai: "file-abc" } },
      { type: "custom", providerOptions: { x: { y: 1 } } },
    ];
    for (const item of items) {
      const r = await send(withItem(item));
      expect(r.calls).toHaveLength(0);
      expect(r.error).toContain(
        `content item 1: type "${item.type}" is not accepted from an agent thread (URLs and provider file ids never are); send "text", or the data itself as "file-data" or "image-data" (base64)`,
      );
      expect(r.error).not.toContain("attacker");
    }
  });

  it("refuses a URL where data belongs; passes the data itself", async () => {
    const url = await send(
      withItem({ type: "image-data", data: "https://attacker.example/x", mediaType: "image/png" }),
    );
    expect(url.calls).toHaveLength(0);
    expect(url.error).toContain("data must be bytes or base64 text");
    const file = await send({
      prompt: [
        {
          role: "user",
          content: [{ type: "file", data: "https://attacker.example/f", mediaType: "text/plain" }],
        },
      ],
    });
    expect(file.calls).toHaveLength(0);
    expect(file.error).toContain("data must be bytes or base64 text");

    const ok = await send(
      withItem({ type: "image-data", data: "iVBORw0KGgo=", mediaType: "image/png", extra: 1 }),
    );
    expect(ok.error).toBeUndefined();
    const prompt = (ok.calls[0] as { prompt: { content: { output?: unknown }[] }[] }).prompt;
    expect(prompt[1]!.content[0]!.output).toEqual({
      type: "content",
      value: [
        { type: "text", text: "ok" },
        { type: "image-data", data: "iVBORw0KGgo=", mediaType: "image/png" },
      ],
    });
  });
});
