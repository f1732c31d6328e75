/**
 * Approvals for in-process tools (issue 13): `createToolDefinitions(sandbox,
 * { onApproval })` asks before each tool call that touches a path with
 * `read_approval` / `write_approval`, by the same rules as the host's port
 * (one session memory per set of tools). Loaded only when `onApproval` is
 * given, so a thread's tool layer never imports it: in a thread the host
 * decides.
 */

import { AgentGate } from "../approvals/agent-gate.js";
import type { OnApproval } from "../approvals/approval-types.js";
import { toolTargets } from "../approvals/gate-targets.js";
import { configError } from "../errors/index.js";
import { Sandbox } from "../sandbox/sandbox.js";
import { formatError } from "./format.js";
import { GIT_TOOL_NAMES, type ToolDefinition, type ToolSandbox } from "./types.js";

/** Who asks, as the approver sees it, for in-process tools. */
const IN_PROCESS = "in-process";

/**
 * `defs` with each `execute` asking `onApproval` first; a denial is the
 * tool's usual error text. The tool name in a request is the tool's own.
 * @throws ConfigError when `sandbox` is not an in-process `Sandbox`
 */
export function withApprovals(
  defs: ToolDefinition[],
  sandbox: ToolSandbox,
  onApproval: OnApproval,
  build: (sb: ToolSandbox) => ToolDefinition[],
): ToolDefinition[] {
  if (typeof onApproval !== "function")
    throw configError([{ path: ["onApproval"], message: "expected a function" }], "tool options");
  if (!(sandbox instanceof Sandbox))
    throw configError(
      [
        {
          path: ["onApproval"],
          message:
            "needs an in-process Sandbox; in an agent thread the host asks (createHost({ onApproval }))",
        },
      ],
      "tool options",
    );
  const gate = new AgentGate({
    agentId: IN_PROCESS,
    worker: IN_PROCESS,
    chain: [IN_PROCESS],
    sandbox,
    onApproval,
    expansion: undefined,
    audit: undefined,
    // The tools run on the sandbox they were made with: a search that could
    // follow a link into a flagged area outside its folder asks for it.
    linksOut: "ask",
  });
  // The tools over each sandbox a call was confined to (cached with it: the
  // gate caches those per approval state, so the common call builds none).
  const over = new WeakMap<Sandbox, Map<string, ToolDefinition>>([
    [sandbox, new Map(defs.map((d) => [d.name, d]))],
  ]);
  const toolFor = (sb: Sandbox, name: string): ToolDefinition | undefined => {
    let byName = over.get(sb);
    if (byName === undefined) {
      byName = new Map(build(sb).map((d) => [d.name, d]));
      over.set(sb, byName);
    }
    return byName.get(name);
  };
  return defs.map((def) => ({
    ...def,
    async execute(args, ctx) {
      const parsed = def.inputSchema.safeParse(args ?? {});
      // Invalid arguments: the tool itself explains them, and runs nothing.
      if (!parsed.success) return def.execute(args, ctx);
      const input = parsed.data as Record<string, unknown>;
      let run: Sandbox;
      try {
        // Git reads (and a commit writes) the whole repository, as a
        // command would: it asks as a shell command does.
        run =
          def.name === "shell" || (GIT_TOOL_NAMES as readonly string[]).includes(def.name)
            ? await gate.checkShell(def.name)
            : await gate.check(toolTargets(def.name, input), def.name);
      } catch (err) {
        const path = typeof input.path === "string" ? input.path : undefined;
        return formatError(def.name, path, err);
      }
      // The call runs confined to what was approved for it: a link swapped
      // after the check leads nowhere it was not approved for.
      return (toolFor(run, def.name) ?? def).execute(args, ctx);
    },
  }));
}
