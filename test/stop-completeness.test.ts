/**
 * Issue 26, findings 2 and 3: what a stop (an abort, a deadline,
 * `host.close()`) does to an operation in flight, on real hosts and real
 * threads. A stopped operation either does not happen or its stop waits
 * until it has finished; either way its event and its audit line say which,
 * and both are in before the run rejects and before `close()` resolves.
 * A shell command killed by `close()` and an approval pending at `close()`
 * get their lines too.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHost as createBuiltHost } from "../dist/src/index.js";
import type { Host, HostEvent, HostOptions } from "../src/index.js";
import { assertBuilt, fixture } from "./conformance/thread.js";
import { describeWithBwrap } from "./helpers/bwrap.js";
import { makeTempDir, removeDir } from "./helpers/tree.js";

const createHost = createBuiltHost as unknown as (o: HostOptions) => Promise<Host>;
const steps = fixture("stop/steps.js");

type Line = Record<string, unknown> & { type: string; op: string; outcome: string };

let base: string;
beforeAll(() => {
  assertBuilt();
  base = makeTempDir();
});
afterAll(() => removeDir(base));

/** A folder of `dirs` × `files` small files: big enough that checking it takes a while. */
function makeBigTree(root: string, dirs = 12, files = 1000): void {
  for (let d = 0; d < dirs; d++) {
    const dir = join(root, `d${d}`);
    mkdirSync(dir, { recursive: true });
    for (let f = 0; f < files; f++) writeFileSync(join(dir, `f${f}.txt`), "x");
  }
}

function readAudit(file: string): Line[] {
  const text = readFileSync(file, "utf8");
  expect(text === "" || text.endsWith("\n")).toBe(true);
  return text
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => JSON.parse(l) as Line);
}

/** Resolves as soon as `path` exists (polled: the host's loop keeps turning meanwhile). */
async function waitFor(path: string): Promise<void> {
  while (!existsSync(path)) await sleep(1);
}

/**
 * One host over `base/<name>` (mounted at `/w`, writable), with an audit
 * log and every event kept.
 */
async function startHost(name: string, extra: Partial<HostOptions> = {}) {
  const dir = join(base, name);
  mkdirSync(join(dir, "w"), { recursive: true });
  const events: HostEvent[] = [];
  const host = await createHost({
    sandbox: { paths: { w: { root: `${name}/w`, mode: "rw" } } },
    basePath: base,
    workers: { main: { module: steps } },
    auditLog: `${name}/audit.jsonl`,
    onEvent: (e) => events.push(e),
    ...extra,
  });
  return { host, dir, w: join(dir, "w"), events, audit: join(dir, "audit.jsonl") };
}

/**
 * Checks that the operation `op` is reported exactly once, by event and by
 * audit line, and that the report matches what the file system shows.
 */
function expectReported(events: HostEvent[], lines: Line[], op: string, done: boolean): void {
  const ev = events.filter((e) => e.type === "operation" && e.op === op);
  expect(ev).toHaveLength(1);
  expect(ev[0]).toMatchObject(done ? { ok: true } : { ok: false, aborted: true });
  const ln = lines.filter((l) => l.type === "operation" && l.op === op);
  expect(ln).toHaveLength(1);
  expect(ln[0]!.outcome).toBe(done ? "ok" : "aborted");
}

describe("an operation in flight when its agent stops (issue 26, finding 2)", () => {
  for (const how of ["abort", "close"] as const) {
    it(`a move of a big tree stopped by ${how === "abort" ? "an abort" : "host.close()"} happens or not, and says which, before the stop returns`, async () => {
      const { host, w, events, audit } = await startHost(`move-${how}`);
      makeBigTree(join(w, "big"));
      const ctl = new AbortController();
      // The move makes the destination's folders once the source is
      // checked, then checks the whole destination: that is mid-way.
      const run = host.run(
        "main",
        { steps: [{ op: "move", args: ["/w/big", "/w/new/moved"] }] },
        { signal: ctl.signal },
      );
      const settled = run.then(
        () => "resolved",
        () => "rejected",
      );
      await waitFor(join(w, "new"));
      if (how === "abort") ctl.abort();
      const closing = how === "close" ? host.close() : undefined;
      expect(await settled).toBe("rejected");
      await (closing ?? host.close());
      const moved = existsSync(join(w, "new", "moved"));
      expect(existsSync(join(w, "big"))).toBe(!moved);
      expectReported(events, readAudit(audit), "move", moved);
      // Nothing happens after the stop returned: the tree stays where it is.
      await sleep(300);
      expect(existsSync(join(w, "new", "moved"))).toBe(moved);
      expect(existsSync(join(w, "big"))).toBe(!moved);
    });
  }

  it("a write into folders that did not exist yet, stopped by an abort, is done and reported before the run rejects", async () => {
    const { host, w, events, audit } = await startHost("deep-write");
    const levels = Array.from({ length: 300 }, (_, i) => `l${i}`).join("/");
    const ctl = new AbortController();
    const run = host.run(
      "main",
      { steps: [{ op: "writeFile", args: [`/w/deep/${levels}/f.txt`, "written"] }] },
      { signal: ctl.signal },
    );
    await waitFor(join(w, "deep"));
    ctl.abort();
    await expect(run).rejects.toThrow(/aborted/);
    // The run has rejected: the write is over, and reported.
    const file = join(w, "deep", ...levels.split("/"), "f.txt");
    const written = existsSync(file);
    const countBefore = readFileSync(audit, "utf8");
    await host.close();
    expect(readFileSync(audit, "utf8")).toBe(countBefore);
    expectReported(events, readAudit(audit), "writeFile", written);
    await sleep(300);
    expect(existsSync(file)).toBe(written);
  });
});

describe("a delegation refused at a limit (issue 26, also seen)", () => {
  it("names the limit to raise, with the current values of both", async () => {
    const chain = fixture("host/chain.js");
    const { host } = await startHost("limits", {
      workers: { chain: { module: chain, delegates: ["chain"] } },
      maxDepth: 8,
      maxAgents: 2,
      maxThreads: 3,
    });
    try {
      const err = await host.run("chain", { route: Array(3).fill("chain") }).then(
        () => undefined,
        (e: Error) => e,
      );
      expect(err?.message).toContain("maxThreads is 3");
      expect(err?.message).toContain("raise maxThreads");
      expect(err?.message).toContain("maxAgents is 2");
    } finally {
      await host.close();
    }
  });
});

describe("close() and the audit log (issue 26, finding 3)", () => {
  it("an approval pending at close() gets its decision line (aborted), and its operation one", async () => {
    let asked!: () => void;
    const wasAsked = new Promise<void>((r) => {
      asked = r;
    });
    const { host, audit, events } = await startHost("pending", {
      sandbox: { paths: { w: { root: "pending/w", mode: "rw", writeApproval: true } } },
      // Never answers: close() must not wait for it.
      onApproval: () => {
        asked();
        return new Promise(() => {});
      },
    });
    const run = host.run("main", { steps: [{ op: "writeFile", args: ["/w/a.txt", "x"] }] });
    const settled = run.then(
      () => "resolved",
      () => "rejected",
    );
    await wasAsked;
    await host.close();
    expect(await settled).toBe("rejected");
    const lines = readAudit(audit);
    expect(lines.filter((l) => l.type.startsWith("approval"))).toMatchObject([
      { type: "approval_request", op: "write", path: "/w/a.txt", outcome: "asked" },
      { type: "approval_decision", op: "write", path: "/w/a.txt", outcome: "aborted" },
    ]);
    expectReported(events, lines, "writeFile", false);
    expect(existsSync(join(base, "pending", "w", "a.txt"))).toBe(false);
  });
});

describeWithBwrap("close() and a shell command (issue 26, finding 3)", () => {
  it("a command killed by close() has its audit line, saying it was aborted", async () => {
    const { host, w, audit } = await startHost("command", {
      workers: { main: { module: steps, shell: true } },
    });
    const run = host.run("main", {
      steps: [{ op: "runCommand", args: ["echo done > /workspace/w/out.txt; sleep 60"] }],
    });
    const settled = run.then(
      () => "resolved",
      () => "rejected",
    );
    await waitFor(join(w, "out.txt"));
    await host.close();
    expect(await settled).toBe("rejected");
    const lines = readAudit(audit).filter((l) => l.op === "runCommand");
    expect(lines).toMatchObject([{ type: "operation", op: "runCommand", outcome: "aborted" }]);
  });
});
