// examples/readme/ai-sdk.mjs — npm install ai@^6, then node ai-sdk.mjs (offline: a mock model)
import { generateText, stepCountIs } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { createSandbox } from "mountbox";
import { createSandboxTools } from "mountbox/ai-sdk";

const sandbox = createSandbox(
  { root: "./project", mounts: ["./cache:/cache:ro"] },
  { basePath: import.meta.dirname },
).derive({ allowRead: ["/src", "/cache"], allowWrite: ["/src"] });

// A scripted stand-in for a real model (e.g. anthropic("claude-sonnet-4-5")).
const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 1, text: 1, reasoning: undefined },
};
const call = (toolName, input) => ({
  content: [{ type: "tool-call", toolCallId: toolName, toolName, input: JSON.stringify(input) }],
  finishReason: { unified: "tool-calls", raw: undefined },
  usage,
  warnings: [],
});
const model = new MockLanguageModelV3({
  doGenerate: [
    call("read_file", { path: "/src/a.ts" }),
    call("read_file", { path: "/../etc/passwd" }),
    call("edit_file", {
      path: "/src/a.ts",
      edits: [{ oldText: "hello", newText: "hi" }],
      dryRun: true,
    }),
    {
      content: [{ type: "text", text: "Done." }],
      finishReason: { unified: "stop", raw: undefined },
      usage,
      warnings: [],
    },
  ],
});

const result = await generateText({
  model,
  tools: await createSandboxTools(sandbox, { needsApproval: { delete_file: true } }),
  stopWhen: stepCountIs(10),
  prompt: "Greet with 'hi' instead of 'hello' in /src/a.ts.",
});
for (const step of result.steps) {
  for (const r of step.toolResults) console.log(`[${r.toolName}]\n${r.output.trimEnd()}\n`);
}
console.log(result.text);
