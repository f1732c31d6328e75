/**
 * Checks, after bubblewrap has set up a command's mounts and before the
 * command starts, that the kernel's mount table of the sandbox is the plan.
 *
 * bubblewrap resolves mount destinations itself, following links: a command
 * running at the same time in an overlapping writable area could swap a
 * folder on a destination's path for a link between mountbox's checks and
 * bubblewrap's mount, so a read-only bind would land elsewhere (and the spot
 * it should cover would show the writable folder underneath). The mount
 * table (`/proc/<pid>/mountinfo` of the sandbox) says where every mount
 * really is and what it shows: each planned mount must be on top at its
 * planned path, from its planned source (device and path in the file
 * system, as the pinned descriptor has them), with the planned access, and
 * a planned source must not show up at a place the plan does not have.
 */
import { readFileSync, readlinkSync } from "node:fs";
import { type BindPlan, toWorkspacePath, WORKSPACE } from "./bind-plan.js";

/** One mount the sandbox must have. */
export interface ExpectedMount {
  /** Path inside the sandbox (`/workspace/…`). */
  mountpoint: string;
  readonly: boolean;
  /** `bind`: a host folder or file; `tmpfs`: a folder mask; `file-mask`: `/dev/null` over a file. */
  kind: "bind" | "tmpfs" | "file-mask";
  /** `major:minor root` of a bind's source, as mountinfo shows it (undefined: unknown). */
  source?: string;
}

/** The parts of a mountinfo line used here. */
interface MountLine {
  mountpoint: string;
  source: string;
  readonly: boolean;
  fstype: string;
}

/**
 * What the sandbox's mount table must show for `plan`, with `fds` the
 * pinned bind descriptors (same index as `plan.steps`, numbers of this
 * process). Reads this process's own mount table once.
 */
export function expectMounts(
  plan: BindPlan,
  fds: readonly (number | undefined)[],
): ExpectedMount[] {
  let host: Map<string, { line: MountLine; root: string; majmin: string }> | undefined;
  const out: ExpectedMount[] = [];
  plan.steps.forEach((step, i) => {
    const mountpoint = toWorkspacePath(step.virtual);
    if (step.kind === "mask") {
      out.push({ mountpoint, readonly: true, kind: step.file ? "file-mask" : "tmpfs" });
      return;
    }
    const fd = fds[i];
    let source: string | undefined;
    if (fd !== undefined) {
      host ??= readHostMounts();
      source = sourceOf(fd, host);
    }
    out.push({ mountpoint, readonly: !step.writable, kind: "bind", source });
  });
  return out;
}

/**
 * Why the sandbox's mount table (`mountinfo` text) is not the plan, or
 * `undefined` if it is. The reason names sandbox paths only (for tests).
 */
export function checkMounts(
  mountinfo: string,
  expected: readonly ExpectedMount[],
  hostMountinfo?: string,
): string | undefined {
  const lines = parseMountinfo(mountinfo);
  const top = new Map<string, MountLine>();
  for (const l of lines) top.set(l.mountpoint, l);
  for (const e of expected) {
    const l = top.get(e.mountpoint);
    if (l === undefined) return `nothing is mounted at ${e.mountpoint}`;
    if (l.readonly !== e.readonly)
      return `${e.mountpoint} is ${l.readonly ? "read-only" : "writable"}`;
    if (e.kind === "tmpfs" && l.fstype !== "tmpfs") return `${e.mountpoint} is not its mask`;
    if (e.kind === "bind" && e.source !== undefined && l.source !== e.source)
      return `${e.mountpoint} shows another folder`;
  }
  // A planned source at a place the plan does not have (under /workspace; a
  // bind landing outside it leaves its planned place without it, above).
  // Host mounts of the same folder may come along inside a recursive bind.
  const planned = new Map<string, Set<string>>();
  for (const e of expected) {
    if (e.source === undefined) continue;
    const places = planned.get(e.source) ?? new Set<string>();
    places.add(e.mountpoint);
    planned.set(e.source, places);
  }
  if (planned.size === 0) return undefined;
  const extra = new Map<string, number>();
  for (const l of lines) {
    const places = planned.get(l.source);
    if (places === undefined || places.has(l.mountpoint)) continue;
    if (l.mountpoint !== WORKSPACE && !l.mountpoint.startsWith(`${WORKSPACE}/`)) continue;
    extra.set(l.source, (extra.get(l.source) ?? 0) + 1);
  }
  if (extra.size === 0) return undefined;
  const hostCount = new Map<string, number>();
  for (const l of parseMountinfo(hostMountinfo ?? readText("/proc/self/mountinfo")))
    hostCount.set(l.source, (hostCount.get(l.source) ?? 0) + 1);
  for (const [source, n] of extra)
    if (n > (hostCount.get(source) ?? 0))
      return "a planned folder is mounted at an unplanned place";
  return undefined;
}

/** Parses mountinfo text (escapes undone). */
export function parseMountinfo(text: string): MountLine[] {
  const out: MountLine[] = [];
  for (const line of text.split("\n")) {
    if (line === "") continue;
    const f = line.split(" ");
    const dash = f.indexOf("-", 6);
    if (f.length < 10 || dash < 0) continue;
    out.push({
      mountpoint: unescapeMountinfo(f[4]!),
      source: `${f[2]} ${unescapeMountinfo(f[3]!)}`,
      readonly: f[5]!.split(",").includes("ro"),
      fstype: f[dash + 1] ?? "",
    });
  }
  return out;
}

/** Host mounts by mount id. */
function readHostMounts(): Map<string, { line: MountLine; root: string; majmin: string }> {
  const map = new Map<string, { line: MountLine; root: string; majmin: string }>();
  const text = readText("/proc/self/mountinfo");
  const parsed = parseMountinfo(text);
  let i = 0;
  for (const line of text.split("\n")) {
    if (line === "") continue;
    const f = line.split(" ");
    if (f.length < 10 || f.indexOf("-", 6) < 0) continue;
    map.set(f[0]!, { line: parsed[i]!, root: unescapeMountinfo(f[3]!), majmin: f[2]! });
    i++;
  }
  return map;
}

/**
 * `major:minor root` that a bind of descriptor `fd` shows in mountinfo: the
 * device of the mount the descriptor is on, and its path inside that file
 * system (the host mount's root plus the descriptor's path below its
 * mount point). `undefined` if it cannot be told.
 */
function sourceOf(
  fd: number,
  host: Map<string, { line: MountLine; root: string; majmin: string }>,
): string | undefined {
  const info = readText(`/proc/self/fdinfo/${fd}`);
  const id = /^mnt_id:\s*(\d+)/m.exec(info)?.[1];
  if (id === undefined) return undefined;
  const m = host.get(id);
  if (m === undefined) return undefined;
  let path: string;
  try {
    path = readlinkSync(`/proc/self/fd/${fd}`);
  } catch {
    return undefined;
  }
  const mp = m.line.mountpoint;
  let below: string;
  if (mp === "/") below = path;
  else if (path === mp) below = "";
  else if (path.startsWith(`${mp}/`)) below = path.slice(mp.length);
  else return undefined;
  const root = m.root === "/" ? (below === "" ? "/" : below) : m.root + below;
  return `${m.majmin} ${root}`;
}

function unescapeMountinfo(s: string): string {
  return s.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(Number.parseInt(o, 8)));
}

function readText(path: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return "";
  }
}
