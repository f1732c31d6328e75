// examples/readme/llm/run.mjs — npm install ai@^6, then node run.mjs (offline: a mock model)
import { MockLanguageModelV3 } from "ai/test";
import { createHost, loadProgram } from "mountbox";

// A scripted stand-in for a real model, e.g. models: { fast: anthropic("claude-haiku-4-5") }.
// It lives here, in the host: agent threads reach it only through the port.
const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 1, text: 1, reasoning: undefined },
};
const turn = (content, unified) => ({
  content,
  finishReason: { unified, raw: undefined },
  usage,
  warnings: [],
});
const call = (id, toolName, input) =>
  turn(
    [{ type: "tool-call", toolCallId: id, toolName, input: JSON.stringify(input) }],
    "tool-calls",
  );
const say = (text) => turn([{ type: "text", text }], "stop");
const results = (prompt) =>
  prompt.filter((m) => m.role === "tool").flatMap((m) => m.content.map((p) => p.output.value));

const fast = new MockLanguageModelV3({
  doGenerate: async ({ prompt }) => {
    const seen = results(prompt);
    if (prompt[0].content.startsWith("You are the counter."))
      return seen.length === 0 ? call("c1", "read_file", { path: "/tasks/todo.md" }) : say("2");
    return [
      call("e1", "read_file", { path: "/tasks/todo.md" }),
      call("e2", "read_file", { path: "/private/keys.txt" }), // outside its sandbox: refused
      call("e3", "call_worker", { worker: "counter", input: "Count the items of /tasks/todo.md" }),
      call("e4", "write_file", { path: "/tasks/summary.md", content: `${seen[2]} tasks to do.\n` }),
      say("Wrote /tasks/summary.md."),
    ][seen.length];
  },
});

const host = await createHost({
  ...(await loadProgram(import.meta.dirname)),
  models: { fast },
  onEvent: (e) => {
    if (e.type === "model_call")
      console.log(`model_call ${e.worker} (${e.model}): ${e.finishReason}`);
    if (e.type === "tool_call")
      console.log(`tool_call ${e.tool}${e.path ? ` ${e.path}` : ""} → ${e.outcome}`);
  },
});
console.log(await host.run("editor", "Summarize my tasks."));
await host.close();
