/**
 * `mountbox run`'s live view in a real terminal (tmux), from the packed
 * package's bin in an app folder: the agent tree, approvals answered by one
 * key (once, session, deny) and by arrows + Enter while other agents keep
 * running, Ctrl-C (exit 130, nothing left running), at most ~10 redraws a
 * second under a flood of events, and an agent's text that cannot drive
 * the terminal.
 */
import { cpSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, beforeAll, expect, it } from "vitest";
import { assertBuilt } from "./conformance/thread.js";
import { renderScreenSvg } from "./helpers/ansi-svg.js";
import { describeWithBwrap } from "./helpers/bwrap.js";
import { layOut, packAndInstall, writeFiles } from "./helpers/packed.js";
import { listDescendants } from "./helpers/processes.js";
import { describeWithTmux, startTerminal, type Terminal } from "./helpers/terminal.js";
import { makeTempDir, removeDir } from "./helpers/tree.js";

let base: string;
let app: string;
let bin: string;
const open: Terminal[] = [];

const worker = (body: string) =>
  `import { defineWorker } from "mountbox/worker";\nexport default defineWorker(async (input, ctx) => {\n${body}\n});\n`;

beforeAll(() => {
  assertBuilt();
  base = makeTempDir("mountbox-cli-live-");
  const { modules } = packAndInstall(join(base, "pack"));
  app = layOut("npm", base, modules);
  bin = join("node_modules", "mountbox", "dist", "src", "cli", "main.js");
  writeFiles(app, {
    "live/program.yaml": [
      "name: live",
      'sandbox: { root: ".", mounts: [{ source: "./inbox", target: "/inbox", write_approval: true }] }',
      "workers:",
      "  main: { module: ./workers/main.js, delegates: [asker, busy] }",
      "  asker: { module: ./workers/asker.js }",
      "  busy: { module: ./workers/busy.js, sandbox: { restrict: /src, readonly: true } }",
      "  noisy: { module: ./workers/noisy.js }",
      "  flood: { module: ./workers/flood.js, sandbox: { restrict: /src, readonly: true } }",
      "",
    ].join("\n"),
    "live/workers/main.js": worker(
      '  const [asked, busy] = await Promise.all([ctx.delegate("asker", {}), ctx.delegate("busy", {})]);\n  return { asked, busy };',
    ),
    "live/workers/asker.js": worker(
      [
        "  const out = {};",
        '  for (const f of ["a", "b"]) {',
        "    try {",
        // biome-ignore lint/suspicious/noTemplateCurlyInString: the worker's own source text
        "      await ctx.sandbox.writeFile(`/inbox/${f}.md`, f);",
        '      out[f] = "written";',
        "    } catch (e) {",
        "      out[f] = e.code;",
        "    }",
        "  }",
        "  return out;",
      ].join("\n"),
    ),
    "live/workers/busy.js": worker(
      '  for (let i = 0; i < 50; i++) await ctx.sandbox.readFile("/src/a.ts");\n  return "busy done";',
    ),
    "live/workers/noisy.js": worker(
      [
        '  ctx.log("\\x1b]0;pwned\\x07\\x1b[2J\\x1b[Hcleared");',
        "  try {",
        '    await ctx.sandbox.writeFile("/inbox/\\x1b[31mred.md", "x");',
        '    return "written";',
        "  } catch (e) {",
        "    return e.code;",
        "  }",
      ].join("\n"),
    ),
    "live/workers/flood.js": worker(
      [
        "  const end = Date.now() + 2500;",
        "  let n = 0;",
        "  while (Date.now() < end) {",
        '    await Promise.all(Array.from({ length: 32 }, () => ctx.sandbox.readFile("/src/a.ts")));',
        "    n += 32;",
        // biome-ignore lint/suspicious/noTemplateCurlyInString: the worker's own source text
        "    if (n % 640 === 0) ctx.log(`read ${n}`);",
        "  }",
        "  return n;",
      ].join("\n"),
    ),
    "live/src/a.ts": "export const a = 1;\n",
    "live/inbox/.keep": "",
    "stop/program.yaml": [
      "workers:",
      "  main: { module: ./w.js, delegates: [deep] }",
      "  deep: { module: ./w.js, isolation: process }",
      "",
    ].join("\n"),
    "many/program.yaml":
      "workers:\n  main: { module: ./w.js, delegates: [sub] }\n  sub: { module: ./w.js }\n",
    "many/w.js": worker(
      '  if (input?.sub) return 1;\n  for (let i = 0; i < 30; i++) await ctx.delegate("sub", { sub: true });\n  let left;\n  void ctx.sandbox.writeFile("/inbox/x.md", "x").catch(() => {});\n  return "ok";',
    ),
    "stop/w.js": worker(
      '  if (input?.deep !== true) await ctx.delegate("deep", { deep: true });\n  await new Promise((r) => setTimeout(r, 60_000));',
    ),
  });
});
afterEach(() => {
  for (const t of open.splice(0)) t.close();
});
afterAll(() => removeDir(base));

/** `mountbox run …` in a new terminal in the app folder. */
function run(args: string[], cols = 120): Terminal {
  const t = startTerminal([process.execPath, bin, "run", ...args], { cwd: app, dir: base, cols });
  open.push(t);
  return t;
}

const inbox = (f: string) => join(app, "live", "inbox", f);

describeWithTmux("the live view in a real terminal", () => {
  it("draws the agent tree and asks approvals there; 'o' answers once, 'd' denies, while other agents run on", async () => {
    const t = run(["live"]);
    const first = await t.waitFor("asks to write /inbox/a.md");
    expect(first).toContain("main → asker asks to write /inbox/a.md");
    expect(first).toContain("[o] once  [s] session  [d] deny");
    // What `s` would grant, as the host applies it: the file's folder, down.
    expect(first).toContain("session: every write under /inbox by asker, until its run ends");
    // The busy agent does not wait on the prompt.
    const tree = await t.waitFor((s) => /✔ busy\s+\/src r\s.*50 ops\s+done/.test(s));
    expect(tree).toMatch(/^mountbox run live · main · [\d.]+ s · 3 agents$/m);
    expect(tree).toMatch(/▶ main\s+\/ rw\s+delegate busy/);
    expect(tree).toMatch(/\? asker\s+\/ rw\s.*approval…/);
    t.keys("o");
    await t.waitFor("asks to write /inbox/b.md");
    t.keys("d");
    expect(await t.exitCode()).toBe(0);
    const end = t.screen();
    expect(end).toContain("asker: write /inbox/a.md — once");
    expect(end).toContain("asker: write /inbox/b.md — denied");
    expect(end).toMatch(/"a": "written",\s+"b": "approval_denied"/);
    expect(end).toMatch(/3 agents, \d+ operations, 1 denial/);
    expect(end).not.toContain(base);
    expect([existsSync(inbox("a.md")), existsSync(inbox("b.md"))]).toEqual([true, false]);
  });

  it("arrows and Enter pick an answer: 'session' covers the next write too", async () => {
    const t = run(["live"]);
    await t.waitFor("asks to write /inbox/a.md");
    t.keys("Right");
    await t.waitFor(() => /\x1b\[7m\[s\] session/.test(t.screenWithColors()));
    t.keys("Enter");
    expect(await t.exitCode()).toBe(0);
    const end = t.screen();
    expect(end).toContain("asker: write /inbox/a.md — for the session");
    expect(end).not.toContain("asks to write /inbox/b.md");
    expect(end).toMatch(/"a": "written",\s+"b": "written"/);
  });

  it("redraws at most about ten times a second, however many events the agents make", async () => {
    const t = run(["live", "flood", "--approve", "none"]);
    expect(await t.exitCode()).toBe(0);
    const raw = t.output();
    // Each frame is written whole, its header first.
    const frames = raw.split(" live · flood · ").length - 1;
    const ops = Number(/(\d+) operations/.exec(t.screen())?.[1]);
    expect(ops).toBeGreaterThan(2000);
    // ≈ 2.5 s of work and the thread's start: at most 10 a second, and a last frame.
    const seconds = Number(/operations, .*, ([\d.]+) s$/m.exec(t.screen())?.[1]);
    expect(frames).toBeGreaterThan(5);
    expect(frames).toBeLessThanOrEqual(Math.ceil(seconds * 10) + 2);
  });

  it("an agent's log line and path cannot drive the terminal", async () => {
    const t = run(["live", "noisy"]);
    const s = await t.waitFor("asks to write");
    expect(s).toContain("asks to write /inbox/\\u001b[31mred.md");
    t.keys("d");
    expect(await t.exitCode()).toBe(0);
    const raw = t.output();
    expect(raw).not.toContain("\x1b]0;pwned");
    expect(raw).not.toContain("\x1b[31mred");
    expect(t.screen()).toContain("noisy: \\u001b]0;pwned\\u0007\\u001b[2J\\u001b[Hcleared");
  });

  it("shows as many agents as the terminal has room for, counts the rest; drops a prompt nobody waits for", async () => {
    const t = startTerminal([process.execPath, bin, "run", "many"], {
      cwd: app,
      dir: base,
      rows: 20,
    });
    open.push(t);
    expect(await t.exitCode()).toBe(0);
    const s = t.screen();
    expect(s).toMatch(/^mountbox run many · main · [\d.]+ s · 31 agents$/m);
    const shown = s.split("\n").filter((l) => /^\s+✔ sub\s/.test(l)).length;
    expect(shown).toBeGreaterThan(2);
    expect(s).toContain(`… and ${30 - shown} more that ended`);
    // main asked for a write it never awaited, and ended: no prompt is left.
    expect(s).not.toContain("asks to write");
    expect(s).not.toContain("approvals waiting");
  });

  it("draws the README's picture: the review example, in a real terminal", async () => {
    cpSync(fileURLToPath(new URL("../examples/review", import.meta.url)), join(app, "review"), {
      recursive: true,
    });
    const t = startTerminal([process.execPath, bin, "run", "review"], {
      cwd: app,
      dir: base,
      cols: 110,
      rows: 44,
    });
    open.push(t);
    expect(await t.exitCode()).toBe(0);
    const screen = t.screenWithColors();
    expect(t.screen()).toMatch(
      /✔ analyser\s+\/src r\s+writeFile \/src\/checkout\.ts\s+2 ops · 1 refused\s+done/,
    );
    const svg = renderScreenSvg(screen, 110, "mountbox run examples/review: the live view");
    expect(svg).toContain("writeFile /src/checkout.ts refused (path_not_writable)");
    expect(svg).not.toContain(base);
    // MOUNTBOX_WRITE_IMAGES=1 npx vitest run test/cli-live.test.ts updates it.
    if (process.env.MOUNTBOX_WRITE_IMAGES === "1") {
      const dir = fileURLToPath(new URL("../docs/images", import.meta.url));
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, "live-view.svg"), svg);
    }
  });

  describeWithBwrap("Ctrl-C in the live view", () => {
    it("stops every agent (a thread and the process it started), exits 130, leaves nothing running", async () => {
      const t = startTerminal([process.execPath, bin, "run", "stop"], { cwd: app, dir: base });
      open.push(t);
      await t.waitFor((s) => /▶ deep\s.*running/.test(s));
      const shell = t.panePid();
      expect(listDescendants(shell).some((p) => p.cmd.includes("bwrap"))).toBe(true);
      t.keys("C-c");
      expect(await t.exitCode()).toBe(130);
      expect(t.screen()).toContain("mountbox: interrupted; every agent was stopped.");
      expect(t.screen()).toMatch(/✖ deep\s.*stopped/);
      // The pane's shell has become `sleep`: nothing is left under it.
      expect(listDescendants(shell)).toEqual([]);
    });
  });

  it("the audit log it was asked for holds the answers given in the view", async () => {
    const t = run(["live", "--audit", "audit.jsonl"]);
    await t.waitFor("asks to write /inbox/a.md");
    t.keys("s");
    expect(await t.exitCode()).toBe(0);
    const lines = readFileSync(join(app, "audit.jsonl"), "utf8").trim().split("\n");
    const decisions = lines.map((l) => JSON.parse(l)).filter((e) => e.type === "approval_decision");
    expect(decisions.map((d) => [d.path, d.outcome])).toEqual([["/inbox/a.md", "session"]]);
  });
});
