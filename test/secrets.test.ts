/**
 * Secrets (DESIGN §10, "Secure defaults"): names on the `secrets` list are
 * withheld from every operation, listing, search, tool and shell command,
 * at any depth and whatever their case; reading one says it is withheld,
 * not missing; a derived sandbox can add secrets, never drop one.
 * (Every face of a sandbox — in-process, thread, process — runs the shared
 * cases in test/conformance/suite.ts too.)
 */
import { linkSync, mkdirSync, readFileSync, renameSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { applyWorkerSandbox } from "../src/agents/worker-sandbox.js";
import { parseWorkerSandboxKey } from "../src/config/worker-sandbox-config.js";
import {
  ConfigError,
  type ConfigIssue,
  createSandbox,
  createToolDefinitions,
  DEFAULT_SECRETS,
  parseSandboxConfig,
  runCommand,
  type Sandbox,
  SandboxError,
  SandboxPermissionEscalationError,
  SecretWithheldError,
} from "../src/index.js";
import { launchTestHooks } from "../src/os/launch.js";
import { grepInProcess } from "../src/pool/index.js";
import { deserializePolicy, serializePolicy } from "../src/sandbox/policy-wire.js";
import { policyOf } from "../src/sandbox/sandbox.js";
import { checkSecretEntry, SecretList } from "../src/sandbox/secrets.js";
import { describeWithBwrap } from "./helpers/bwrap.js";
import { makeTempDir, removeDir, writeTree } from "./helpers/tree.js";

let base: string;
let root: string;
let sb: Sandbox;

beforeEach(() => {
  base = makeTempDir("mountbox-secrets-");
  root = join(base, "root");
  writeTree(root, {
    ".env": "TOKEN=env-content-1\n",
    ".env.production": "TOKEN=env-content-2\n",
    "README.md": "readme\n",
    app: {
      "main.ts": "export {};\n",
      certs: { "server.pem": "pem-content\n", "Server.KEY": "key-content\n" },
      ".aws": { credentials: "aws-content\n" },
    },
    home: { ".ssh": { id_ed25519: "ssh-content\n", config: "ssh-config-content\n" } },
    "notes.txt": { link: ".env" },
    "keys-link": { link: "home/.ssh" },
    dangling: { link: ".env.gone" },
    chain1: { link: "chain2" },
    chain2: { link: "app/certs/server.pem" },
  });
  sb = createSandbox({ root });
});

afterEach(() => removeDir(base));

/** Awaits a rejection; checks the error is a SandboxError with no host path and no secret. */
async function refusal(p: Promise<unknown>): Promise<SandboxError> {
  const err = await p.then(
    () => {
      throw new Error("expected a rejection");
    },
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(SandboxError);
  const e = err as SandboxError;
  expect(e.message).not.toContain(base);
  expect(e.message).not.toMatch(/-content/);
  return e;
}

describe("the secrets list", () => {
  it("defaults to environment files, keys, credentials and their folders", () => {
    expect(DEFAULT_SECRETS).toEqual([
      ".env",
      ".env.*",
      "*.pem",
      "*.key",
      "id_rsa*",
      "id_dsa*",
      "id_ecdsa*",
      "id_ed25519*",
      ".npmrc",
      ".netrc",
      ".git-credentials",
      ".aws/",
      ".ssh/",
    ]);
    expect(parseSandboxConfig({ root: "." }).secrets).toEqual([...DEFAULT_SECRETS]);
    expect(sb.describe().secrets).toEqual([...DEFAULT_SECRETS]);
  });

  it("matches names at any depth, regardless of case, with * and ?", () => {
    const list = SecretList.of([".env", ".env.*", "*.pem", "id_rsa*", ".ssh/", "a?c"]);
    const yes = [
      "/.env",
      "/x/.ENV",
      "/a/.env.local",
      "/k.PEM",
      "/d/id_rsa.pub",
      "/.ssh/x/y",
      "/abc",
    ];
    const no = ["/env", "/.envrc", "/x.env", "/pem", "/id_rs", "/ssh", "/ac", "/abbc", "/"];
    expect(yes.filter((v) => !list.covers(v))).toEqual([]);
    expect(no.filter((v) => list.covers(v))).toEqual([]);
    expect(list.find("/home/.ssh/id_rsa")).toEqual({ at: "/home/.ssh", entry: ".ssh/" });
  });

  it("matches * and ? exactly as a reference regex does, on any name (property)", () => {
    const ch = fc.constantFrom("a", "b", ".", "*", "?");
    fc.assert(
      fc.property(
        fc.string({ unit: ch, minLength: 1, maxLength: 8 }),
        fc.string({ unit: fc.constantFrom("a", "b", "."), minLength: 1, maxLength: 12 }),
        (pattern, name) => {
          fc.pre(checkSecretEntry(pattern) === undefined); // "." and ".." are no names
          const list = SecretList.of([pattern]);
          const re = new RegExp(
            `^${[...pattern.toLowerCase()].map((c) => (c === "*" ? ".*" : c === "?" ? "." : c === "." ? "\\." : c)).join("")}$`,
          );
          expect(list.matchesName(name)).toBe(re.test(name.toLowerCase()));
        },
      ),
      { numRuns: 500 },
    );
  });

  it("refuses entries that are not names, naming the key", () => {
    const issues = (secrets: unknown): ConfigIssue[] => {
      try {
        parseSandboxConfig({ root: ".", secrets });
      } catch (err) {
        return (err as ConfigError).issues;
      }
      return [];
    };
    expect(issues(["a/b", "", "..", "x\0", ".ssh/"])).toMatchInlineSnapshot(`
      [
        {
          "message": "a secrets entry is a name matched at any depth (such as '.env' or '*.pem'), not a path: 'a/b' holds a '/' or '\\' (only one trailing '/' marking a folder is allowed)",
          "path": [
            "secrets",
            0,
          ],
        },
        {
          "message": "a secrets entry cannot be empty",
          "path": [
            "secrets",
            1,
          ],
        },
        {
          "message": "'..' is not a name",
          "path": [
            "secrets",
            2,
          ],
        },
        {
          "message": "a secrets entry cannot contain a NUL byte",
          "path": [
            "secrets",
            3,
          ],
        },
      ]
    `);
    expect(issues("x")[0]?.path).toEqual(["secrets"]);
  });

  it("`secrets: []` withholds nothing", async () => {
    const open = createSandbox({ root, secrets: [] });
    expect(await open.readFile("/.env")).toBe("TOKEN=env-content-1\n");
    expect(await open.readFile("/notes.txt")).toBe("TOKEN=env-content-1\n");
    expect(await open.listFiles("/", "**/*.pem")).toEqual(["/app/certs/server.pem"]);
    expect(open.describe().secrets).toEqual([]);
  });

  it("a custom list replaces the defaults", async () => {
    const custom = createSandbox({ root, secrets: ["*.md"] });
    expect(await custom.readFile("/.env")).toBe("TOKEN=env-content-1\n");
    expect((await refusal(custom.readFile("/README.md"))).code).toBe("secret_withheld");
  });
});

describe("every operation refuses a secret", () => {
  it("reads say the file exists and is withheld, and what the user can do", async () => {
    const e = await refusal(sb.readFile("/.env"));
    expect(e).toBeInstanceOf(SecretWithheldError);
    expect(e.message).toMatchInlineSnapshot(
      `"Cannot read '/.env': it exists, but it is a secret withheld by configuration (it matches the secrets entry '.env'). Do not look for another way to it: no tool, search, listing or shell command shows secrets. If the task needs it, ask the user: they can change the sandbox's 'secrets' list."`,
    );
    expect((await refusal(sb.readFile("/app/certs/server.KEY"))).code).toBe("not_found");
    expect((await refusal(sb.readFile("/app/certs/Server.KEY"))).code).toBe("secret_withheld");
    expect((await refusal(sb.readFile("/app/.aws/credentials"))).message).toContain("'.aws/'");
    expect((await refusal(sb.stat("/home/.ssh"))).code).toBe("secret_withheld");
    expect((await refusal(sb.readBytes("/.env.production"))).code).toBe("secret_withheld");
  });

  it("writes say agents cannot create or change such files", async () => {
    const e = await refusal(sb.writeFile("/app/new.pem", "x"));
    expect(e.message).toMatchInlineSnapshot(
      `"Cannot write to '/app/new.pem': its name is a secret withheld by configuration (it matches the secrets entry '*.pem'): agents cannot create, change, move or remove such files. Do not look for another way to it: no tool, search, listing or shell command shows secrets. If the task needs it, ask the user: they can change the sandbox's 'secrets' list."`,
    );
    expect((await refusal(sb.editFile("/.env", [{ oldText: "T", newText: "X" }]))).code).toBe(
      "secret_withheld",
    );
    expect(readFileSync(join(root, ".env"), "utf8")).toBe("TOKEN=env-content-1\n");
  });

  it("links to a secret — file, folder, chains — are refused; dangling ones are not found", async () => {
    const e = await refusal(sb.readFile("/notes.txt"));
    expect(e.message).toMatchInlineSnapshot(
      `"Cannot read '/notes.txt': it leads (through a link) to '/.env', a secret withheld by configuration (it matches the secrets entry '.env'). Do not look for another way to it: no tool, search, listing or shell command shows secrets. If the task needs it, ask the user: they can change the sandbox's 'secrets' list."`,
    );
    expect((await refusal(sb.readFile("/keys-link/config"))).code).toBe("secret_withheld");
    expect((await refusal(sb.readFile("/chain1"))).code).toBe("secret_withheld");
    expect((await refusal(sb.writeFile("/notes.txt", "x"))).code).toBe("secret_withheld");
    expect((await refusal(sb.readFile("/dangling"))).code).toBe("not_found");
    expect((await refusal(sb.writeFile("/dangling", "x"))).code).toBe("secret_withheld");
    expect(sb.canRead("/chain1")).toBe(false);
    expect(() => sb.resolve("/keys-link/config")).toThrow(SecretWithheldError);
  });

  it("moving or removing a folder that holds a secret is refused without naming it", async () => {
    const e = await refusal(sb.remove("/app", { recursive: true }));
    expect(e.message).toMatchInlineSnapshot(
      `"Cannot change '/app': it holds a file withheld by configuration (the sandbox's 'secrets' list), which agents cannot read, move or remove, so neither can its folder be moved or removed. Move or remove the other entries one by one. Do not look for another way to it: no tool, search, listing or shell command shows secrets. If the task needs it, ask the user: they can change the sandbox's 'secrets' list."`,
    );
    expect((await refusal(sb.move("/home", "/h2"))).code).toBe("secret_withheld");
    // The link itself is no secret: it can be moved and removed.
    await sb.move("/notes.txt", "/notes2.txt");
    await sb.remove("/notes2.txt");
    expect(readFileSync(join(root, ".env"), "utf8")).toBe("TOKEN=env-content-1\n");
  });

  it("listings leave out secrets, links to them and everything below a secret folder", async () => {
    expect(await sb.listFiles()).toEqual(["/README.md", "/app/main.ts"]);
    expect(await sb.exists("/.env")).toBe(false);
    expect((await refusal(sb.listFiles("/home/.ssh"))).code).toBe("secret_withheld");
    expect((await refusal(sb.listFiles("/keys-link"))).code).toBe("secret_withheld");
  });

  it("grep never matches a secret and refuses to search one", async () => {
    const r = await grepInProcess(sb, { pattern: "content" });
    expect(r.matches).toEqual([]);
    expect(r.filesListed).toBe(2);
    expect((await refusal(grepInProcess(sb, { pattern: "T", path: "/.env" }))).code).toBe(
      "secret_withheld",
    );
    expect(
      (await refusal(grepInProcess(sb, { pattern: "T", path: "/home/.ssh/config" }))).code,
    ).toBe("secret_withheld");
  });

  it("tools report it as withheld and say up front what is withheld", async () => {
    const tools = await createToolDefinitions(sb);
    const tool = (name: string) => tools.find((t) => t.name === name)!;
    expect(await tool("read_file").execute({ path: "/.env" })).toMatch(
      /^Error \[secret_withheld\]: Cannot read '\/.env': it exists/,
    );
    const many = await tool("read_multiple_files").execute({ paths: ["/README.md", "/.env"] });
    expect(many).toContain("readme");
    expect(many).toContain("secret_withheld");
    expect(many).not.toContain("env-content");
    expect(await tool("list_allowed_paths").execute({})).toContain(
      "Withheld (secrets, names at any depth; never readable, listed or searched): .env, .env.*, *.pem",
    );
  });

  it("the pool's wire carries the list; a wire without one is refused", () => {
    const child = sb.derive({ inherit: true, secrets: ["*.md"] });
    const wire = serializePolicy(policyOf(child));
    expect(wire.secrets).toEqual([...DEFAULT_SECRETS, "*.md"]);
    expect(deserializePolicy(wire).secrets.entries).toEqual(wire.secrets);
    expect(() => deserializePolicy({ ...wire, secrets: undefined as never })).toThrow(SandboxError);
    expect(() => deserializePolicy({ ...wire, secrets: ["a/b"] })).toThrow(SandboxError);
  });

  it("hard links are the documented limit: another name for a secret's content is not a secret", async () => {
    linkSync(join(root, ".env"), join(root, "hard.txt"));
    expect(await sb.readFile("/hard.txt")).toBe("TOKEN=env-content-1\n");
  });
});

describe("derived sandboxes add secrets, never drop one", () => {
  it("a child adds to its parent's list; a grandchild keeps both", async () => {
    const child = sb.derive({ inherit: true, secrets: ["*.md"] });
    expect((await refusal(child.readFile("/README.md"))).code).toBe("secret_withheld");
    expect((await refusal(child.readFile("/.env"))).code).toBe("secret_withheld");
    const grandchild = child.restrict({ secrets: ["main.*"] });
    expect(grandchild.describe().secrets).toEqual([...DEFAULT_SECRETS, "*.md", "main.*"]);
    expect(await grandchild.listFiles()).toEqual([]);
    // The parent is unchanged.
    expect(await sb.readFile("/README.md")).toBe("readme\n");
  });

  it("`secrets: []` on a child is refused, naming the parent's list", () => {
    let err: unknown;
    try {
      sb.derive({ inherit: true, secrets: [] });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(SandboxPermissionEscalationError);
    expect((err as Error).message).toMatchInlineSnapshot(`
      "Cannot derive a child sandbox with secrets []: a child sandbox keeps every secret of its parent and can only add more.
      Parent secrets: .env, .env.*, *.pem, *.key, id_rsa*, id_dsa*, id_ecdsa*, id_ed25519*, .npmrc, .netrc, .git-credentials, .aws/, .ssh/
      List names to withhold in addition, or omit secrets. To let agents read a secret, remove it from the root sandbox's 'secrets' list."
    `);
    expect(() => sb.restrict({ secrets: [] })).toThrow(SandboxPermissionEscalationError);
    // A parent with no secrets has nothing to drop.
    expect(createSandbox({ root, secrets: [] }).derive({ secrets: [] }).describe().secrets).toEqual(
      [],
    );
  });

  it("a child cannot drop an entry by listing others: the parent's stay", async () => {
    const child = sb.derive({ inherit: true, secrets: [".env"] });
    expect(child.describe().secrets).toEqual([...DEFAULT_SECRETS]);
    expect((await refusal(child.readFile("/app/certs/server.pem"))).code).toBe("secret_withheld");
  });

  it("malformed entries are a ConfigError naming the key", () => {
    expect(() => sb.derive({ secrets: ["a/b"] })).toThrow(ConfigError);
    expect(() => sb.derive({ secrets: "x" as never })).toThrow(ConfigError);
  });

  it("a worker's sandbox key and a call site add secrets the same way", async () => {
    const w = applyWorkerSandbox(sb, { secrets: ["*.md"] });
    expect(w.readableRoots).toEqual(["/"]);
    expect((await refusal(w.readFile("/README.md"))).code).toBe("secret_withheld");
    const d = applyWorkerSandbox(sb, { allowRead: ["/app"], secrets: ["main.*"] });
    expect(d.describe().secrets).toContain("main.*");
    expect(() => applyWorkerSandbox(sb, { secrets: [] })).toThrow(SandboxPermissionEscalationError);
    const issues: ConfigIssue[] = [];
    parseWorkerSandboxKey({ secrets: [] }, { form: "root", names: [] }, ["sandbox"], issues);
    parseWorkerSandboxKey({ secrets: ["a/b"] }, { form: "root", names: [] }, ["sandbox"], issues);
    expect(issues.map((i) => i.path)).toEqual([
      ["sandbox", "secrets"],
      ["sandbox", "secrets", 0],
    ]);
    expect(issues[0]?.message).toContain("never remove them");
  });
});

describe("no read path returns a secret's content (property)", () => {
  const NAMES = [".env", ".ENV", ".env.local", "k.pem", "X.Key", "id_rsa", "id_ed25519.pub"];
  const FOLDERS = [".ssh", ".aws", ".SSH"];
  const SEGS = ["a", "b", "src", "deep"];
  const placed = fc.record({
    dirs: fc.array(fc.constantFrom(...SEGS), { maxLength: 3 }),
    inFolder: fc.option(fc.constantFrom(...FOLDERS), { nil: undefined }),
    name: fc.oneof(fc.constantFrom(...NAMES), fc.constantFrom("plain.txt", "config")),
    link: fc.boolean(),
  });

  it("readFile, readBytes, stat, listings, grep and links never show it", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(placed, { minLength: 1, maxLength: 6 }), async (items) => {
        const dir = makeTempDir("mountbox-secret-prop-");
        try {
          const box = createSandbox({ root: dir });
          const secrets = policyOf(box).secrets;
          const planted: string[] = [];
          items.forEach((item, i) => {
            const rel = [...item.dirs, ...(item.inFolder ? [item.inFolder] : []), item.name].join(
              "/",
            );
            const v = `/${rel}`;
            if (!secrets.covers(v)) return;
            mkdirSync(join(dir, rel, ".."), { recursive: true });
            writeFileSync(join(dir, rel), `needle-${i}\n`);
            planted.push(v);
            if (item.link) symlinkSync(join(dir, rel), join(dir, `link-${i}.txt`));
          });
          const seen: string[] = [];
          const tryRead = async (v: string) => {
            try {
              seen.push(await box.readFile(v));
            } catch {}
            try {
              seen.push(Buffer.from(await box.readBytes(v)).toString());
            } catch {}
          };
          for (const v of planted) await tryRead(v);
          const listed = await box.listFiles();
          for (const v of listed) await tryRead(v);
          for (let i = 0; i < items.length; i++) await tryRead(`/link-${i}.txt`);
          const grep = await grepInProcess(box, { pattern: "needle" });
          seen.push(...grep.matches.map((m) => m.text));
          expect(seen.filter((s) => s.includes("needle"))).toEqual([]);
          for (const v of planted) {
            expect(listed).not.toContain(v);
            await expect(box.stat(v)).rejects.toThrow(SecretWithheldError);
          }
        } finally {
          removeDir(dir);
        }
      }),
      { numRuns: 40 },
    );
  });
});

describeWithBwrap("shell commands never show a secret's content (bubblewrap)", () => {
  it("cat, grep -r, find, cp, ln, mv and rm all fail on a secret; its name stays", async () => {
    mkdirSync(join(root, "ro"));
    writeFileSync(join(root, "ro", "id_rsa"), "ro-ssh-content\n");
    const box = createSandbox({
      root,
      mounts: [{ source: join(root, "ro"), target: "/ro", readonly: true }],
    });
    const r = await runCommand(
      box,
      [
        "cat .env app/certs/server.pem app/.aws/credentials home/.ssh/id_ed25519 notes.txt keys-link/config chain1 ro/id_rsa 2>&1",
        "grep -r content . 2>/dev/null",
        "cat .ENV 2>&1",
        "find . -type f | sort | tr '\\n' ' '; echo",
        "ls -A home/.ssh | wc -l",
        "cp .env /tmp/x 2>&1 || echo cp-refused",
        "ln .env hard 2>&1 || echo ln-refused",
        "mv .env plain.txt 2>&1 || echo mv-refused",
        "rm -f .env 2>&1 || echo rm-refused",
        "mv app app2 && cat app2/certs/server.pem 2>&1; mv app2 app",
        "echo mine > new.env.local 2>&1; echo own > .env.mine && cat .env.mine",
      ].join("; "),
    );
    expect(r.stdout).not.toMatch(/-content/);
    expect(r.stdout).toContain("cp-refused");
    expect(r.stdout).toContain("ln-refused");
    expect(r.stdout).toContain("mv-refused");
    expect(r.stdout).toContain("rm-refused");
    // The names are there (a command sees the folder as it is), the content is not.
    expect(r.stdout).toContain("./.env ");
    expect(r.stdout).toMatch(/^0$/m); // the .ssh folder is an empty one
    // A secret the command made itself is its own.
    expect(r.stdout).toContain("own");
    expect(readFileSync(join(root, ".env"), "utf8")).toBe("TOKEN=env-content-1\n");
  });

  it("`secrets: []` shows them to a command", async () => {
    const r = await runCommand(createSandbox({ root, secrets: [] }), "cat .env");
    expect(r.stdout).toBe("TOKEN=env-content-1\n");
  });

  it("a derived child's own secrets are masked too", async () => {
    const child = sb.derive({ inherit: true, secrets: ["*.md"] });
    const r = await runCommand(child, "cat README.md 2>&1; cat app/main.ts");
    expect(r.stdout).not.toContain("readme");
    expect(r.stdout).toContain("export {};");
  });

  it("a secret that appears after the walk and before the command starts stops the command", async () => {
    launchTestHooks.beforeSpawn = () => {
      mkdirSync(join(root, "late"));
      writeFileSync(join(root, "late", ".env"), "late-content\n");
    };
    try {
      await expect(runCommand(sb, "cat late/.env")).rejects.toThrow(
        /a folder holding a secret was moved/,
      );
    } finally {
      launchTestHooks.beforeSpawn = undefined;
    }
    // Walked now: masked.
    const r = await runCommand(sb, "cat late/.env 2>&1");
    expect(r.stdout).not.toContain("late-content");
  });

  it("a folder holding a secret, moved after the walk, stops the command", async () => {
    launchTestHooks.beforeSpawn = () => {
      renameSync(join(root, "home"), join(root, "home2"));
    };
    try {
      const out = await runCommand(sb, "cat home2/.ssh/config").then(
        (r) => r.stdout,
        (e: Error) => e.message,
      );
      expect(out).not.toContain("ssh-config-content");
    } finally {
      launchTestHooks.beforeSpawn = undefined;
    }
  });
});

describe("secrets in the host's lists of places", () => {
  let dir: string;
  beforeAll(() => {
    dir = makeTempDir("mountbox-secrets-mount-");
    writeTree(dir, { keys: { ".env": "m-content\n" }, id_rsa: { "k.txt": "x\n" } });
  });
  afterAll(() => removeDir(dir));

  it("a mount whose target is a secret is withheld whole", async () => {
    const box = createSandbox({
      root: join(dir, "keys"),
      mounts: [{ source: join(dir, "id_rsa"), target: "/id_rsa", readonly: true }],
    });
    expect(await box.listFiles()).toEqual([]);
    expect((await refusal(box.readFile("/id_rsa/k.txt"))).code).toBe("secret_withheld");
  });
});
