/**
 * Protected defaults (DESIGN §10, "Secure defaults"): beside `.git`, the
 * files and folders a shell, git, an IDE, an MCP client or a package
 * manager later executes or obeys are unwritable by default — created,
 * overwritten, removed, moved away or renamed onto — in-process, through a
 * worker thread's port and under bubblewrap.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  createSandbox,
  DEFAULT_PROTECTED,
  PROTECTED_DEFAULTS,
  parseSandboxConfig,
  runCommand,
  type Sandbox,
  SandboxError,
} from "../src/index.js";
import { assertBuilt, createSandboxForThreads, startRelay } from "./conformance/thread.js";
import { describeWithBwrap } from "./helpers/bwrap.js";
import { makeTempDir, removeDir } from "./helpers/tree.js";

const FOLDERS = [".git", ".husky", ".vscode", ".idea", ".claude"];
/** Home-only names: held absent under bubblewrap only in a home folder. */
const HOME_ONLY = [
  ".bashrc",
  ".bash_profile",
  ".bash_login",
  ".bash_logout",
  ".profile",
  ".zshrc",
  ".zshenv",
  ".zprofile",
  ".zlogin",
  ".zlogout",
  ".gitconfig",
];
/** Also on the default secrets list: refused as a secret first. */
const ALSO_SECRET = new Set([".npmrc"]);

let root: string;

beforeEach(() => {
  root = makeTempDir("mountbox-protected-");
  writeFileSync(join(root, "plain.txt"), "plain\n");
});
afterEach(() => removeDir(root));

/** Where a write to protected `name` lands: the name itself, or a file in the folder. */
function target(name: string, under = ""): string {
  return `${under}/${name}${FOLDERS.includes(name) ? "/x" : ""}`;
}

/** Plants an existing `name` (with a file inside, for a folder) on the host. */
function plant(name: string, under = ""): void {
  const at = join(root, under, name);
  mkdirSync(join(at, ".."), { recursive: true });
  if (FOLDERS.includes(name)) {
    mkdirSync(at, { recursive: true });
    writeFileSync(join(at, "x"), "original\n");
  } else writeFileSync(at, "original\n");
}

function hostContent(name: string, under = ""): string | undefined {
  const at = join(root, under, target(name));
  return existsSync(at) ? readFileSync(at, "utf8") : undefined;
}

async function refusedCode(p: Promise<unknown>): Promise<string> {
  const err = await p.then(
    () => "accepted",
    (e: unknown) => e,
  );
  if (err === "accepted") return "accepted";
  expect(err).toBeInstanceOf(SandboxError);
  expect((err as Error).message).not.toContain(root);
  return (err as SandboxError).code;
}

function expectedCode(name: string): string {
  return ALSO_SECRET.has(name) ? "secret_withheld" : "path_not_writable";
}

describe("the default protected list", () => {
  it("is .git, shell rc files and the configs tools execute, each with its reason", () => {
    expect(DEFAULT_PROTECTED).toEqual([
      ".git",
      ...HOME_ONLY.slice(0, 10),
      ...[
        ".gitconfig",
        ".gitmodules",
        ".husky",
        ".vscode",
        ".idea",
        ".claude",
        ".mcp.json",
        ".envrc",
        ".npmrc",
        ".yarnrc",
        ".yarnrc.yml",
        ".pnpmfile.cjs",
      ],
    ]);
    for (const d of PROTECTED_DEFAULTS) expect(d.why.length).toBeGreaterThan(10);
    expect(parseSandboxConfig({ root: "." }).protected).toEqual([...DEFAULT_PROTECTED]);
  });
});

describe("in-process, every default is unwritable at any depth", () => {
  let sb: Sandbox;
  beforeEach(() => {
    sb = createSandbox({ root });
  });

  it.each(DEFAULT_PROTECTED)("%s: absent, it cannot be created (top and deep)", async (name) => {
    for (const under of ["", "/a/b"]) {
      expect(await refusedCode(sb.writeFile(target(name, under), "evil"))).toBe(expectedCode(name));
      expect(await refusedCode(sb.mkdir(`${under}/${name}`))).toBe(expectedCode(name));
      expect(await refusedCode(sb.move("/plain.txt", target(name, under)))).toBe(
        expectedCode(name),
      );
      expect(existsSync(join(root, under, name))).toBe(false);
    }
    expect(sb.canWrite(target(name))).toBe(false);
  });

  it.each(DEFAULT_PROTECTED)(
    "%s: present, it cannot be changed, moved or removed",
    async (name) => {
      plant(name, "a");
      const v = target(name, "/a");
      expect(await refusedCode(sb.writeFile(v, "evil"))).toBe(expectedCode(name));
      expect(await refusedCode(sb.move("/plain.txt", v, { overwrite: true }))).toBe(
        expectedCode(name),
      );
      expect(await refusedCode(sb.move(`/a/${name}`, "/a/moved"))).toBe(expectedCode(name));
      expect(await refusedCode(sb.remove(`/a/${name}`, { recursive: true }))).toBe(
        expectedCode(name),
      );
      expect(hostContent(name, "a")).toBe("original\n");
      // Reading stays allowed (unless it is also a secret).
      if (!ALSO_SECRET.has(name)) expect(await sb.readFile(v)).toBe("original\n");
    },
  );

  it("the refusal names the protected entry and the writable paths", async () => {
    const err = await sb.writeFile("/.vscode/tasks.json", "{}").catch((e: Error) => e);
    expect((err as Error).message).toMatchInlineSnapshot(`
      "Cannot write to '/.vscode/tasks.json': it is inside a protected folder ('.vscode') where writes are refused.
      Writable paths: /"
    `);
  });

  it("`protected: []` protects nothing; a shorter list un-protects the rest", async () => {
    const open = createSandbox({ root, protected: [], secrets: [] });
    for (const name of DEFAULT_PROTECTED) await open.writeFile(target(name), "ok");
    expect(hostContent(".bashrc")).toBe("ok");
    const gitOnly = createSandbox({ root, protected: [".git"] });
    await gitOnly.writeFile("/.vscode/settings.json", "{}");
    expect(await refusedCode(gitOnly.writeFile("/.git/config", "x"))).toBe("path_not_writable");
    // `.npmrc` stays a secret unless the secrets list drops it too.
    expect(await refusedCode(gitOnly.writeFile("/.npmrc", "x"))).toBe("secret_withheld");
  });
});

describe("through a worker thread's port", () => {
  beforeAll(assertBuilt);

  it("every default is refused, creating and overwriting", async () => {
    for (const name of DEFAULT_PROTECTED) if (name !== ".npmrc") plant(name, "p");
    const relay = startRelay(createSandboxForThreads({ root }));
    try {
      for (const name of DEFAULT_PROTECTED) {
        for (const v of [target(name), target(name, "/p")]) {
          const code = await relay.sandbox.writeFile(v, "evil").then(
            () => "accepted",
            (e: SandboxError) => e.code,
          );
          expect([name, code]).toEqual([name, expectedCode(name)]);
        }
      }
    } finally {
      await relay.stop();
    }
    for (const name of DEFAULT_PROTECTED) {
      expect(existsSync(join(root, name))).toBe(false);
      if (name !== ".npmrc") expect(hostContent(name, "p")).toBe("original\n");
    }
  });
});

describeWithBwrap("under bubblewrap, at the top of every writable folder", () => {
  let savedHome: string | undefined;
  beforeEach(() => {
    savedHome = process.env.HOME;
  });
  afterEach(() => {
    if (savedHome === undefined) delete process.env.HOME;
    else process.env.HOME = savedHome;
  });

  /** A shell line that tries to create, overwrite and rename onto `name`; prints what got through. */
  function attempt(name: string): string {
    const folder = FOLDERS.includes(name);
    const write = folder
      ? `mkdir -p ${name} 2>/dev/null; echo evil > ${name}/x 2>/dev/null && echo "wrote ${name}"`
      : `echo evil > ${name} 2>/dev/null && echo "wrote ${name}"`;
    const onto = folder
      ? `mkdir -p t-${name}/x 2>/dev/null; mv -T t-${name} ${name} 2>/dev/null && echo "renamed onto ${name}"`
      : `echo evil > t-${name}; mv t-${name} ${name} 2>/dev/null && echo "renamed onto ${name}"`;
    return `${write}; ${onto}; rm -rf ${name} 2>/dev/null && ! test -e ${name} && echo "removed ${name}"`;
  }

  it("in a home folder, absent defaults cannot be created, nor renamed onto", async () => {
    process.env.HOME = root;
    const r = await runCommand(createSandbox({ root }), DEFAULT_PROTECTED.map(attempt).join("; "));
    expect(r.stdout).toBe("");
    for (const name of DEFAULT_PROTECTED) expect(existsSync(join(root, name))).toBe(false);
  });

  it("present defaults cannot be overwritten, removed or renamed onto", async () => {
    for (const name of DEFAULT_PROTECTED) plant(name);
    const r = await runCommand(createSandbox({ root }), DEFAULT_PROTECTED.map(attempt).join("; "));
    expect(r.stdout).toBe("");
    for (const name of DEFAULT_PROTECTED) expect(hostContent(name)).toBe("original\n");
  });

  it("outside a home folder, absent shell rc files are held in-process only (the documented limit)", async () => {
    process.env.HOME = join(root, "elsewhere");
    const sb = createSandbox({ root });
    const r = await runCommand(
      sb,
      "echo x > .bashrc && echo made; echo y > .vscode/x 2>&1 || echo held",
    );
    expect(r.stdout).toBe("made\nheld\n");
    expect(await refusedCode(sb.writeFile("/.zshrc", "x"))).toBe("path_not_writable");
  });

  it("a command sees empty placeholders, yarn's and pnpm's as files; none is left behind", async () => {
    const r = await runCommand(
      createSandbox({ root }),
      "test -f .yarnrc.yml && ! test -s .yarnrc.yml && test -f .pnpmfile.cjs && test -d .vscode && echo ok; ls -A .vscode | wc -l",
    );
    expect(r.stdout).toBe("ok\n0\n");
    expect(existsSync(join(root, ".yarnrc.yml"))).toBe(false);
    expect(existsSync(join(root, ".vscode"))).toBe(false);
  });

  it("deeper than the top of a writable folder, names are held in-process only (the documented limit)", async () => {
    mkdirSync(join(root, "pkg"));
    const sb = createSandbox({ root });
    const r = await runCommand(sb, "mkdir pkg/.vscode && echo made");
    expect(r.stdout).toBe("made\n");
    expect(await refusedCode(sb.writeFile("/pkg/.vscode/tasks.json", "{}"))).toBe(
      "path_not_writable",
    );
  });
});
