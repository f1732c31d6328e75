/**
 * Issue 19, finding 8: a mount whose source lies inside a writable area of
 * the same configuration. A command renames the source's parent and puts a
 * link in its place; the next `createSandbox` with the same configuration
 * (every `mountbox exec`, every host restart) used to bind whatever the link
 * named — a host secret through a `:ro` mount, an outside folder through a
 * writable one. Now that configuration is refused (a link on the way to a
 * source, inside a writable area). Real bubblewrap makes the swap, as root
 * and as nobody.
 */
import { spawnSync } from "node:child_process";
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, afterEach, beforeEach, describe, expect, test } from "vitest";
import { ConfigError, createSandbox, runCommand } from "../src/index.js";
import { describeWithBwrap, IS_ROOT } from "./helpers/bwrap.js";
import { AS_NOBODY, removeNobodyStage, stageForNobody } from "./helpers/nobody.js";

const DIST = resolve(import.meta.dirname, "../dist/src/index.js");

let dir: string;
let root: string;
let secret: string;
let outside: string;

beforeEach(() => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), "mountbox-ms-")));
  root = join(dir, "root");
  mkdirSync(join(root, "data/ro-src"), { recursive: true });
  mkdirSync(join(root, "data/rw-dst"), { recursive: true });
  writeFileSync(join(root, "data/ro-src/readme.txt"), "public\n");
  // What the attack wants: a host folder outside every area.
  secret = join(dir, "host-secret");
  mkdirSync(join(secret, "ro-src"), { recursive: true });
  writeFileSync(join(secret, "ro-src/key.txt"), "SECRET\n");
  outside = join(dir, "host-outside");
  mkdirSync(join(outside, "rw-dst"), { recursive: true });
});

afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});
afterAll(removeNobodyStage);

/** The swap a command makes: `data` kept aside, a link to a host folder in its place. */
const swapTo = (target: string): string =>
  `mv data data-real && ln -s ${target} data && echo swapped`;

function refusal(config: Parameters<typeof createSandbox>[0]): ConfigError {
  let err: unknown;
  try {
    createSandbox(config);
  } catch (e) {
    err = e;
  }
  expect(err).toBeInstanceOf(ConfigError);
  return err as ConfigError;
}

describeWithBwrap("finding 8: a mount source re-pointed by a command for the next sandbox", () => {
  test("a :ro mount inside the writable root: after the swap the same config is refused, nothing outside is read", async () => {
    const config = { root, mounts: [`${join(root, "data/ro-src")}:/ro:ro`] };
    const sb = createSandbox(config);
    expect((await runCommand(sb, "cat ro/readme.txt")).stdout).toBe("public\n");
    const r = await runCommand(sb, swapTo(secret));
    expect(r.stdout).toBe("swapped\n");
    const err = refusal(config);
    expect(err.message).toMatch(/'\/ro'/);
    expect(err.message).toMatch(
      /a link on the way to the source, at '\/data' inside the writable area '\/'/,
    );
    expect(err.message).toMatch(/real path|read-only/);
    expect(err.message).not.toContain(dir);
  });

  test("a writable mount inside the writable root: after the swap refused, nothing is written outside", async () => {
    const config = { root, mounts: [`${join(root, "data/rw-dst")}:/rw`] };
    const sb = createSandbox(config);
    // The mount's second place holds a guard (its `.git`), so `data` above it
    // is a mount point in the command's namespace (issue 19 review D): the
    // command cannot rename it…
    const r = await runCommand(sb, swapTo(outside));
    expect(r.stdout).toBe("");
    expect(r.stderr).toMatch(/Device or resource busy/);
    // …another program could: the same config is refused then.
    renameSync(join(root, "data"), join(root, "data-real"));
    symlinkSync(outside, join(root, "data"));
    const err = refusal(config);
    expect(err.message).toMatch(/'\/rw'.*a link on the way to the source/);
    expect(readdirSync(join(outside, "rw-dst"))).toEqual([]);
  });

  test("the link as the source itself, and a link a link leads to, are refused too", () => {
    symlinkSync(secret, join(root, "data/alias"));
    expect(
      refusal({ root, mounts: [`${join(root, "data/alias/ro-src")}:/ro:ro`] }).message,
    ).toMatch(/at '\/data\/alias'/);
    // The user's own link outside every area, leading into the writable root
    // and through a planted link there.
    symlinkSync(join(root, "data/alias"), join(dir, "mine"));
    expect(refusal({ root, mounts: [`${join(dir, "mine/ro-src")}:/ro:ro`] }).message).toMatch(
      /at '\/data\/alias'/,
    );
  });

  test("allowed: a source inside the writable root with no link on the way; a link outside every writable area; a read-only root", () => {
    expect(() =>
      createSandbox({ root, mounts: [`${join(root, "data/ro-src")}:/ro:ro`] }),
    ).not.toThrow();
    symlinkSync(secret, join(dir, "my-link"));
    expect(() =>
      createSandbox({ root, mounts: [`${join(dir, "my-link/ro-src")}:/ro:ro`] }),
    ).not.toThrow();
    symlinkSync(secret, join(root, "data/alias"));
    expect(() =>
      createSandbox({
        root,
        readonly: true,
        mounts: [`${join(root, "data/alias/ro-src")}:/ro:ro`],
      }),
    ).not.toThrow();
  });

  test.runIf(IS_ROOT)("as nobody: the swap, then the same config refused", () => {
    if (!existsSync(DIST)) throw new Error("build first: npm run build");
    chmodSync(dir, 0o755);
    for (const p of [
      dir,
      ...readdirSync(dir, { recursive: true }).map((n) => join(dir, String(n))),
    ])
      chownSync(p, 65534, 65534);
    chmodSync(secret, 0o755);
    // nobody may not be able to read the repository: it runs a staged copy.
    const staged = stageForNobody();
    const run = (command: string): Record<string, unknown> => {
      const r = spawnSync(
        "setpriv",
        [
          ...AS_NOBODY,
          staged.node,
          staged.fixture("os/run.mjs"),
          root,
          command,
          "{}",
          JSON.stringify([`${join(root, "data/ro-src")}:/ro:ro`]),
        ],
        { encoding: "utf8", timeout: 30_000, env: { ...process.env, HOME: "/tmp" } },
      );
      return JSON.parse(r.stdout) as Record<string, unknown>;
    };
    expect(run(swapTo(secret))).toMatchObject({ exitCode: 0, stdout: "swapped\n" });
    const second = run("cat ro/key.txt");
    expect(second.error).toBe("invalid_config");
    expect(second.message).toMatch(/a link on the way to the source/);
    expect(readFileSync(join(secret, "ro-src/key.txt"), "utf8")).toBe("SECRET\n");
  });
});

describe("finding 8 without bubblewrap: the named-paths form is checked the same way", () => {
  test("a named path whose folder is reached through a link in another writable named path", () => {
    symlinkSync(secret, join(root, "data/alias"));
    const err = refusal({
      paths: { ws: { root, mode: "rw" }, ref: { root: join(root, "data/alias/ro-src") } },
    });
    expect(err.message).toMatch(/a link on the way to the source, at '\/ws\/data\/alias'/);
  });
});
