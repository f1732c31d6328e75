/**
 * What a scripted mock model reads back: the texts of the tool results in
 * the prompt the AI SDK sends it (the tests' models decide their next turn
 * from them).
 */
import type { MockLanguageModelV3 } from "ai/test";

type CallOptions = Parameters<MockLanguageModelV3["doGenerate"]>[0];

/** Texts of the tool results the model has been shown, in order. */
export function readToolResults(o: CallOptions): string[] {
  return o.prompt
    .filter((m) => m.role === "tool")
    .flatMap((m) => m.content)
    .map((p) =>
      p.type === "tool-result"
        ? p.output.type === "text" || p.output.type === "error-text"
          ? p.output.value
          : JSON.stringify(p.output)
        : "",
    );
}
