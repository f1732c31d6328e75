/**
 * `npm run tour`: a small, real tour of mountbox on a throwaway project.
 *
 * Builds a root sandbox with a read-only mount, derives a narrower child for
 * an "agent", does real reads and writes, and shows the messages a model gets
 * when it tries to step outside. If bubblewrap is installed, it also runs a
 * shell command under kernel confinement.
 */
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  createHost,
  createSandbox,
  type HostEvent,
  runCommand,
  SandboxError,
} from "../src/index.js";

const dir = mkdtempSync(join(tmpdir(), "mountbox-demo-"));
const say = (text: string) => console.log(text);
const section = (title: string) => say(`\n\x1b[1m== ${title}\x1b[0m`);

async function attempt(label: string, fn: () => Promise<unknown> | unknown): Promise<void> {
  try {
    const out = await fn();
    say(`✔ ${label}${out === undefined ? "" : ` → ${JSON.stringify(out)}`}`);
  } catch (err) {
    if (!(err instanceof SandboxError)) throw err;
    say(`✖ ${label}\n  ${err.name} (${err.code}):\n    ${err.message.replaceAll("\n", "\n    ")}`);
  }
}

try {
  // A project with source, docs, a secret outside it, and a shared cache.
  mkdirSync(join(dir, "project/src"), { recursive: true });
  mkdirSync(join(dir, "project/docs"), { recursive: true });
  mkdirSync(join(dir, "cache"), { recursive: true });
  writeFileSync(join(dir, "project/src/app.ts"), 'export const greeting = "hello";\n');
  writeFileSync(join(dir, "project/docs/readme.md"), "# Demo\n");
  writeFileSync(join(dir, "cache/deps.json"), '{"left-pad":"1.3.0"}\n');
  writeFileSync(join(dir, "secret.txt"), "API_KEY=do-not-leak\n");
  symlinkSync(join(dir, "secret.txt"), join(dir, "project/src/innocent.ts"));

  section("The host's root sandbox: ./project as /, ./cache mounted read-only at /cache");
  const root = createSandbox({ root: "project", mounts: ["cache:/cache:ro"] }, { basePath: dir });
  say(JSON.stringify(root.describe(), null, 2));

  section("An agent's child sandbox: read /src and /cache, write /docs only");
  const agent = root.derive({ allowRead: ["/src", "/cache", "/docs"], allowWrite: ["/docs"] });
  say(JSON.stringify(agent.describe()));
  await attempt("agent reads /src/app.ts", () => agent.readFile("/src/app.ts"));
  await attempt("agent writes /docs/notes.md", () =>
    agent.writeFile("/docs/notes.md", "# Notes\n"),
  );
  await attempt(
    "agent edits /docs/notes.md",
    async () =>
      (await agent.editFile("/docs/notes.md", [{ oldText: "Notes", newText: "Review notes" }]))
        .diff,
  );
  await attempt("agent lists everything it may read", () => agent.listFiles());

  section("What the model is told when it steps outside");
  await attempt("climb out with ..", () => agent.readFile("/../secret.txt"));
  await attempt("follow a symlink that leads outside", () => agent.readFile("/src/innocent.ts"));
  await attempt("write into the read-only cache", () => agent.writeFile("/cache/deps.json", "{}"));
  await attempt("write outside its writable area", () => agent.writeFile("/src/app.ts", "pwned"));
  await attempt("use a home-relative path", () => agent.readFile("~/.ssh/id_rsa"));
  await attempt("ask a child for more than the agent has", () =>
    agent.derive({ allowWrite: "/src" }),
  );

  section("A shell command, confined by the kernel (bubblewrap)");
  try {
    const r = await runCommand(
      agent,
      "cat /workspace/src/app.ts; echo changed > /workspace/src/app.ts; echo exit=$?",
      { timeoutMs: 10_000 },
    );
    say(r.stdout.trimEnd());
    if (r.stderr) say(`stderr: ${r.stderr.trimEnd()}`);
    for (const note of r.notes) say(`note: ${note}`);
  } catch (err) {
    if (!(err instanceof SandboxError)) throw err;
    say(`(skipped: ${err.message.split("\n")[0]})`);
  }
  section("Agents in their own threads: a worker reads, is refused, delegates");
  const workerModule = (name: string) =>
    fileURLToPath(new URL(`./workers/${name}.js`, import.meta.url));
  const events: HostEvent[] = [];
  const host = await createHost({
    sandbox: { root: "project", mounts: ["cache:/cache:ro"] },
    basePath: dir,
    workers: {
      main: { module: workerModule("main"), delegates: ["reviewer"] },
      reviewer: { module: workerModule("reviewer"), sandbox: { restrict: "/src", readonly: true } },
    },
    onEvent: (e) => events.push(e),
  });
  try {
    say(JSON.stringify(await host.run("main", {}), null, 2));
  } finally {
    await host.close();
  }
  say("events:");
  for (const e of events) {
    if (e.type === "operation") continue;
    const who = "worker" in e ? ` ${e.worker}` : "";
    const where = "path" in e && e.path ? ` ${e.path}` : "";
    say(`  ${e.type}${who}${where}${"code" in e ? ` (${e.code})` : ""}`);
  }

  say("\nDone. Everything above ran for real in a temp directory, now removed.");
} finally {
  rmSync(dir, { recursive: true, force: true });
}
