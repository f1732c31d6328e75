/** The tool conformance suite over the in-process `Sandbox`, and `shell` over real bubblewrap. */
import { afterEach, beforeEach, expect, it } from "vitest";
import { createToolDefinitions, runCommand, type Sandbox } from "../src/index.js";
import { describeWithBwrap } from "./helpers/bwrap.js";
import { createToolHost, runToolConformance } from "./tools/suite.js";

runToolConformance("in-process Sandbox", async (variant) => {
  const host = await createToolHost();
  return { sandbox: host.sandboxFor(variant), root: host.root, cleanup: host.cleanup };
});

describeWithBwrap("shell tool over runCommand (bubblewrap)", () => {
  let host: Awaited<ReturnType<typeof createToolHost>>;
  let agent: Sandbox;
  beforeEach(async () => {
    host = await createToolHost();
    agent = host.sandboxFor("child");
  });
  afterEach(() => host.cleanup());

  /** The shell tool of the child sandbox, running commands with mountbox's runCommand. */
  async function shell(args: unknown): Promise<string> {
    const tools = await createToolDefinitions(agent, {
      runCommand: (command, opts) => runCommand(agent, command, opts),
    });
    const tool = tools.find((t) => t.name === "shell");
    if (!tool) throw new Error("no shell tool");
    const out = await tool.execute(args as Record<string, unknown>);
    expect(out).not.toContain(host.root);
    return out;
  }

  it("runs a command in the sandbox's areas and returns exit code and output", async () => {
    expect(await shell({ command: "cat src/a.txt; ls docs 2>/dev/null; echo err >&2" })).toBe(
      "exit code: 0\nstdout:\nhello\nworld\n\nstderr:\nerr\n",
    );
  });

  it("reports a failing command and a refused write with their notes", async () => {
    const out = await shell({ command: "echo x > cache/new.txt" });
    expect(out).toMatch(/^exit code: [1-9]\d*\nstdout:\n\nstderr:\n/);
    expect(out).toContain("note: ");
  });

  it("stops at the timeout", async () => {
    const out = await shell({ command: "sleep 5", timeoutMs: 300 });
    expect(out).toMatch(/^exit code: \d+ \(timed out\)/);
  });
});
