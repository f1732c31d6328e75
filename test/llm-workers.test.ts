/**
 * LLM workers (issue 12): `.worker` files run as the AI SDK's real
 * `generateText` loop in their own threads, their models held by the host.
 * The model is the SDK's own `MockLanguageModelV3`, registered host-side:
 * it sees every call the threads make, and nothing else can reach it.
 */
import { spawnSync } from "node:child_process";
import {
  cpSync,
  mkdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { MessageChannel } from "node:worker_threads";
import { simulateReadableStream, streamText } from "ai";
import { MockLanguageModelV3, MockProviderV3 } from "ai/test";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  AgentThreadError as BuiltAgentThreadError,
  createHost as createBuiltHost,
  loadProgram,
} from "../dist/src/index.js";
import type { Host, HostEvent, HostOptions } from "../src/index.js";
import { createSandbox } from "../src/index.js";
import { serveModelCall } from "../src/models/model-calls.js";
import {
  checkModelCallOptions,
  createModelRequestChecker,
} from "../src/models/model-request-checks.js";
import { MAX_NODES } from "../src/models/plain-data.js";
import { serveSandbox } from "../src/port/port-server.js";
import { MISSING_AI_FOR_LLM_WORKERS } from "../src/threads/permissions.js";
import { createProxyModel } from "../workers/model-client.js";
import { createSandboxClient } from "../workers/sandbox-client.js";
import { assertBuilt } from "./conformance/thread.js";
import { describeWithBwrap } from "./helpers/bwrap.js";
import { readToolResults } from "./helpers/tool-results.js";
import { makeTempDir, removeDir, writeTree } from "./helpers/tree.js";

const createHost = createBuiltHost as unknown as (o: HostOptions) => Promise<Host>;
const fx = (name: string) => fileURLToPath(new URL(`./fixtures/llm/${name}`, import.meta.url));

type CallOptions = Parameters<MockLanguageModelV3["doGenerate"]>[0];
type GenerateResult = Awaited<ReturnType<MockLanguageModelV3["doGenerate"]>>;

const usage = (input: number, output: number): GenerateResult["usage"] => ({
  inputTokens: { total: input, noCache: input, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: output, text: output, reasoning: undefined },
});

/** One model turn that calls a tool. */
function callTool(id: string, toolName: string, input: unknown): GenerateResult {
  return {
    content: [{ type: "tool-call", toolCallId: id, toolName, input: JSON.stringify(input) }],
    finishReason: { unified: "tool-calls", raw: undefined },
    usage: usage(10, 5),
    warnings: [],
  };
}

/** One model turn that answers with text. */
function answer(text: string): GenerateResult {
  return {
    content: [{ type: "text", text }],
    finishReason: { unified: "stop", raw: undefined },
    usage: usage(20, 7),
    warnings: [],
    response: { id: "r1", modelId: "mock", timestamp: new Date(0) },
  };
}

function systemOf(o: CallOptions): string {
  const first = o.prompt[0];
  return first?.role === "system" ? first.content : "";
}

/**
 * The scripted model of these tests, driven by the worker's instructions
 * (its system prompt) and by how many tool results it has seen.
 */
function scriptedModel(): MockLanguageModelV3 {
  return new MockLanguageModelV3({
    doGenerate: async (o) => {
      const seen = readToolResults(o);
      const system = systemOf(o);
      if (system.includes("You are the editor.")) {
        switch (seen.length) {
          case 0:
            return callTool("e1", "read_file", { path: "/project/notes.txt" });
          case 1:
            return callTool("e2", "read_file", { path: "/secret.txt" });
          case 2:
            // Refused outside its sandbox: it goes back to its own file.
            return callTool("e3", "edit_file", {
              path: "/project/notes.txt",
              edits: [{ oldText: "draft", newText: "final" }],
            });
          case 3:
            return callTool("e4", "call_worker", {
              worker: "summarizer",
              input: "Summarize /project/notes.txt",
            });
          default:
            return answer(`editor done; ${seen.at(-1)}`);
        }
      }
      if (system.includes("You are the summarizer.")) {
        if (seen.length === 0) return callTool("s1", "read_file", { path: "/project/notes.txt" });
        return answer(`summary: ${seen[0]?.includes("final") ? "final" : "draft"} notes`);
      }
      if (system.includes("You are the boss.")) {
        if (seen.length === 0)
          return callTool("b1", "call_worker", { worker: "counter", input: "/project/notes.txt" });
        return answer(`boss: ${seen[0]}`);
      }
      return answer(`unknown worker: ${system.slice(0, 40)}`);
    },
  });
}

let base: string;
let data: string;

beforeAll(() => {
  assertBuilt();
  base = makeTempDir("mountbox-llm-");
  data = join(base, "data");
  writeTree(data, {
    project: { "notes.txt": "draft notes\nsecond line\n" },
    "secret.txt": "host secret",
  });
});

afterAll(() => removeDir(base));

/** Records every event of a host. */
function recorder(): { events: HostEvent[]; onEvent: (e: HostEvent) => void } {
  const events: HostEvent[] = [];
  return { events, onEvent: (e) => events.push(e) };
}

describe("a .worker program with host-held models", () => {
  it("reads, is refused an escape and adapts, edits, and delegates to a second LLM worker", async () => {
    const dir = join(base, "program");
    writeTree(dir, {
      "program.yaml": [
        "name: llm-demo",
        "model: scripted",
        "sandbox:",
        `  root: ${JSON.stringify(data)}`,
        "",
      ].join("\n"),
      workers: {
        "editor.worker": [
          "---",
          "description: edits notes",
          "sandbox: { restrict: /project }",
          "delegates: [summarizer]",
          "max_steps: 8",
          "---",
          "You are the editor. Fix the notes, then have them summarized.",
          "",
        ].join("\n"),
        "summarizer.worker": [
          "---",
          "description: summarizes a file",
          "sandbox: { readonly: true }",
          "tools: [read_file]",
          "---",
          "You are the summarizer.",
          "",
        ].join("\n"),
      },
    });
    const scripted = scriptedModel();
    const { events, onEvent } = recorder();
    const options = await loadProgram(dir);
    // program.yaml's model is the default of both workers.
    expect(options.workers.editor?.model).toBe("scripted");
    const host = await createHost({ ...options, models: { scripted }, onEvent });
    try {
      const out = await host.run("editor", "Please fix the notes.");
      expect(out).toBe("editor done; summary: final notes");
    } finally {
      await host.close();
    }
    expect(readFileSync(join(data, "project/notes.txt"), "utf8")).toBe(
      "final notes\nsecond line\n",
    );

    // The model saw the refusal (no host path in it) and every call's instructions.
    const editorCalls = scripted.doGenerateCalls.filter((c) =>
      systemOf(c).includes("You are the editor."),
    );
    const refusal = readToolResults(editorCalls[2]!)[1]!;
    expect(refusal).toContain("path_not_in_sandbox");
    expect(refusal).not.toContain(base);
    // The tools crossed as JSON schemas; call_worker only where delegates exist.
    const toolNames = (c: CallOptions) => (c.tools ?? []).map((t) => t.name);
    expect(toolNames(editorCalls[0]!)).toContain("call_worker");
    const summarizerCalls = scripted.doGenerateCalls.filter((c) =>
      systemOf(c).includes("You are the summarizer."),
    );
    expect(summarizerCalls.map(toolNames)).toEqual([["read_file"], ["read_file"]]);
    // No header, provider option or model name came from a thread.
    for (const c of scripted.doGenerateCalls) {
      expect(c.headers).toBeUndefined();
      expect(c.providerOptions).toBeUndefined();
    }

    const modelCalls = events.filter((e) => e.type === "model_call");
    expect(modelCalls).toHaveLength(7); // editor 5, summarizer 2
    expect(modelCalls[0]).toMatchObject({
      worker: "editor",
      model: "scripted",
      inputTokens: 10,
      outputTokens: 5,
      finishReason: "tool-calls",
    });
    expect(modelCalls.at(-1)).toMatchObject({ worker: "editor", finishReason: "stop" });
    const toolCalls = events
      .filter((e) => e.type === "tool_call")
      .map((e) => [e.tool, e.path, e.outcome]);
    expect(toolCalls).toEqual([
      ["read_file", "/project/notes.txt", "ok"],
      ["read_file", "/secret.txt", "error"],
      ["edit_file", "/project/notes.txt", "ok"],
      ["read_file", "/project/notes.txt", "ok"], // the summarizer's, during call_worker
      ["call_worker", undefined, "ok"],
    ]);
    const started = events.filter((e) => e.type === "agent_started");
    expect(started.map((e) => [e.worker, e.depth])).toEqual([
      ["editor", 1],
      ["summarizer", 2],
    ]);
    expect(events.some((e) => e.type === "denial" && e.path === "/secret.txt")).toBe(true);
  });
});

describe("code and LLM workers calling each other", () => {
  const workers: HostOptions["workers"] = {
    driver: { module: fx("delegate.js"), delegates: ["summarizer"] },
    summarizer: {
      instructions: "You are the summarizer.",
      model: "scripted",
      tools: ["read_file"],
    },
    boss: { instructions: "You are the boss.", model: "scripted", delegates: ["counter"] },
    counter: { module: fx("count-lines.js") },
  };

  it("a code worker delegates to an LLM worker, and an LLM worker to a code worker", async () => {
    writeTree(data, { project: { "notes.txt": "final notes\nsecond line\n" } });
    const scripted = scriptedModel();
    const host = await createHost({ sandbox: { root: data }, workers, models: { scripted } });
    try {
      await expect(
        host.run("driver", { to: "summarizer", input: "Summarize /project/notes.txt" }),
      ).resolves.toBe("summary: final notes");
      await expect(host.run("boss", "Count the lines of the notes.")).resolves.toBe(
        "boss: /project/notes.txt has 2 lines",
      );
    } finally {
      await host.close();
    }
  });
});

describe("the model stays with the host", () => {
  it("a code worker's model calls are refused, whatever model it names", async () => {
    const scripted = scriptedModel();
    const host = await createHost({
      sandbox: { root: data },
      workers: {
        hostile: { module: fx("hostile-model.js") },
        summarizer: { instructions: "You are the summarizer.", model: "scripted" },
      },
      models: { scripted, secret: scriptedModel() },
    });
    try {
      const out = (await host.run("hostile")) as { op: string; ok: boolean; message: string }[];
      expect(out.map((r) => [r.op, r.ok])).toEqual([
        ["model.generate", false],
        ["model.stream", false],
        ["model.generate", false],
      ]);
      for (const r of out) expect(r.message).toMatch(/Unknown operation/);
    } finally {
      await host.close();
    }
    expect(scripted.doGenerateCalls).toHaveLength(0);
  });

  it("an LLM worker gets the model of its spec only", async () => {
    const mine = scriptedModel();
    const other = scriptedModel();
    const host = await createHost({
      sandbox: { root: data },
      workers: {
        summarizer: {
          instructions: "You are the summarizer.",
          model: "mine",
          tools: ["read_file"],
        },
      },
      models: { mine, other },
    });
    try {
      await host.run("summarizer", "go");
    } finally {
      await host.close();
    }
    expect(mine.doGenerateCalls).toHaveLength(2);
    expect(other.doGenerateCalls).toHaveLength(0);
  });

  it("a request's every field is checked: no model, headers or provider options from a thread", () => {
    const prompt = [{ role: "user", content: [{ type: "text", text: "hi" }] }];
    const ok = checkModelCallOptions({ prompt, temperature: 0, maxOutputTokens: 10 });
    expect(typeof ok).toBe("object");
    const refused: [unknown, RegExp][] = [
      [{ prompt, model: "secret" }, /unknown call option "model"/],
      [{ prompt, headers: { authorization: "x" } }, /unknown call option "headers"/],
      [{ prompt, providerOptions: { openai: { store: true } } }, /providerOptions/],
      [{ prompt, abortSignal: {} }, /abortSignal/],
      [{ prompt: [{ role: "developer", content: [] }] }, /unknown role/],
      [{ prompt: [{ role: "user", content: [{ type: "tool-call" }] }] }, /not a user part/],
      [{ prompt, temperature: Number.NaN }, /temperature/],
      [{ prompt, tools: [{ type: "provider", id: "x.y", name: "y", args: {} }] }, /function tools/],
      [{ prompt, toolChoice: { type: "tool" } }, /toolChoice/],
      [
        JSON.parse(
          `{"prompt":[{"role":"user","content":[{"type":"text","text":"a","__proto__":{}}]}]}`,
        ),
        /__proto__/,
      ],
      [{ prompt: [{ role: "system", content: nest(100) }] }, /system content/],
      [
        { prompt: [{ role: "user", content: [{ type: "text", text: "a", x: nest(100) }] }] },
        /deeper/,
      ],
      [{ temperature: 1 }, /prompt: required/],
      [[], /must be an object/],
    ];
    for (const [raw, message] of refused) expect(checkModelCallOptions(raw)).toMatch(message);
    // What passes is a copy: later changes by the sender do not reach the model.
    const bytes = new Uint8Array([1, 2, 3]);
    const file = { type: "file", data: bytes, mediaType: "application/octet-stream" };
    const checked = checkModelCallOptions({ prompt: [{ role: "user", content: [file] }] });
    bytes[0] = 9;
    expect(JSON.stringify(checked)).toContain('"0":1');
  });

  it("leaves out provider options and unknown keys at every level (review 3, t4)", () => {
    const po = { providerOptions: { openai: { store: true } } };
    const raw = {
      prompt: [
        { role: "system", content: "sys", ...po, extra: 1 },
        {
          role: "user",
          ...po,
          content: [
            { type: "text", text: "hi", ...po, junk: [1, 2] },
            { type: "file", data: "aGk=", mediaType: "text/plain", ...po, originalUrl: "http://x" },
          ],
        },
        {
          role: "assistant",
          content: [
            { type: "reasoning", text: "r", ...po },
            { type: "tool-call", toolCallId: "c1", toolName: "t", input: { a: 1 }, ...po },
          ],
        },
        {
          role: "tool",
          content: [
            {
              type: "tool-result",
              toolCallId: "c1",
              toolName: "t",
              ...po,
              output: {
                type: "content",
                ...po,
                value: [{ type: "text", text: "out", ...po }],
                other: true,
              },
            },
            { type: "tool-approval-response", approvalId: "a", approved: true, ...po },
          ],
        },
      ],
    };
    const checked = checkModelCallOptions(raw);
    if (typeof checked === "string") throw new Error(checked);
    expect(JSON.stringify(checked.options)).not.toContain("providerOptions");
    expect(checked.options.prompt).toEqual([
      { role: "system", content: "sys" },
      {
        role: "user",
        content: [
          { type: "text", text: "hi" },
          { type: "file", data: "aGk=", mediaType: "text/plain" },
        ],
      },
      {
        role: "assistant",
        content: [
          { type: "reasoning", text: "r" },
          { type: "tool-call", toolCallId: "c1", toolName: "t", input: { a: 1 } },
        ],
      },
      {
        role: "tool",
        content: [
          {
            type: "tool-result",
            toolCallId: "c1",
            toolName: "t",
            output: { type: "content", value: [{ type: "text", text: "out" }] },
          },
          { type: "tool-approval-response", approvalId: "a", approved: true },
        ],
      },
    ]);
    expect(
      checkModelCallOptions({
        prompt: [
          {
            role: "tool",
            content: [
              { type: "tool-result", toolCallId: "c", toolName: "t", output: { type: "x" } },
            ],
          },
        ],
      }),
    ).toMatch(/unknown output type/);
  });

  it("a request of more values than the cap is refused after at most the cap's work (review 3, t4)", () => {
    // Each value counts the times the checker looks at it: the refusal must
    // come once the cap is passed, not after walking the whole request.
    let looked = 0;
    const counted = () =>
      new Proxy(
        { a: 1 },
        {
          ownKeys(target) {
            looked++;
            return Reflect.ownKeys(target);
          },
        },
      );
    const wide = (n: number, item: () => object) => Array.from({ length: n }, item);
    const request = (input: object[]) => ({
      prompt: [
        {
          role: "assistant",
          content: [{ type: "tool-call", toolCallId: "x", toolName: "t", input }],
        },
      ],
    });
    expect(MAX_NODES).toBeLessThanOrEqual(200_000);
    expect(typeof checkModelCallOptions(request(wide(50_000, () => ({ a: 1 }))))).toBe("object");
    const big = request(wide(330_000, counted)); // ~1M values
    const result = createModelRequestChecker()(big);
    expect(result).toMatch(/more than 200000 values/);
    expect(looked).toBeGreaterThan(0);
    expect(looked).toBeLessThan(MAX_NODES / 2);
  });
});

describe("tools sent once per change", () => {
  it("reuseTools stands for the tools of the agent's last call that sent some", () => {
    const check = createModelRequestChecker();
    const prompt = [{ role: "user", content: [{ type: "text", text: "hi" }] }];
    const tools = [{ type: "function", name: "t", inputSchema: { type: "object" } }];
    expect(check({ prompt, reuseTools: true })).toMatch(/no earlier request sent tools/);
    expect(check({ prompt, tools })).toMatchObject({ options: { tools } });
    expect(check({ prompt, reuseTools: true })).toMatchObject({ options: { prompt, tools } });
    expect(check({ prompt, tools, reuseTools: true })).toMatch(/comes without tools/);
    expect(check({ prompt, reuseTools: "yes" })).toMatch(/must be true/);
    // Another agent's checker holds nothing.
    expect(createModelRequestChecker()({ prompt, reuseTools: true })).toMatch(/no earlier/);
  });

  it("the proxy model sends its tools again whenever they differ from what the host holds", async () => {
    const model = new MockLanguageModelV3({
      doGenerate: async (o) => {
        if (o.tools?.some((t) => t.name === "boom")) throw new Error("model exploded");
        return {
          content: [{ type: "text", text: "ok" }],
          finishReason: { unified: "stop", raw: "stop" },
          usage: usage(1, 1),
          warnings: [],
        };
      },
    });
    const { port1, port2 } = new MessageChannel();
    const server = serveSandbox(port1, createSandbox({ paths: {} }), {
      onModel: (kind, options) =>
        serveModelCall({
          kind,
          options,
          model: { name: "m", model, maxRetries: 0 },
          signal: new AbortController().signal,
          onDone: () => {},
        }),
    });
    const client = createSandboxClient(port2);
    /** Per call: whether the thread sent its tools in full. */
    const sentInFull: boolean[] = [];
    let hold: Promise<void> | undefined;
    const proxy = createProxyModel(async (op, o) => {
      sentInFull.push(o.tools !== undefined);
      const reply = client.call(op, [o]);
      const wait = hold;
      const r = await reply;
      await wait;
      return r;
    });
    const prompt = [{ role: "user" as const, content: [{ type: "text" as const, text: "hi" }] }];
    const tool = (name: string, props: Record<string, unknown> = { p: { type: "string" } }) => ({
      type: "function" as const,
      name,
      inputSchema: { type: "object", properties: props },
    });
    /** One call with `tools`; the tools the host's model got (name and schema). */
    const step = async (tools: object[]) => {
      await Promise.resolve(proxy.doGenerate({ prompt, tools: tools as never })).catch(() => {});
      const got = (model.doGenerateCalls.at(-1)?.tools ?? []) as {
        name: string;
        inputSchema: unknown;
      }[];
      return got.map((t) => `${t.name}:${JSON.stringify(t.inputSchema)}`);
    };
    const a = [tool("a")];
    try {
      // Equal tools in fresh objects (as the SDK builds them each step): sent once.
      expect(await step(a)).toEqual(['a:{"type":"object","properties":{"p":{"type":"string"}}}']);
      expect(await step(structuredClone(a))).toEqual([
        'a:{"type":"object","properties":{"p":{"type":"string"}}}',
      ]);
      // A change deep in a schema, keys in another order, one more key: sent again.
      expect(await step([tool("a", { p: { type: "number" } })])).toEqual([
        'a:{"type":"object","properties":{"p":{"type":"number"}}}',
      ]);
      expect(await step([tool("a", { p: { type: "string" } })])).toEqual([
        'a:{"type":"object","properties":{"p":{"type":"string"}}}',
      ]);
      const reordered = {
        ...tool("a"),
        inputSchema: { properties: { p: { type: "string" } }, type: "object" },
      };
      expect(await step([reordered])).toEqual([
        'a:{"properties":{"p":{"type":"string"}},"type":"object"}',
      ]);
      expect(await step([{ ...reordered, description: "more" }])).toMatchObject([
        expect.any(String),
      ]);
      expect(model.doGenerateCalls.at(-1)?.tools?.[0]).toMatchObject({ description: "more" });
      expect(sentInFull).toEqual([true, false, true, true, true, true]);

      // The caller changing the objects it sent changes nothing the host holds.
      const mutable = [tool("m")];
      await step(mutable);
      (mutable[0]!.inputSchema.properties as Record<string, unknown>).q = { type: "string" };
      expect(await step(mutable)).toEqual([
        'm:{"type":"object","properties":{"p":{"type":"string"},"q":{"type":"string"}}}',
      ]);
      expect(sentInFull.slice(-2)).toEqual([true, true]);

      // After a failed call the tools are sent in full again.
      await step([tool("boom")]);
      expect(await step([tool("b")])).toEqual([
        'b:{"type":"object","properties":{"p":{"type":"string"}}}',
      ]);
      await step([tool("boom")]);
      await step([tool("b")]);
      expect(sentInFull.slice(-4)).toEqual([true, true, true, true]);

      // Two calls in flight with different tools, answered out of order: the
      // host holds the later one's; a call with the earlier one's sends them again.
      let release = (): void => {};
      hold = new Promise((r) => {
        release = r;
      });
      const first = step([tool("x")]);
      hold = undefined;
      const second = step([tool("y")]);
      await second;
      release();
      await first;
      expect(await step([tool("x")])).toEqual([
        'x:{"type":"object","properties":{"p":{"type":"string"}}}',
      ]);
      expect(await step([tool("x")])).toEqual([
        'x:{"type":"object","properties":{"p":{"type":"string"}}}',
      ]);
      expect(sentInFull.slice(-4)).toEqual([true, true, true, false]);
    } finally {
      client.close();
      await server.close();
    }
  });
});

// The output docs/llm-workers.md shows right after the example's code.
describe("docs: LLM workers", () => {
  const dir = fileURLToPath(new URL("../examples/readme/llm/", import.meta.url));
  const summary = join(dir, "notes/tasks/summary.md");

  it("examples/readme/llm/run.mjs prints the events and the editor's answer", () => {
    rmSync(summary, { force: true });
    try {
      const run = spawnSync(process.execPath, [join(dir, "run.mjs")], { encoding: "utf8" });
      expect(run.status, run.stderr).toBe(0);
      expect(run.stdout).toBe(
        [
          "model_call editor (fast): tool-calls",
          "tool_call read_file /tasks/todo.md → ok",
          "model_call editor (fast): tool-calls",
          "tool_call read_file /private/keys.txt → error",
          "model_call editor (fast): tool-calls",
          "model_call counter (fast): tool-calls",
          "tool_call read_file /tasks/todo.md → ok",
          "model_call counter (fast): stop",
          "tool_call call_worker → ok",
          "model_call editor (fast): tool-calls",
          "tool_call write_file /tasks/summary.md → ok",
          "model_call editor (fast): stop",
          "Wrote /tasks/summary.md.",
          "",
        ].join("\n"),
      );
      expect(readFileSync(summary, "utf8")).toBe("2 tasks to do.\n");
    } finally {
      rmSync(summary, { force: true });
    }
  });
});

function nest(depth: number): unknown {
  let v: unknown = "x";
  for (let i = 0; i < depth; i++) v = { v };
  return v;
}

describe("failures and bounds", () => {
  it("a model that throws fails only its agent, with the model's message", async () => {
    const boom = new MockLanguageModelV3({
      doGenerate: async () => {
        throw new Error("model exploded");
      },
    });
    const { events, onEvent } = recorder();
    const host = await createHost({
      sandbox: { root: data },
      basePath: base,
      workers: {
        broken: { instructions: "You break.", model: "boom" },
        summarizer: {
          instructions: "You are the summarizer.",
          model: "scripted",
          tools: ["read_file"],
        },
      },
      models: { boom, scripted: scriptedModel() },
      onEvent,
    });
    try {
      const [broken, fine] = await Promise.allSettled([
        host.run("broken", "go"),
        host.run("summarizer", "go"),
      ]);
      expect(fine).toMatchObject({ status: "fulfilled" });
      expect(broken.status).toBe("rejected");
      const err = (broken as PromiseRejectedResult).reason as Error & { reason?: string };
      expect(err).toBeInstanceOf(BuiltAgentThreadError);
      expect(err.reason).toBe("threw");
      expect(err.message).toBe("Worker 'broken' failed: The model 'boom' failed: model exploded");
      expect(err.message).not.toContain(base);
    } finally {
      await host.close();
    }
    expect(events.filter((e) => e.type === "agent_failed").map((e) => e.worker)).toEqual([
      "broken",
    ]);
  });

  it("max_steps stops a model that never stops calling tools", async () => {
    let n = 0;
    const looping = new MockLanguageModelV3({
      doGenerate: async () => callTool(`l${n++}`, "list_allowed_paths", {}),
    });
    const { events, onEvent } = recorder();
    const host = await createHost({
      sandbox: { root: data },
      workers: { looper: { instructions: "You loop.", model: "loop", maxSteps: 3 } },
      models: { loop: looping },
      onEvent,
    });
    try {
      await expect(host.run("looper", "go")).resolves.toBe("");
    } finally {
      await host.close();
    }
    expect(looping.doGenerateCalls).toHaveLength(3);
    // The last step's tool ran, but no further model call reported its result.
    expect(events.filter((e) => e.type === "tool_call").map((e) => e.outcome)).toEqual([
      "ok",
      "ok",
      "unknown",
    ]);
  });

  it("the deadline stops a model that never answers", async () => {
    const stuck = new MockLanguageModelV3({
      doGenerate: (o) =>
        new Promise((_, reject) =>
          o.abortSignal?.addEventListener("abort", () => reject(new Error("aborted")), {
            once: true,
          }),
        ),
    });
    const host = await createHost({
      sandbox: { root: data },
      // Long enough for the thread to start and call the model on a loaded
      // machine: the deadline must find the call in flight.
      workers: { waiter: { instructions: "You wait.", model: "stuck", timeoutMs: 3000 } },
      models: { stuck },
    });
    try {
      await expect(host.run("waiter", "go")).rejects.toMatchObject({ reason: "timeout" });
    } finally {
      await host.close();
    }
    // The host's call was aborted with the agent.
    expect(stuck.doGenerateCalls[0]?.abortSignal?.aborted).toBe(true);
  });
});

describe("models at createHost", () => {
  it("names a missing model, a bad models entry and tools a worker cannot have", async () => {
    const err = createHost({
      sandbox: { root: data },
      workers: {
        a: { instructions: "x", model: "nope" },
        b: { instructions: "x", model: "m", tools: ["shell", "call_worker", "nope"] },
      },
      models: { m: scriptedModel(), bad: { specificationVersion: "v1" } as never },
    });
    await expect(err).rejects.toThrow(
      /model 'nope' of worker 'a': not available \(models: m, bad\)/,
    );
    await expect(err).rejects.toThrow(/'shell' needs 'shell: true' → at workers\.b\.tools\[0\]/);
    await expect(err).rejects.toThrow(/'call_worker' needs 'delegates'/);
    await expect(err).rejects.toThrow(/unknown tool 'nope'/);
    await expect(err).rejects.toThrow(
      /a language model of specification 'v1' \(AI SDK 5 or older\) is not supported: .* → at models\.bad/,
    );
  });

  it("takes a provider (registry): 'key:id' calls its languageModel(id)", async () => {
    const inner = scriptedModel();
    const provider = new MockProviderV3({ languageModels: { small: inner } });
    const host = await createHost({
      sandbox: { root: data },
      workers: {
        summarizer: {
          instructions: "You are the summarizer.",
          model: "p:small",
          tools: ["read_file"],
        },
      },
      models: { p: provider },
    });
    try {
      await expect(host.run("summarizer", "go")).resolves.toMatch(/^summary: /);
    } finally {
      await host.close();
    }
    expect(inner.doGenerateCalls).toHaveLength(2);
    await expect(
      createHost({
        workers: { s: { instructions: "x", model: "p:large" } },
        models: { p: provider },
      }),
    ).rejects.toThrow(/model 'p:large' of worker 's': not available from 'p'/);
  });
});

describe("without the ai package", () => {
  it("a host with an LLM worker says what to install, at createHost", () => {
    // A real install layout without `ai`: mountbox's built files and its
    // dependencies, linked from this checkout.
    const repo = fileURLToPath(new URL("..", import.meta.url));
    const dir = join(base, "no-ai");
    const pkgDir = join(dir, "node_modules", "mountbox");
    mkdirSync(join(pkgDir, "dist"), { recursive: true });
    const pkg = JSON.parse(readFileSync(join(repo, "package.json"), "utf8")) as {
      dependencies: Record<string, string>;
    };
    writeFileSync(join(pkgDir, "package.json"), JSON.stringify(pkg));
    cpSync(join(repo, "dist/src"), join(pkgDir, "dist/src"), { recursive: true });
    cpSync(join(repo, "dist/workers"), join(pkgDir, "dist/workers"), { recursive: true });
    for (const dep of Object.keys(pkg.dependencies)) {
      mkdirSync(join(dir, "node_modules", dep, ".."), { recursive: true });
      symlinkSync(realpathSync(join(repo, "node_modules", dep)), join(dir, "node_modules", dep));
    }
    writeFileSync(
      join(dir, "main.mjs"),
      [
        'import { createHost } from "mountbox";',
        "const m = { specificationVersion: 'v3', provider: 'p', modelId: 'm', doGenerate() {}, doStream() {} };",
        "const code = await createHost({ workers: {} });",
        "await code.close();",
        "await createHost({ workers: { w: { instructions: 'x', model: 'm' } }, models: { m } })",
        "  .then(() => console.log('no error'), (e) => console.log(e.message));",
      ].join("\n"),
    );
    const run = spawnSync(process.execPath, ["main.mjs"], { cwd: dir, encoding: "utf8" });
    expect(run.stderr).toBe("");
    expect(run.stdout).toBe(
      `Invalid configuration:\n✖ ${MISSING_AI_FOR_LLM_WORKERS} → at workers\n`,
    );
    expect(MISSING_AI_FOR_LLM_WORKERS).toContain("npm install ai@^6");
  });
});

describe("doStream through a real port", () => {
  it("the host reads the stream to its end; the thread side re-emits its parts", async () => {
    const model = new MockLanguageModelV3({
      doStream: async () => ({
        stream: simulateReadableStream({
          chunks: [
            { type: "stream-start", warnings: [] },
            { type: "response-metadata", id: "r", modelId: "m", timestamp: new Date(5) },
            { type: "text-start", id: "t" },
            { type: "text-delta", id: "t", delta: "Hello, " },
            { type: "text-delta", id: "t", delta: "port." },
            { type: "text-end", id: "t" },
            { type: "finish", finishReason: { unified: "stop", raw: "stop" }, usage: usage(3, 2) },
          ],
        }),
      }),
    });
    const { port1, port2 } = new MessageChannel();
    const calls: string[] = [];
    const server = serveSandbox(port1, createSandbox({ paths: {} }), {
      onModel: (kind, options) =>
        serveModelCall({
          kind,
          options,
          model: { name: "m", model, maxRetries: 0 },
          signal: new AbortController().signal,
          onDone: (info) =>
            calls.push(
              info.status === "ok" ? `${kind}:${info.finishReason}:${info.outputTokens}` : "error",
            ),
        }),
    });
    const client = createSandboxClient(port2);
    try {
      const proxy = createProxyModel((op, o) => client.call(op, [o]));
      const result = streamText({ model: proxy, prompt: "hi" });
      expect(await result.text).toBe("Hello, port.");
      expect((await result.response).timestamp).toEqual(new Date(5));
      expect(calls).toEqual(["stream:stop:2"]);
    } finally {
      client.close();
      server.close();
    }
  });
});

describe("ctx.runCommand", () => {
  it("is refused for a worker without shell: true", async () => {
    const host = await createHost({
      sandbox: { root: data },
      workers: { sh: { module: fx("shell.js") } },
    });
    try {
      expect(await host.run("sh", "echo hi")).toMatchObject({
        ok: false,
        code: "delegation_refused",
        message: expect.stringMatching(/Shell is not enabled for worker 'sh'/),
      });
    } finally {
      await host.close();
    }
  });
});

describeWithBwrap("ctx.runCommand under bubblewrap", () => {
  it("runs a command over the agent's sandbox for a worker with shell: true", async () => {
    writeTree(data, { project: { "notes.txt": "final notes\nsecond line\n" } });
    const host = await createHost({
      sandbox: { root: data },
      workers: { sh: { module: fx("shell.js"), shell: true, sandbox: { restrict: "/project" } } },
    });
    try {
      const out = (await host.run("sh", "cat project/notes.txt; ls; echo $HOME")) as {
        ok: boolean;
        result: { exitCode: number; stdout: string; confined: boolean };
      };
      expect(out.ok).toBe(true);
      expect(out.result.exitCode).toBe(0);
      expect(out.result.confined).toBe(true);
      // Only the agent's own area is there (secret.txt is outside /project).
      expect(out.result.stdout).toBe("final notes\nsecond line\nproject\n/tmp\n");
    } finally {
      await host.close();
    }
  });
});
