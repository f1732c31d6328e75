/**
 * `mountbox init [dir]`: scaffolds a program folder that `mountbox check`
 * accepts and `mountbox run` runs offline — program.yaml, a code worker
 * (`main`), an LLM worker (`summarizer`, run only when named, with a model
 * given on the command line), sample notes, the folder `main` writes to, a
 * .gitignore and a README.md.
 *
 * It never overwrites: when any file it would write is there already it
 * writes nothing (exit 2). Files are created exclusively (`wx`), so one that
 * appears between the check and the write is not overwritten either; what
 * this run wrote is then removed again. Everything printed names files
 * relative to the target folder, and the folder relative to the current
 * one: never a host path.
 */
import { lstat, mkdir, rmdir, stat, unlink, writeFile } from "node:fs/promises";
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { parseArgs } from "node:util";
import { escapeControl } from "../errors/index.js";
import { type CliIo, UsageError } from "./cli-io.js";

/** Help of `mountbox init`. */
export const INIT_HELP = `Usage: mountbox init [dir]

Creates a program folder in [dir] (default: the current folder; created if
missing): program.yaml with a sandbox over the folder, a code worker
(workers/main.js) that reads the notes and writes to out/, an LLM worker
(workers/summarizer.worker) that may only read notes/, two sample notes, a
.gitignore and a README.md. 'mountbox run [dir]' runs main with no model;
the LLM worker runs when named, with a model given by --model.

Writes nothing if any of these files exists already.

Options:
  -h, --help   Show this help

Exit status: 0 when the folder was made; 2 on bad usage or when a file is
there already; 1 if a file could not be written (what was written is removed).
`;

/** The LLM worker's name (its file is `workers/<name>.worker`). */
const LLM_WORKER = "summarizer";
/** The model name the LLM worker asks for, and an example of what to map it to. */
const MODEL_NAME = "default";
const MODEL_EXAMPLE = "openai:gpt-5-mini";
/** Input for the LLM worker: its prompt (a JSON string on the command line). */
const LLM_INPUT = `'"Summarize the notes."'`;

/** One entry of the scaffold: its path relative to the program folder, and a file's text. */
interface ScaffoldEntry {
  /** Ends with '/' for a folder. */
  path: string;
  /** A file's text; undefined for a folder. */
  text?: string;
}

/** Runs `mountbox init`; returns the exit status. */
export async function runInit(argv: readonly string[], io: CliIo): Promise<number> {
  let parsed: ReturnType<typeof parseInitArgs>;
  try {
    parsed = parseInitArgs(argv);
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  if (parsed.values.help) {
    io.stdout(INIT_HELP);
    return 0;
  }
  const [dir = ".", ...extra] = parsed.positionals;
  if (extra.length > 0) throw new UsageError(`unexpected argument '${extra[0]?.slice(0, 40)}'`);
  if (dir === "") throw new UsageError("the folder name is empty");
  const target = resolve(dir);
  const shown = showFolder(target);
  const where = shown === "." ? "this folder" : `'${shown}'`;

  const targetType = await stat(target).then(
    (s) => (s.isDirectory() ? "folder" : "other"),
    () => "missing",
  );
  if (targetType === "other") {
    io.stderr(`mountbox: '${shown}' exists and is not a folder; nothing was written.\n`);
    return 2;
  }
  const entries = buildScaffold(programName(target));
  const files = entries.filter((e) => e.text !== undefined);
  const folders = listFolders(entries.map((e) => e.path));
  if (targetType === "folder") {
    const clash = await findClash(target, folders, files);
    if (clash !== undefined) {
      const what = escapeControl(clash.path);
      io.stderr(
        clash.folder
          ? `mountbox: ${what} in ${where} is not a folder (init would write into it); nothing was written.\n`
          : `mountbox: ${what} exists already in ${where}; init never overwrites a file, so nothing was written.\n` +
              `Run init in a new or empty folder, or move ${what} away.\n`,
      );
      return 2;
    }
  }

  const made: string[] = [];
  let failed: { path: string; code: string } | undefined;
  let topCreated: string | undefined;
  try {
    topCreated = await mkdir(target, { recursive: true });
  } catch (err) {
    io.stderr(`mountbox: cannot create the folder '${shown}' (${errorCode(err)}).\n`);
    return 1;
  }
  for (const folder of folders) {
    try {
      await mkdir(join(target, folder));
      made.push(`${folder}/`);
    } catch (err) {
      if (errorCode(err) === "EEXIST" && (await isRealFolder(join(target, folder)))) continue;
      failed = { path: `${folder}/`, code: errorCode(err) };
      break;
    }
  }
  for (const file of failed === undefined ? files : []) {
    try {
      // Exclusive: a file that appeared since the check is not overwritten.
      await writeFile(join(target, file.path), file.text ?? "", { flag: "wx" });
      made.push(file.path);
    } catch (err) {
      failed = { path: file.path, code: errorCode(err) };
      break;
    }
  }
  if (failed !== undefined) {
    await removeMade(target, made, topCreated);
    const why =
      failed.code === "EEXIST"
        ? "appeared while init was writing; it was not overwritten"
        : `could not be written (${failed.code})`;
    io.stderr(
      `mountbox: ${escapeControl(failed.path)} in ${where} ${why}; what init had written was removed.\n`,
    );
    return failed.code === "EEXIST" ? 2 : 1;
  }

  const cmd = quoteForShell(shown);
  const check = `mountbox check ${cmd}`;
  const run = `mountbox run ${cmd}`;
  const width = Math.max(check.length, run.length) + 2;
  io.stdout(
    [
      `Created in ${where}:`,
      ...wrapList(
        entries.map((e) => e.path),
        "  ",
        78,
      ),
      "",
      "Next steps:",
      `  ${check.padEnd(width)}# validate it: what each worker may read and write`,
      `  ${run.padEnd(width)}# run main, a code worker (no model needed)`,
      `  # the LLM worker, with its model '${MODEL_NAME}' mapped to a provider's model`,
      "  # (install 'ai' and the provider's package, and set its API key):",
      `  ${run} ${LLM_WORKER} --input ${LLM_INPUT} --model ${MODEL_NAME}=${MODEL_EXAMPLE}`,
      "",
    ].join("\n"),
  );
  return 0;
}

/** `items` joined with ", " into lines of at most `width` characters (a long item alone). */
function wrapList(items: string[], indent: string, width: number): string[] {
  const lines: string[] = [];
  let line = "";
  for (const [i, item] of items.entries()) {
    const word = i < items.length - 1 ? `${item},` : item;
    if (line !== "" && indent.length + line.length + 1 + word.length > width) {
      lines.push(indent + line);
      line = word;
    } else line = line === "" ? word : `${line} ${word}`;
  }
  if (line !== "") lines.push(indent + line);
  return lines;
}

function parseInitArgs(argv: readonly string[]) {
  return parseArgs({
    args: [...argv],
    allowPositionals: true,
    strict: true,
    options: { help: { type: "boolean", short: "h" } },
  });
}

/**
 * The folder as the user should type it next: relative to the current
 * folder (`.` for itself), so an absolute argument is not echoed as a host
 * path; control characters escaped.
 */
function showFolder(target: string): string {
  const rel = relative(process.cwd(), target);
  if (rel === "") return ".";
  // Another drive (Windows): no relative form exists; the last name only.
  if (isAbsolute(rel)) return escapeControl(basename(target));
  return escapeControl(rel.split(sep).join("/"));
}

/** A word a POSIX shell reads back as it is: quoted only when it needs to be. */
function quoteForShell(word: string): string {
  return /^[A-Za-z0-9._/@%+=:,-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`;
}

/**
 * The program's `name`: the folder's name, lower-cased, with runs of
 * anything but letters, digits, '.', '_' and '-' made one '-' (it is shown
 * in events and messages; keep it plain).
 */
function programName(target: string): string {
  const name = basename(target)
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, "-")
    .replace(/^[^a-z0-9]+|[^a-z0-9]+$/g, "")
    .slice(0, 64);
  return name === "" ? "my-program" : name;
}

/** `name` as a YAML scalar: plain when YAML reads it back as that string, else quoted. */
function yamlString(name: string): string {
  const plain =
    /^[a-z][a-z0-9._-]*$/.test(name) && !/^(true|false|null|yes|no|on|off|y|n)$/.test(name);
  return plain ? name : JSON.stringify(name);
}

/** Every folder the entries are or need, parents first, without the target itself. */
function listFolders(paths: string[]): string[] {
  const folders = new Set<string>();
  for (const p of paths) {
    const parts = p.replace(/\/$/, "").split("/");
    const upTo = p.endsWith("/") ? parts.length : parts.length - 1;
    for (let i = 1; i <= upTo; i++) folders.add(parts.slice(0, i).join("/"));
  }
  return [...folders].sort(
    (a, b) => a.split("/").length - b.split("/").length || a.localeCompare(b),
  );
}

/**
 * What stops init in an existing folder: a folder it needs that is there as
 * something else (a link included: init writes only into real folders
 * inside the target), or the first file it would write that is there (as
 * anything: a file, a folder, a link). Its path is relative to the target.
 */
async function findClash(
  target: string,
  folders: string[],
  files: ScaffoldEntry[],
): Promise<{ path: string; folder: boolean } | undefined> {
  for (const folder of folders) {
    const st = await lstat(join(target, folder)).catch(() => undefined);
    if (st !== undefined && !st.isDirectory()) return { path: folder, folder: true };
  }
  for (const file of files) {
    const st = await lstat(join(target, file.path)).catch(() => undefined);
    if (st !== undefined) return { path: file.path, folder: false };
  }
  return undefined;
}

async function isRealFolder(path: string): Promise<boolean> {
  return (await lstat(path).catch(() => undefined))?.isDirectory() === true;
}

/**
 * Undoes a run that stopped part way: the files it wrote, then the folders
 * it made (deepest first, only while empty), then the target and the
 * parents `mkdir` made for it. Failures are ignored: this is cleanup.
 */
async function removeMade(target: string, made: string[], topCreated: string | undefined) {
  for (const p of made.filter((m) => !m.endsWith("/")))
    await unlink(join(target, p)).catch(() => undefined);
  const folders = made.filter((m) => m.endsWith("/")).reverse();
  for (const f of folders) await rmdir(join(target, f)).catch(() => undefined);
  if (topCreated === undefined) return;
  for (let d = target; ; d = dirname(d)) {
    const removed = await rmdir(d).then(
      () => true,
      () => false,
    );
    if (!removed || d === topCreated) break;
  }
}

function errorCode(err: unknown): string {
  return (err as NodeJS.ErrnoException).code ?? "error";
}

/** The scaffold's files and folders, in the order they are listed. */
function buildScaffold(name: string): ScaffoldEntry[] {
  return [
    {
      path: "program.yaml",
      text: `# program.yaml — a mountbox program: one sandbox, and the workers that share it
name: ${yamlString(name)}
sandbox: { root: "." } # this folder is the sandbox's "/"; program.yaml and workers/ are never writable by an agent
workers: # code workers (a JS module each) go here; LLM workers are workers/<name>.worker files
  main:
    module: ./workers/main.js # runs in its own thread; every file it touches goes through ctx.sandbox
    sandbox: { allow_read: [/], allow_write: [/out] } # narrows what main gets: read everything, write only /out
    # delegates: [${LLM_WORKER}] # workers main may call with ctx.delegate (calling an LLM worker needs --model)
`,
    },
    {
      path: "workers/main.js",
      text: `// workers/main.js — a code worker: it sees files only through ctx.sandbox (virtual paths)
import { defineWorker } from "mountbox/worker";

export default defineWorker(async (input, ctx) => {
  const notes = await ctx.sandbox.listFiles("/notes", "*.md"); // sorted virtual paths
  const titles = [];
  for (const path of notes) {
    const text = await ctx.sandbox.readFile(path);
    titles.push(text.split("\\n")[0].replace(/^#+\\s*/, ""));
  }
  ctx.log(\`read \${notes.length} notes\`);

  // /out is the one folder main may write (its sandbox key in program.yaml).
  const list = titles.map((t) => \`- \${t}\\n\`).join("");
  await ctx.sandbox.writeFile("/out/titles.md", \`# Note titles\\n\\n\${list}\`);

  // Anything else is refused with an error that has a stable code.
  let refused;
  try {
    await ctx.sandbox.writeFile("/notes/hello.md", "overwritten");
  } catch (e) {
    refused = e.code; // "path_not_writable"
  }
  return { notes, wrote: "/out/titles.md", refused };
});
`,
    },
    {
      path: `workers/${LLM_WORKER}.worker`,
      text: `---
# An LLM worker: no module; its instructions are the text after this front matter.
description: summarizes the notes in /notes
model: ${MODEL_NAME} # a name the host maps to a real model: mountbox run … --model ${MODEL_NAME}=${MODEL_EXAMPLE}
sandbox: { restrict: /notes, readonly: true } # it sees /notes only, and cannot write
tools: [list_files, read_file] # the tools its model is offered (default: every file tool its sandbox allows)
max_steps: 8 # at most this many model steps in one run
---
You are the summarizer. List the files under /notes with list_files, read
each with read_file, and answer with a short summary of what they say, a
line or two per note. Say only what the files say.
`,
    },
    {
      path: "notes/hello.md",
      text: `# Hello

This note is in the sandbox. The main worker lists /notes, reads each note
and writes their titles to /out/titles.md; the summarizer reads them too.
`,
    },
    {
      path: "notes/ideas.md",
      text: `# Ideas

- Give main a real job: count words, find TODOs, check links.
- Let main delegate to the summarizer (delegates in program.yaml).
- Run 'mountbox check .' after each change to see who may touch what.
`,
    },
    { path: "out/" },
    {
      path: ".gitignore",
      text: `# audit logs (mountbox run --audit FILE.jsonl), what main writes, installed packages
*.jsonl
out/
node_modules/
`,
    },
    {
      path: "README.md",
      text: `# ${name}: a mountbox program (program.yaml, workers/main.js, workers/${LLM_WORKER}.worker)
- \`npx mountbox check .\` validates it and prints what each worker may read and write.
- \`npx mountbox run .\` runs main; \`npx mountbox run . ${LLM_WORKER} --input ${LLM_INPUT} --model ${MODEL_NAME}=${MODEL_EXAMPLE}\` runs the LLM worker.
`,
    },
  ];
}
