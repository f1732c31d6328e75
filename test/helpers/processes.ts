/**
 * The processes a test left behind: every descendant of this process, read
 * from `/proc` (agent processes run under bubblewrap, in pid namespaces the
 * host can see into).
 */
import { readdirSync, readFileSync } from "node:fs";

/** One process: its pid and command line. */
export interface ProcInfo {
  pid: number;
  cmd: string;
}

/** Every live descendant of `root` (this process by default), zombies excluded. */
export function listDescendants(root = process.pid): ProcInfo[] {
  const children = new Map<number, number[]>();
  const cmds = new Map<number, string>();
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      // Fields after the command (which may hold spaces and parentheses).
      const rest = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (rest[0] === "Z") continue;
      const ppid = Number(rest[1]);
      const list = children.get(ppid) ?? [];
      list.push(Number(name));
      children.set(ppid, list);
      cmds.set(
        Number(name),
        readFileSync(`/proc/${name}/cmdline`, "utf8").split("\0").join(" ").trim(),
      );
    } catch {
      // gone meanwhile
    }
  }
  const out: ProcInfo[] = [];
  const queue = [...(children.get(root) ?? [])];
  while (queue.length > 0) {
    const pid = queue.shift()!;
    out.push({ pid, cmd: cmds.get(pid) ?? "" });
    queue.push(...(children.get(pid) ?? []));
  }
  return out;
}

/** Agent processes among `procs` (their Node runs mountbox's process entry). */
export function agentProcesses(procs: ProcInfo[]): ProcInfo[] {
  return procs.filter((p) => p.cmd.includes("process-entry.js") || p.cmd.includes("bwrap"));
}

/** Waits (up to `ms`) until no agent process descends from this one; returns those left. */
export async function waitForNoAgentProcesses(ms = 5000): Promise<ProcInfo[]> {
  const until = Date.now() + ms;
  for (;;) {
    const left = agentProcesses(listDescendants());
    if (left.length === 0 || Date.now() > until) return left;
    await new Promise((r) => setTimeout(r, 50));
  }
}
