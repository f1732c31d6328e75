/**
 * `mountbox run`'s live view on a terminal, drawn with Ink: the tree of
 * agents (worker, sandbox, current operation, counts, status, time), the
 * last refusals and log lines, and the approval waiting for an answer — `o`
 * once, `s` for the session, `d` deny, or arrows and Enter. The view reads a
 * {@link RunState}, which tells it of changes at most ~10 times a second;
 * Ink's own frame limit is set to the same.
 */
import { Box, render, Text, useInput, useStdout } from "ink";
import { useEffect, useState } from "react";
import type { ApprovalDecision } from "../approvals/approval-types.js";
import type { AgentRow, PendingApproval, RunState } from "./run-state.js";

/** The choices of an approval prompt, in the order the arrows walk them. */
const CHOICES: { key: string; decision: ApprovalDecision; label: string }[] = [
  { key: "o", decision: "once", label: "once" },
  { key: "s", decision: "session", label: "session" },
  { key: "d", decision: "deny", label: "deny" },
];

/**
 * What a `session` answer covers, as the host applies it: the folder of
 * the file (the folder itself for a listing, a search or an expansion), and
 * everything below it in the same mount, for the rest of the agent's run.
 */
function sessionScope(r: PendingApproval["request"]): string {
  const path = r.path.replace(/ \(\u2192 .*\)$/, "");
  // A listing, a search, an expansion, an MCP tool: the thing itself.
  if (r.operation === "expand" || r.operation === "mcp" || r.via !== undefined) return path;
  const cut = path.lastIndexOf("/");
  return cut <= 0 ? "/" : path.slice(0, cut);
}

/** Redraws per second, at most (Ink's throttle; the state's is the same). */
const MAX_FPS = 10;

/** `3.2 s`, `1 m 05 s`. */
function formatTime(ms: number): string {
  const s = Math.max(0, ms) / 1000;
  if (s < 60) return `${s.toFixed(1)} s`;
  return `${Math.floor(s / 60)} m ${String(Math.floor(s % 60)).padStart(2, "0")} s`;
}

function statusOf(a: AgentRow, now: number): { mark: string; color: string; text: string } {
  const time = formatTime((a.endedAt ?? now) - a.startedAt);
  if (a.status === "done") return { mark: "✔", color: "green", text: `done ${time}` };
  if (a.status === "failed")
    return {
      mark: "✖",
      color: "red",
      text: `${a.reason === "aborted" ? "stopped" : a.reason} ${time}`,
    };
  if (a.status === "waiting") return { mark: "?", color: "yellow", text: `approval… ${time}` };
  return { mark: "▶", color: "cyan", text: `running ${time}` };
}

/** The agents in tree order: each one's callees under it, in start order. */
function orderTree(agents: Map<string, AgentRow>): AgentRow[] {
  const children = new Map<string | undefined, AgentRow[]>();
  for (const a of agents.values()) {
    const key = a.parentId !== undefined && agents.has(a.parentId) ? a.parentId : undefined;
    children.set(key, [...(children.get(key) ?? []), a]);
  }
  const out: AgentRow[] = [];
  const walk = (id: string | undefined, depth: number) => {
    for (const a of children.get(id) ?? []) {
      out.push({ ...a, depth });
      walk(a.id, depth + 1);
    }
  };
  walk(undefined, 0);
  return out;
}

/** At most `room` rows, in tree order: running agents first, then the last to end. */
function pickRows(all: AgentRow[], room: number): AgentRow[] {
  if (all.length <= room) return all;
  const live = all.filter((a) => a.endedAt === undefined);
  const ended = all
    .filter((a) => a.endedAt !== undefined)
    .sort((a, b) => (b.endedAt ?? 0) - (a.endedAt ?? 0));
  const keep = new Set([...live, ...ended].slice(0, room).map((a) => a.id));
  return all.filter((a) => keep.has(a.id));
}

function AgentLine({ a, now }: { a: AgentRow; now: number }) {
  const s = statusOf(a, now);
  const counts = `${a.operations} ops${a.denials > 0 ? ` · ${a.denials} refused` : ""}${a.modelSteps > 0 ? ` · ${a.modelSteps} steps ${a.tokens} tok` : ""}`;
  // Every cell is one line, cut to fit: a line wider than the terminal
  // would wrap, and the next redraw would not erase all of it.
  return (
    <Box>
      <Box width={20} flexShrink={1} marginRight={1}>
        <Text wrap="truncate-end">
          {"  ".repeat(a.depth)}
          <Text color={s.color}>{s.mark}</Text> {a.worker}
        </Text>
      </Box>
      <Box width={20} flexShrink={2} marginRight={1}>
        <Text dimColor wrap="truncate-end">
          {a.access}
        </Text>
      </Box>
      <Box flexGrow={1} flexShrink={3} flexBasis={0} marginRight={1}>
        <Text wrap="truncate-middle">{a.current}</Text>
      </Box>
      <Box width={20} flexShrink={2} justifyContent="flex-end">
        <Text color={a.denials > 0 ? "red" : undefined} wrap="truncate-end">
          {counts}
        </Text>
      </Box>
      <Box width={16} flexShrink={1} marginLeft={1} justifyContent="flex-end">
        <Text color={s.color} wrap="truncate-end">
          {s.text}
        </Text>
      </Box>
    </Box>
  );
}

function ApprovalPrompt({ p, selected }: { p: PendingApproval; selected: number }) {
  const r = p.request;
  const access = r.access === undefined ? "" : ` (${r.access})`;
  return (
    <Box flexDirection="column" borderStyle="round" borderColor="yellow" paddingX={1}>
      <Text>
        <Text bold>{r.chain.join(" → ")}</Text> asks to <Text bold>{r.operation}</Text>
        {access} <Text color="yellow">{r.displayPath ?? r.path}</Text>
      </Text>
      {r.mcp !== undefined && (
        <Text dimColor wrap="truncate-end">
          arguments: {r.mcp.arguments}
        </Text>
      )}
      <Box>
        {CHOICES.map((c, i) => (
          <Box key={c.key} marginRight={2}>
            <Text inverse={i === selected}>
              [{c.key}] {c.label}
            </Text>
          </Box>
        ))}
      </Box>
      <Text dimColor wrap="truncate-middle">
        session: every {r.operation} under {sessionScope(r)} by {r.worker}, until its run ends
      </Text>
    </Box>
  );
}

function LiveRun({ state, onInterrupt }: { state: RunState; onInterrupt: () => void }) {
  const { stdout } = useStdout();
  const [, setVersion] = useState(0);
  const [selected, setSelected] = useState(0);
  useEffect(() => state.subscribe(() => setVersion((v) => v + 1)), [state]);
  const pending = state.approvals[0];
  useInput((input, key) => {
    if (key.ctrl && input === "c") {
      onInterrupt();
      return;
    }
    if (pending === undefined) return;
    if (key.leftArrow || key.upArrow) setSelected((s) => (s + CHOICES.length - 1) % CHOICES.length);
    else if (key.rightArrow || key.downArrow || key.tab)
      setSelected((s) => (s + 1) % CHOICES.length);
    else if (key.return) {
      pending.answer((CHOICES[selected] ?? CHOICES[0]!).decision);
      setSelected(0);
    } else {
      const choice = CHOICES.find((c) => c.key === input.toLowerCase());
      if (choice !== undefined) {
        pending.answer(choice.decision);
        setSelected(0);
      }
    }
  });
  const now = Date.now();
  const all = orderTree(state.agents);
  // As many rows as the terminal has room for: every agent still running,
  // then those that ended last; the rest are counted.
  const room = Math.max(3, (stdout.rows || 24) - 10 - state.notes.length - (pending ? 5 : 0));
  const agents = pickRows(all, room);
  // One column short of the terminal: a line that fills the last column
  // makes some terminals wrap it.
  const columns = Math.max(40, (stdout.columns || 80) - 1);
  return (
    <Box flexDirection="column" width={columns}>
      <Text wrap="truncate-end">
        <Text bold>mountbox run</Text> {state.title} ·{" "}
        {formatTime((state.endedAt ?? now) - state.startedAt)} · {state.agents.size} agent
        {state.agents.size === 1 ? "" : "s"}
        {state.approvals.length > 1 ? ` · ${state.approvals.length} approvals waiting` : ""}
      </Text>
      {agents.map((a) => (
        <AgentLine key={a.id} a={a} now={now} />
      ))}
      {all.length > agents.length && (
        <Text dimColor>
          {"  "}… and {all.length - agents.length} more that ended
        </Text>
      )}
      {state.notes.length > 0 && (
        <Box flexDirection="column" marginTop={1}>
          {state.notes.map((n, i) => (
            <Text
              // biome-ignore lint/suspicious/noArrayIndexKey: lines scroll; their place is their identity
              key={i}
              wrap="truncate-end"
              color={
                n.kind === "denial" || n.kind === "failure"
                  ? "red"
                  : n.kind === "warning"
                    ? "yellow"
                    : undefined
              }
              dimColor={n.kind === "log"}
            >
              {n.kind === "denial" || n.kind === "failure"
                ? "✖ "
                : n.kind === "warning"
                  ? "! "
                  : "  "}
              {n.text}
            </Text>
          ))}
        </Box>
      )}
      {pending !== undefined && <ApprovalPrompt p={pending} selected={selected} />}
    </Box>
  );
}

/** A live view drawing on the terminal; `close` draws the last frame and lets go of it. */
export interface LiveView {
  close(): Promise<void>;
}

/**
 * Draws `state` on the terminal until `close`. Ctrl-C (the terminal is in
 * raw mode, so it arrives as a key) calls `onInterrupt`.
 */
export function startLiveView(
  state: RunState,
  terminal: { stdin: NodeJS.ReadStream; stdout: NodeJS.WriteStream },
  onInterrupt: () => void,
): LiveView {
  const ink = render(<LiveRun state={state} onInterrupt={onInterrupt} />, {
    stdin: terminal.stdin,
    stdout: terminal.stdout,
    exitOnCtrlC: false,
    patchConsole: false,
    maxFps: MAX_FPS,
  });
  // The running clocks move once a second when nothing else happens.
  const clock = setInterval(() => state.tick(), 1000);
  return {
    async close() {
      clearInterval(clock);
      state.end();
      ink.rerender(<LiveRun state={state} onInterrupt={onInterrupt} />);
      ink.unmount();
      await ink.waitUntilExit();
    },
  };
}
