/**
 * The model benchmark's mock answer: text at once, as the AI SDK's
 * `LanguageModelV3` returns it. A fresh object per call, as a real model
 * builds one.
 */
export function mockAnswer() {
  return {
    content: [{ type: "text" as const, text: "Hello." }],
    finishReason: { unified: "stop" as const, raw: "stop" },
    usage: {
      inputTokens: { total: 3, noCache: 3, cacheRead: undefined, cacheWrite: undefined },
      outputTokens: { total: 2, text: 2, reasoning: undefined },
    },
    warnings: [],
  };
}
