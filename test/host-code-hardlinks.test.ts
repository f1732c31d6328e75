/**
 * Issue 18 (second review, findings 1–2): the host's code hard-linked into
 * a writable folder. With real pnpm, an app installs the packed tarball and
 * a separate project (`site`, the sandbox) installs `yaml` from the same
 * store: pnpm hard-links both copies of every file to the store, so a
 * confined command appending to `site`'s copy would change the file the
 * host runs. The command is refused before it runs, unless the caller opts
 * out; a sandbox on another file system is not refused.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { assertBuilt } from "./conformance/thread.js";
import { describeWithBwrap } from "./helpers/bwrap.js";
import { pnpmAdd } from "./helpers/clients.js";
import { packTarball, runNode, writeFiles } from "./helpers/packed.js";
import { makeTempDir, removeDir } from "./helpers/tree.js";

// The host: a sandbox over `root` (writable), one command appending to `file`.
const HOST = `
import { createSandbox, runCommand } from "mountbox";
const [root, file, optOut] = process.argv.slice(2);
const sandbox = createSandbox({ root });
try {
  const r = await runCommand(sandbox, "printf '\\\\n//changed\\\\n' >> " + JSON.stringify(file), {
    allowHardLinkedHostCode: optOut === "1",
  });
  console.log(JSON.stringify({ ran: true, exitCode: r.exitCode, stderr: r.stderr }));
} catch (e) {
  console.log(JSON.stringify({ ran: false, code: e.code, message: e.message }));
}
`;

interface Outcome {
  ran: boolean;
  exitCode?: number;
  code?: string;
  message?: string;
}

describeWithBwrap("the host's code hard-linked into a sandbox (real pnpm store)", () => {
  let base: string;
  let app: string;
  let site: string;
  let hostFile: string;
  let siteFile: string;
  let original: string;

  beforeAll(() => {
    assertBuilt();
    base = makeTempDir("mb-hardlinks-");
    const store = join(base, "store");
    app = join(base, "app");
    site = join(base, "site");
    pnpmAdd(app, store, [packTarball(join(base, "pack"))]);
    const yaml = readdirSync(join(app, "node_modules", ".pnpm")).find((n) => /^yaml@/.test(n));
    if (yaml === undefined) throw new Error("pnpm installed no yaml for mountbox");
    pnpmAdd(site, store, [yaml]);
    const rel = join("node_modules", ".pnpm", yaml, "node_modules", "yaml", "package.json");
    hostFile = join(app, rel);
    siteFile = rel;
    original = readFileSync(hostFile, "utf8");
    writeFiles(app, { "host.mjs": HOST });
  }, 150_000);

  afterAll(() => removeDir(base));

  const run = (root: string, file: string, optOut: boolean): Outcome => {
    const r = runNode(join(app, "host.mjs"), base, [root, file, optOut ? "1" : "0"]);
    expect(r.stderr).toBe("");
    return JSON.parse(r.stdout.trim().split("\n").at(-1)!) as Outcome;
  };

  it("pnpm made the host's file and the sandbox's one inode", () => {
    expect(statSync(hostFile).ino).toBe(statSync(join(site, siteFile)).ino);
    expect(statSync(hostFile).nlink).toBeGreaterThanOrEqual(3);
  });

  it("a command that could write through the link is refused before it runs", () => {
    const out = run(site, siteFile, false);
    expect(out.ran).toBe(false);
    expect(out.code).toBe("os_sandbox_unavailable");
    expect(out.message).toContain("hard-linked");
    expect(out.message).toContain("package-import-method=copy");
    expect(out.message).toContain("allowHardLinkedHostCode");
    expect(out.message).not.toContain(base);
    expect(readFileSync(hostFile, "utf8")).toBe(original);
  });

  it("with allowHardLinkedHostCode it runs (and the link is real)", () => {
    try {
      const out = run(site, siteFile, true);
      expect(out).toMatchObject({ ran: true, exitCode: 0 });
      expect(readFileSync(hostFile, "utf8")).toBe(`${original}\n//changed\n`);
    } finally {
      // Restore in place, keeping the link (a rename would break it).
      writeFileSync(hostFile, original);
    }
  });

  it("a sandbox on another file system is not refused", () => {
    const other = mkdtempSync("/dev/shm/mb-hardlinks-");
    try {
      writeFiles(other, { "a.txt": "x" });
      expect(statSync(other).dev).not.toBe(statSync(hostFile).dev);
      expect(run(other, "a.txt", false)).toMatchObject({ ran: true, exitCode: 0 });
    } finally {
      rmSync(other, { recursive: true, force: true });
    }
  });
});
