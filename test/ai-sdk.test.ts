/**
 * `mountbox/ai-sdk` in the AI SDK's real `generateText` tool loop, driven by
 * the SDK's own `MockLanguageModelV3`: a model reads a file, is refused an
 * escape and adapts (its next step sees the refusal), edits a file. Run over
 * the in-process `Sandbox` and over `ctx.sandbox` in a real thread. Also:
 * approvals, and the error a host without `ai` gets.
 */
import { execFileSync } from "node:child_process";
import { cpSync, mkdirSync, readFileSync, realpathSync, symlinkSync, writeFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { generateText, stepCountIs } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { afterEach, describe, expect, it } from "vitest";
import { createSandboxTools, MISSING_AI_MESSAGE } from "../src/ai-sdk/index.js";
import type { ToolSandbox } from "../src/index.js";
import { assertBuilt, createSandboxForThreads, startRelay } from "./conformance/thread.js";
import { makeTempDir, removeDir } from "./helpers/tree.js";
import { createToolHost } from "./tools/suite.js";

const REPO = fileURLToPath(new URL("..", import.meta.url));

// The model spec's types, taken from the SDK's own mock model.
type LanguageModelV3CallOptions = Parameters<MockLanguageModelV3["doGenerate"]>[0];
type LanguageModelV3GenerateResult = Awaited<ReturnType<MockLanguageModelV3["doGenerate"]>>;

const USAGE: LanguageModelV3GenerateResult["usage"] = {
  inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 5, text: 5, reasoning: undefined },
};

/** One model turn that calls a tool. */
function callTool(id: string, toolName: string, input: unknown): LanguageModelV3GenerateResult {
  return {
    content: [{ type: "tool-call", toolCallId: id, toolName, input: JSON.stringify(input) }],
    finishReason: { unified: "tool-calls", raw: undefined },
    usage: USAGE,
    warnings: [],
  };
}

/** One model turn that answers with text. */
function answer(text: string): LanguageModelV3GenerateResult {
  return {
    content: [{ type: "text", text }],
    finishReason: { unified: "stop", raw: undefined },
    usage: USAGE,
    warnings: [],
  };
}

/** The text of the last tool result the model was shown. */
function lastToolResult(options: LanguageModelV3CallOptions): string {
  const tool = options.prompt.filter((m) => m.role === "tool").at(-1);
  const part = tool?.content.at(-1);
  if (part?.type !== "tool-result") return "";
  return part.output.type === "text" ? part.output.value : JSON.stringify(part.output);
}

/**
 * A scripted model that behaves like an agent: it reads, tries an escape,
 * and only if it was told the escape is refused does it edit inside its
 * area instead.
 */
function scriptedAgent(): MockLanguageModelV3 {
  return new MockLanguageModelV3({
    doGenerate: async (options) => {
      const step = options.prompt.filter((m) => m.role === "assistant").length;
      const seen = lastToolResult(options);
      if (step === 0) return callTool("c1", "read_file", { path: "/src/a.txt" });
      if (step === 1) return callTool("c2", "read_file", { path: "/../etc/passwd" });
      if (step === 2) {
        if (!seen.startsWith("Error [path_not_in_sandbox]")) return answer("no refusal seen");
        return callTool("c3", "edit_file", {
          path: "/src/a.txt",
          edits: [{ oldText: "world", newText: "mountbox" }],
        });
      }
      return answer(`done: ${seen.split("\n")[0]}`);
    },
  });
}

const setups = {
  "in-process Sandbox": async () => {
    const host = await createToolHost();
    return { sandbox: host.sandboxFor("child") as ToolSandbox, host, stop: async () => {} };
  },
  "ctx.sandbox in a thread": async () => {
    assertBuilt();
    const host = await createToolHost(createSandboxForThreads);
    const relay = startRelay(host.sandboxFor("child"));
    return {
      sandbox: relay.sandbox as unknown as ToolSandbox,
      host,
      stop: async () => {
        await relay.stop();
      },
    };
  },
};

describe.each(Object.keys(setups))("generateText with mountbox tools over %s", (label) => {
  let env: Awaited<ReturnType<(typeof setups)["in-process Sandbox"]>>;
  afterEach(async () => {
    await env.stop();
    await env.host.cleanup();
  });

  it("reads, is refused an escape and adapts, then edits a file", async () => {
    env = await setups[label as keyof typeof setups]();
    const model = scriptedAgent();
    const result = await generateText({
      model,
      tools: await createSandboxTools(env.sandbox),
      prompt: "Replace 'world' in /src/a.txt.",
      stopWhen: stepCountIs(10),
    });

    expect(result.text).toBe("done: Edited '/src/a.txt':");
    expect(result.steps).toHaveLength(4);
    expect(result.steps[0]?.toolResults[0]?.output).toBe("hello\nworld\n");
    // The refusal reached the model as text it could act on.
    expect(result.steps[1]?.toolResults[0]?.output).toMatchInlineSnapshot(`
      "Error [path_not_in_sandbox]: Cannot access '/../etc/passwd': it climbs above the sandbox root '/'.
      Readable paths: /cache, /src"
    `);
    expect(lastToolResult(model.doGenerateCalls[2] as LanguageModelV3CallOptions)).toBe(
      result.steps[1]?.toolResults[0]?.output,
    );
    expect(await readFile(join(env.host.root, "root/src/a.txt"), "utf8")).toBe("hello\nmountbox\n");
    expect(JSON.stringify(result.steps)).not.toContain(env.host.root);

    // The model was offered strict JSON schemas, the write tools included.
    const offered = model.doGenerateCalls[0]?.tools ?? [];
    expect(offered.map((t) => t.name)).toContain("edit_file");
    const read = offered.find((t) => t.name === "read_file");
    expect(read?.type === "function" && read.inputSchema).toMatchObject({
      type: "object",
      required: ["path"],
      additionalProperties: false,
    });
  });
});

describe("createSandboxTools", () => {
  let host: Awaited<ReturnType<typeof createToolHost>>;
  afterEach(() => host.cleanup());

  it("returns a ToolSet of the tool layer's tools, without approvals unless asked", async () => {
    host = await createToolHost();
    const tools = await createSandboxTools(host.sandboxFor("readonly"));
    expect(Object.keys(tools)).toEqual([
      "read_file",
      "read_multiple_files",
      "list_files",
      "grep",
      "get_file_info",
      "list_allowed_paths",
    ]);
    expect(tools.read_file?.needsApproval).toBeUndefined();
    expect(tools.read_file?.description).toContain("Paths are virtual");
    const picked = await createSandboxTools(host.sandboxFor("root"), { tools: ["grep"] });
    expect(Object.keys(picked)).toEqual(["grep"]);
  });

  it("passes needsApproval through, and the SDK stops for approval before writing", async () => {
    host = await createToolHost();
    const tools = await createSandboxTools(host.sandboxFor("root"), {
      needsApproval: { write_file: true },
    });
    expect(tools.write_file?.needsApproval).toBe(true);
    expect(tools.read_file?.needsApproval).toBeUndefined();
    const result = await generateText({
      model: new MockLanguageModelV3({
        doGenerate: [
          callTool("w1", "write_file", { path: "/src/new.txt", content: "x" }),
          answer("unreachable"),
        ],
      }),
      tools,
      prompt: "write",
      stopWhen: stepCountIs(5),
    });
    const request = result.content.find((p) => p.type === "tool-approval-request");
    expect(request?.type === "tool-approval-request" && request.toolCall.toolName).toBe(
      "write_file",
    );
    expect(result.text).toBe("");
    await expect(readFile(join(host.root, "root/src/new.txt"))).rejects.toThrow();
  });

  it("asks a needsApproval function with the tool name and input", async () => {
    host = await createToolHost();
    const asked: unknown[] = [];
    const tools = await createSandboxTools(host.sandboxFor("root"), {
      needsApproval: (name, input) => {
        asked.push([name, input]);
        return name === "delete_file";
      },
    });
    const result = await generateText({
      model: new MockLanguageModelV3({
        doGenerate: [callTool("r1", "read_file", { path: "/src/b.md" }), answer("ok")],
      }),
      tools,
      prompt: "read",
      stopWhen: stepCountIs(5),
    });
    expect(result.text).toBe("ok");
    expect(asked).toEqual([["read_file", { path: "/src/b.md" }]]);
    expect(result.steps[0]?.toolResults[0]?.output).toBe("# B\n");
  });
});

describe("without the ai package", () => {
  let dir: string;
  afterEach(() => removeDir(dir));

  it("mountbox works, and mountbox/ai-sdk says what to install", () => {
    assertBuilt();
    // A real install layout without `ai`: mountbox's built files and its
    // dependencies, linked from this checkout.
    dir = makeTempDir("mountbox-no-ai-");
    const pkgDir = join(dir, "node_modules", "mountbox");
    mkdirSync(join(pkgDir, "dist"), { recursive: true });
    const pkg = JSON.parse(readFileSync(join(REPO, "package.json"), "utf8")) as {
      dependencies: Record<string, string>;
    };
    writeFileSync(join(pkgDir, "package.json"), JSON.stringify(pkg));
    cpSync(join(REPO, "dist/src"), join(pkgDir, "dist/src"), { recursive: true });
    cpSync(join(REPO, "dist/workers"), join(pkgDir, "dist/workers"), { recursive: true });
    for (const dep of Object.keys(pkg.dependencies)) {
      mkdirSync(join(dir, "node_modules", dep, ".."), { recursive: true });
      symlinkSync(realpathSync(join(REPO, "node_modules", dep)), join(dir, "node_modules", dep));
    }
    writeFileSync(
      join(dir, "main.mjs"),
      [
        'import { createSandbox } from "mountbox";',
        'import { createSandboxTools } from "mountbox/ai-sdk";',
        'const sb = createSandbox({ root: "." });',
        "console.log(typeof sb.readFile);",
        "await createSandboxTools(sb).then(() => console.log('no error'), (e) => console.log(e.message));",
      ].join("\n"),
    );
    const out = execFileSync(process.execPath, ["main.mjs"], { cwd: dir, encoding: "utf8" });
    expect(out).toBe(`function\n${MISSING_AI_MESSAGE}\n`);
    expect(MISSING_AI_MESSAGE).toMatchInlineSnapshot(
      `"mountbox/ai-sdk needs the Vercel AI SDK, an optional peer dependency: install it with \`npm install ai@^6\` (any version >= 6)."`,
    );
  });
});
