/**
 * Issue 18, finding 3: descriptors of the host process are out of an agent
 * thread's reach. The permission model checks paths, never descriptors, and
 * a thread shares the process's descriptor table: without the descriptor
 * lockdown an agent finds the audit log's descriptor and rewrites it, reads
 * a file another agent has open, writes to the host's stdout, or closes the
 * host's descriptors and aborts it. Real threads, real host, real files;
 * what could end the host runs in a child-process host.
 */
import { spawnSync } from "node:child_process";
import {
  appendFileSync,
  closeSync,
  openSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  truncateSync,
} from "node:fs";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHost as createBuiltHost } from "../dist/src/index.js";
import { runAgentThread } from "../dist/src/threads/agent-thread.js";
import type { Host, HostOptions } from "../src/index.js";
import { assertBuilt, createSandboxForThreads, fixture } from "./conformance/thread.js";
import { makeTempDir, removeDir, writeTree } from "./helpers/tree.js";

const createHost = createBuiltHost as unknown as (o: HostOptions) => Promise<Host>;
const worker = fixture("descriptor-worker.js");
const SECRET = "SECRET-ONLY-FOR-THE-OTHER-AGENT";
const HOST_FDS =
  /^fs\.\w+ on descriptor \d+ is not available in an agent thread: descriptors of the host process/;

type Attempt = { ok: boolean; value?: string; message?: string };

let base: string;
beforeAll(() => {
  assertBuilt();
  base = makeTempDir("mountbox-fds-");
  writeTree(base, { pub: { "p.txt": "public" }, secret: { "s.txt": SECRET } });
});
afterAll(() => removeDir(base));

const refused = (
  r: Attempt | undefined,
  what: RegExp = /is not available in an agent thread: descriptors of the host process/,
) => {
  expect(r?.ok, JSON.stringify(r)).toBe(false);
  expect(r?.message).toMatch(what);
};

/** The descriptor this process holds open on `file` (from /proc/self/fd). */
function descriptorOf(file: string): number {
  for (const name of readdirSync("/proc/self/fd")) {
    try {
      if (readlinkSync(`/proc/self/fd/${name}`) === file) return Number(name);
    } catch {
      // Closed while we looked.
    }
  }
  throw new Error(`no descriptor open on ${file}`);
}

const runThread = async (input: unknown, dependencies?: string[]) => {
  const r = await runAgentThread({
    module: worker,
    input,
    sandbox: createSandboxForThreads({ root: join(base, "pub") }) as never,
    timeoutMs: 30_000,
    ...(dependencies ? { dependencies } : {}),
  });
  return r;
};

const distUrl = (p: string) =>
  pathToFileURL(fileURLToPath(new URL(`../dist/src/${p}`, import.meta.url))).href;

/** Runs one agent thread in a fresh host process; returns its stdout lines and how it ended. */
function runInChildHost(input: unknown) {
  const body = `
    import { runAgentThread } from ${JSON.stringify(distUrl("threads/agent-thread.js"))};
    import { createSandbox } from ${JSON.stringify(distUrl("index.js"))};
    const r = await runAgentThread({ module: ${JSON.stringify(worker)}, input: ${JSON.stringify(input)},
      sandbox: createSandbox({ root: ${JSON.stringify(join(base, "pub"))} }) });
    await new Promise((r) => setTimeout(r, 200));
    console.log(JSON.stringify(r.value));
    console.log("HOST ALIVE");`;
  const child = spawnSync(process.execPath, ["--input-type=module", "-e", body], {
    encoding: "utf8",
    timeout: 60_000,
  });
  const lines = child.stdout.trim().split("\n");
  return {
    ...child,
    lines,
    value: () => JSON.parse(lines.at(-2) ?? "null") as Record<string, Attempt>,
  };
}

describe("host descriptors from agent threads", () => {
  it("a thread cannot find, truncate or forge the audit log through its descriptor", async () => {
    const file = join(base, "audit.jsonl");
    const host = await createHost({
      sandbox: { root: "pub" },
      basePath: base,
      workers: { main: { module: worker } },
      auditLog: file,
    });
    try {
      const fd = descriptorOf(file);
      const r = (await host.run("main", { mode: "scan", fd })) as Record<string, Attempt> & {
        found: number[];
      };
      // Not one descriptor of the process answers an fstat.
      expect(r.found).toEqual([]);
      for (const key of [
        "fstat",
        "esmFstat",
        "builtinFstat",
        "nsFstat",
        "ftruncate",
        "ftruncateCb",
      ])
        refused(r[key], HOST_FDS);
      for (const key of ["truncate", "write", "esmWrite", "writeCb", "writev", "writeFile"])
        refused(r[key], HOST_FDS);
      for (const key of ["appendFile", "writeFileCb", "fsync", "fchmod", "futimes"])
        refused(r[key], HOST_FDS);
      refused(r.writeStream, /^fs\.createWriteStream on descriptor \d+ is not available/);
      // fs.promises takes no descriptor numbers at all.
      expect(r.promisesWrite?.ok).toBe(false);
      // The log is whole and the host still audits: the next run is logged too.
      await host.run("main", { mode: "scan", fd: -1 });
      const lines = readFileSync(file, "utf8").trimEnd().split("\n");
      expect(lines.map((l) => JSON.parse(l).op)).toEqual(Array(4).fill("readFile"));
    } finally {
      await host.close();
    }
  });

  for (const how of ["truncated", "appended to"] as const) {
    it(`an audit log ${how} by someone else stops the host loudly`, async () => {
      const script = fixture("approvals/script.js");
      const file = join(base, `audit-${how.replace(/ /g, "-")}.jsonl`);
      const host = await createHost({
        sandbox: { root: "pub" },
        basePath: base,
        workers: { main: { module: script } },
        auditLog: file,
      });
      try {
        const steps = [{ op: "readFile", args: ["/p.txt"] }];
        await host.run("main", { steps });
        expect(readFileSync(file, "utf8")).toContain('"op":"readFile"');
        // Same file, same inode: only its size tells.
        if (how === "truncated") truncateSync(file, 0);
        else appendFileSync(file, `${JSON.stringify({ type: "operation", op: "forged" })}\n`);
        const e = await host.run("main", { steps }).catch((err: Error) => err);
        expect((e as Error).message).toBe(
          "I/O error during audit: the audit log could not be written; this host runs no more agents.",
        );
      } finally {
        await host.close();
      }
    });
  }

  it("a /pub-only thread cannot pread a file the host holds open for another agent", async () => {
    const fd = openSync(join(base, "secret", "s.txt"), "r");
    try {
      const r = (await runThread({ mode: "pread", fd })).value as Record<string, Attempt>;
      expect(JSON.stringify(r)).not.toContain(SECRET);
      for (const key of ["readSync", "readvSync", "readCb", "readFileSync", "readFileSyncBuffer"])
        refused(r[key], HOST_FDS);
      refused(r.readFileCb, HOST_FDS);
      for (const key of ["readStream", "readStreamClass", "readStreamCtor"])
        refused(r[key], /^fs\.(createReadStream|ReadStream) on descriptor \d+ is not available/);
      // By path, the permission model refuses it.
      for (const key of ["procFd", "devFd"])
        refused(r[key], /ERR_ACCESS_DENIED|permission|Access/i);
      // The host's descriptor is still open and whole.
      expect(readFileSync(fd, "utf8")).toBe(SECRET);
    } finally {
      closeSync(fd);
    }
  });

  it("closing descriptors 3..63 is refused and the host survives (child process)", () => {
    const child = runInChildHost({ mode: "close", fd: 5 });
    expect(child.signal, child.stderr).toBeNull();
    expect(child.status, child.stderr).toBe(0);
    expect(child.lines.at(-1)).toBe("HOST ALIVE");
    const out = child.value();
    // Only the callback face is listed (every refused closeSync was left out).
    expect(Object.keys(out)).toEqual(["closeCb"]);
    refused(out.closeCb, /^fs\.close on descriptor 5 is not available/);
  });

  it("a thread cannot write to the host's stdout or stderr directly (child process)", () => {
    const marker = "FORGED-HOST-OUTPUT";
    const child = runInChildHost({ mode: "stdio", marker });
    expect(child.status, child.stderr).toBe(0);
    expect(child.stdout).not.toContain(marker);
    expect(child.stderr).not.toContain(marker);
    const out = child.value();
    for (const key of ["write1", "write2", "writeFile1", "read0"]) refused(out[key], HOST_FDS);
    refused(out.stream1, /^fs\.createWriteStream on descriptor 1 is not available/);
    refused(out.tty1, /^tty\.WriteStream is not available in an agent thread/);
    refused(out.append2, /ERR_ACCESS_DENIED|permission|Access/i);
  });

  it("sockets, tty, dgram, FileHandle and handles cannot adopt a descriptor", async () => {
    const fd = openSync(join(base, "secret", "s.txt"), "r");
    try {
      const r = (await runThread({ mode: "handles", fd })).value as Record<string, Attempt>;
      for (const key of ["socket", "stream", "socketCtor"])
        refused(r[key], /^net\.(Socket|Stream) on descriptor \d+ is not available/);
      for (const key of ["connect", "createConnection"])
        refused(r[key], /^net\.(connect|createConnection) on descriptor \d+ is not available/);
      for (const key of ["listen", "listenHandle"])
        refused(r[key], /^net\.Server#listen on descriptor \d+ is not available/);
      refused(r.serverHandle, /^net\._createServerHandle is not available/);
      refused(r.pipeOpen, /^net handle open\(fd\) is not available/);
      refused(r.ttyWrite, /^tty\.WriteStream is not available/);
      refused(r.ttyRead, /^tty\.ReadStream is not available/);
      refused(r.dgramBind, /^dgram\.Socket#bind on descriptor \d+ is not available/);
      if (r.dgramHandle?.value !== "absent" || Number(process.versions.node.split(".")[0]) < 26)
        refused(r.dgramHandle, /^dgram\._createSocketHandle is not available/);
      refused(r.udpOpen, /^dgram handle open\(fd\) is not available/);
      refused(r.udp6Open, /^dgram handle open\(fd\) is not available/);
      refused(r.udpLookupOpen, /^dgram handle open\(fd\) is not available/);
      refused(r.readStream, /^fs\.createReadStream on descriptor \d+ is not available/);
      refused(r.promisesOpen, /^fs\.promises\.open \(FileHandle\) is not available/);
      refused(r.fileHandleCtor, /^fs\.promises\.open \(FileHandle\) is not available/);
      // fs.Utf8Stream exists from Node 24.6 on.
      if (r.utf8Stream?.value !== "undefined")
        refused(r.utf8Stream, /^fs\.Utf8Stream on descriptor \d+ is not available/);
      refused(r.forkChild, /^child_process\._forkChild is not available/);
      refused(r.http2, /^http2\.createServer \(respondWithFD\) is not available/);
      refused(r.http2Client, /^http2\.connect \(respondWithFD\) is not available/);
      refused(r.binding, /^process\.binding is not available/);
      refused(r.linkedBinding, /^process\._linkedBinding is not available/);
      expect(r.internalBinding).toEqual({ ok: false });
      refused(r.undo, /read only|read-only/);
    } finally {
      closeSync(fd);
    }
  });

  it("a worker still loads CommonJS and ESM dependencies, reads its own files and prints", async () => {
    const r = await runThread({ mode: "legit" }, ["escape-html", "comlink"]);
    const v = r.value as Record<string, unknown>;
    expect(v.cjs).toBe("&lt;a&gt;");
    expect(v.esm).toBe("&lt;b&gt;");
    expect(v.comlink).toBe("function");
    expect(v.head).toBe("// Test fixt");
    const size = readFileSync(worker).length;
    expect(v.sizes).toEqual([size, readFileSync(worker, "utf8").length, size, size, size, size]);
    // A descriptor the thread closed is no longer its own.
    refused(v.afterClose as Attempt, HOST_FDS);
    expect(r.stdout).toBe("console.log from the thread\n");
  });
});
