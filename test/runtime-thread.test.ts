// biome-ignore-all lint/suspicious/noExplicitAny: hostile-input tests send and inspect loosely typed messages on purpose
/**
 * Real agent threads (built JS from dist/): results, stdio capture, errors
 * across the boundary, failures that must not hurt the host, the permission
 * model from inside a thread, and hostile workers on the raw port.
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { PathNotWritableError } from "../dist/src/index.js";
import { AgentThreadError, runAgentThread } from "../dist/src/threads/agent-thread.js";
import { computeExecArgv, detectPermissionFlag } from "../dist/src/threads/permissions.js";
import { assertBuilt, createSandboxForThreads, fixture } from "./conformance/thread.js";

beforeAll(assertBuilt);

let dir: string;
let marker: string;
let sandbox: ReturnType<typeof createSandboxForThreads>;

beforeEach(async () => {
  dir = await realpath(await mkdtemp(join(tmpdir(), "mountbox-thread-")));
  await mkdir(join(dir, "root"));
  await mkdir(join(dir, "ro"));
  await writeFile(join(dir, "root", "a.txt"), "A");
  await writeFile(join(dir, "outside.txt"), "secret");
  await writeFile(join(dir, "outside.json"), '{"secret":1}');
  marker = join(dir, "PWNED");
  sandbox = createSandboxForThreads({
    root: join(dir, "root"),
    mounts: [{ source: join(dir, "ro"), target: "/ro", readonly: true }],
  });
});
afterEach(() => rm(dir, { recursive: true, force: true }));

const run = (module: string, input: unknown, extra: Record<string, unknown> = {}) =>
  runAgentThread({ module: fixture(module), input, sandbox: sandbox as never, ...extra });

async function failure(p: Promise<unknown>): Promise<AgentThreadError> {
  const err = await p.then(
    () => {
      throw new Error("expected the agent to fail");
    },
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(AgentThreadError);
  return err as AgentThreadError;
}

describe("agent threads", () => {
  it("runs a worker, returns its result, captures stdio and ctx.log, with an empty env", async () => {
    const r = await run("basic-worker.js", { path: "/a.txt" });
    expect(r.value).toEqual({ text: "A", echo: { path: "/a.txt" }, envKeys: [] });
    expect(r.stdout).toBe("stdout line from the thread\n");
    expect(r.stderr).toBe("stderr line from the thread\n");
    expect(r.logs).toEqual([{ level: "info", message: "hello from ctx.log" }]);
  });

  it("never writes thread output through to the process's stdout", () => {
    const script = `
      import { runAgentThread } from ${JSON.stringify(pathToFileURL(fileURLToPath(new URL("../dist/src/threads/agent-thread.js", import.meta.url))).href)};
      import { createSandbox } from ${JSON.stringify(pathToFileURL(fileURLToPath(new URL("../dist/src/index.js", import.meta.url))).href)};
      const r = await runAgentThread({ module: ${JSON.stringify(fixture("basic-worker.js"))}, input: { path: "/a.txt" },
        sandbox: createSandbox({ root: ${JSON.stringify(join(dir, "root"))} }) });
      process.stdout.write("HOST:" + r.value.text);`;
    const child = spawnSync(process.execPath, ["--input-type=module", "-e", script], {
      encoding: "utf8",
    });
    expect(child.stderr).toBe("");
    expect(child.stdout).toBe("HOST:A");
  });

  it("keeps an error's class inside the thread", async () => {
    const r = await run("misbehave-worker.js", { mode: "catch-class" });
    expect(r.value).toEqual({
      instanceOk: true,
      name: "PathNotWritableError",
      code: "path_not_writable",
    });
  });

  it("reports a worker's uncaught sandbox error with its class as the cause", async () => {
    const e = await failure(run("misbehave-worker.js", { mode: "sandbox-error" }));
    expect(e.reason).toBe("threw");
    expect(e.cause).toBeInstanceOf(PathNotWritableError);
    expect((e.cause as PathNotWritableError).path).toBe("/ro/x.txt");
    expect(e.message).not.toContain(dir);
  });

  it("reports a thrown error", async () => {
    const e = await failure(run("misbehave-worker.js", { mode: "throw" }));
    expect(e.message).toMatchInlineSnapshot(`"The agent failed: TypeError: worker says no"`);
  });

  it("stops a looping worker at its timeout", async () => {
    const e = await failure(run("misbehave-worker.js", { mode: "loop" }, { timeoutMs: 300 }));
    expect(e.reason).toBe("timeout");
    expect(e.message).toMatchInlineSnapshot(
      `"The agent did not finish within 300 ms and was stopped."`,
    );
  });

  it("aborts on the caller's signal", async () => {
    const ac = new AbortController();
    const p = run("misbehave-worker.js", { mode: "wait-abort" }, { signal: ac.signal });
    setTimeout(() => ac.abort(), 100);
    expect((await failure(p)).reason).toBe("aborted");
  });

  it("stops a worker that exhausts its heap", async () => {
    const e = await failure(
      run(
        "misbehave-worker.js",
        { mode: "oom" },
        { resourceLimits: { maxOldGenerationSizeMb: 32 } },
      ),
    );
    expect(e.reason).toBe("out_of_memory");
  });

  it("reports a worker that exits, returns something uncloneable, or exports no worker", async () => {
    expect((await failure(run("misbehave-worker.js", { mode: "exit" }))).reason).toBe("exited");
    const u = await failure(run("misbehave-worker.js", { mode: "uncloneable" }));
    expect(u.message).toContain("could not be sent");
    const p = await failure(run("plain-export-worker.js", {}));
    expect(p.message).toContain("defineWorker");
  });

  it("runs a module inside the sandbox root, reading exactly its own file there", async () => {
    await writeFile(join(dir, "root", "sibling.txt"), "not for the thread");
    await writeFile(
      join(dir, "root", "w.js"),
      `import { readFileSync } from "node:fs";
export default async (input, ctx) => {
  const tryRead = (p) => { try { readFileSync(p); return "read"; } catch (e) { return e.code; } };
  return { own: tryRead(input.own), sibling: tryRead(input.sibling), port: await ctx.sandbox.readFile("/sibling.txt") };
};`,
    );
    const r = await runAgentThread({
      module: join(dir, "root", "w.js"),
      sandbox: sandbox as never,
      input: { own: join(dir, "root", "w.js"), sibling: join(dir, "root", "sibling.txt") },
    });
    expect(r.value).toEqual({
      own: "read",
      sibling: "ERR_ACCESS_DENIED",
      port: "not for the thread",
    });
  });

  it("refuses a grant that would contain a whole sandbox folder", async () => {
    await expect(
      run("basic-worker.js", { path: "/a.txt" }, { dependencies: [dir] }),
    ).rejects.toThrow(/contains the sandbox folder/);
    await expect(
      run("basic-worker.js", { path: "/a.txt" }, { dependencies: [join(dir, "ro")] }),
    ).rejects.toThrow(/contains the sandbox folder/);
  });

  it("refuses a declared package that is not installed, naming it", async () => {
    await expect(
      run("basic-worker.js", { path: "/a.txt" }, { dependencies: ["no-such-package-xyz"] }),
    ).rejects.toThrow(/Cannot find the package 'no-such-package-xyz'/);
  });
});

describe("the permission model inside a thread", () => {
  it("builds execArgv with one grant per path and the right flag", () => {
    const flag = detectPermissionFlag();
    const major = Number(process.versions.node.split(".")[0]);
    expect(flag).toBe(major >= 22 ? "--permission" : "--experimental-permission");
    const argv = computeExecArgv({ readPaths: ["/a", "/b"] });
    expect(argv.slice(0, 4)).toEqual([
      flag,
      "--interactive",
      "--allow-fs-read=/a",
      "--allow-fs-read=/b",
    ]);
    expect(argv.join(" ")).not.toMatch(/allow-fs-write|allow-child-process|allow-worker/);
    expect(() => computeExecArgv({ readPaths: ["/a,b"] })).toThrow(/comma/);
  });

  it("denies fs outside the grants, fs writes, child processes, nested workers", async () => {
    const r = await run("escape-worker.js", {
      outsideFile: join(dir, "outside.txt"),
      sandboxFile: join(dir, "root", "a.txt"),
      writeTarget: marker,
      outsideJsonUrl: pathToFileURL(join(dir, "outside.json")).href,
    });
    const v = r.value as Record<string, unknown>;
    expect(v).toMatchObject({
      fsReadOutside: "ERR_ACCESS_DENIED",
      fsReadSandbox: "ERR_ACCESS_DENIED",
      fsPromisesRead: "ERR_ACCESS_DENIED",
      fsWrite: "ERR_ACCESS_DENIED",
      childProcess: "ERR_ACCESS_DENIED",
      nestedWorker: "ERR_ACCESS_DENIED",
      nestedEvalWorker: "ERR_ACCESS_DENIED",
      hasGetBuiltinModule: true,
      getBuiltinModuleRead: "ERR_ACCESS_DENIED",
      getBuiltinModuleWrite: "ERR_ACCESS_DENIED",
      env: 0,
    });
    expect(existsSync(marker)).toBe(false);
    expect(v.importJsonOutside).toBe("ERR_ACCESS_DENIED");
    // A file grant is exact on every Node — also on Node ≥ 22 with the
    // repository as working folder, which `--interactive` keeps the thread
    // from reading (without it, Node grants a worker the working folder).
    expect(v.siblingOfModule).toBe("ERR_ACCESS_DENIED");
  });
});

describe("hostile workers on the raw port", () => {
  const code = () =>
    `process.getBuiltinModule("fs").writeFileSync(${JSON.stringify(marker)}, "x"); return 1`;
  const hostile = (input: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
    run("hostile-worker.js", { ...input, code: code() }, { dependencies: ["comlink"], ...extra });
  const served = { ok: true, value: "A" };

  it("gets an error for every Comlink GET/APPLY/CONSTRUCT path, and is still served", async () => {
    const r = await hostile({ attack: "comlink" });
    const results = r.value as { ok: boolean; message?: string }[];
    expect(results.at(-1)).toEqual(served);
    for (const x of results.slice(0, -1)) {
      expect(x.ok).toBe(false);
      expect(x.message).toBe("Comlink messages are not served; use ctx.sandbox.");
    }
    expect(existsSync(marker)).toBe(false);
  });

  it("gets an error for unknown ops, forged shapes and bad arguments, and is still served", async () => {
    const messages = [
      { id: 1, op: "constructor", args: [code()] },
      { id: 2, op: "__proto__", args: [] },
      { id: 3, op: "then", args: [] },
      { id: 4, op: "resolve", args: ["/a.txt"] },
      { id: "x", type: "SET", path: ["readFile"], value: 1 },
      { id: 5.5, op: "readFile", args: ["/a.txt"] },
      { id: 6, op: "writeFile", args: ["/a.txt", { length: 1 }] },
      { id: 7, op: "move", args: ["/a.txt", "/b.txt", { overwrite: "yes" }] },
    ];
    const r = await hostile({ attack: "raw", messages });
    const results = r.value as Record<string, any>[];
    expect(results.at(-1)).toEqual(served);
    for (const x of results.slice(0, -1)) {
      const isError = x.ok === false || x.value?.isError === true;
      expect(isError).toBe(true);
    }
    expect(existsSync(marker)).toBe(false);
    expect(existsSync(join(dir, "root", "b.txt"))).toBe(false);
  });

  it("gets a short refusal for a key of millions of control characters, and is still served", async () => {
    const r = await hostile({ attack: "hugeKey", chars: 1_000_000 });
    const results = r.value as Record<string, any>[];
    expect(results.at(-1)).toEqual(served);
    expect(results.slice(0, -1).map((x) => [x.ok, x.code, x.chars < 600])).toEqual([
      [false, "invalid_request", true],
      [false, "invalid_request", true],
      [false, "invalid_request", true],
    ]);
    expect(results[0]?.message).toMatch(/^unexpected key "(\\u0001){64}"…$/);
    expect(results[1]?.message).toMatch(/unknown edit key "(\\u0001){64}"…/);
    expect(results[2]?.message).toMatch(/unknown option "(\\u0001){64}"…/);
  });

  it("gets an error for a transferred port, and is still served", async () => {
    const r = await hostile({ attack: "port" });
    const [reply, after] = r.value as Record<string, any>[];
    expect(reply?.ok).toBe(false);
    expect(reply?.error.code).toBe("invalid_request");
    expect(after).toEqual(served);
  });

  it("cannot even send a non-cloneable payload; the host still serves", async () => {
    const r = await hostile({ attack: "uncloneable" });
    const [attempt, after] = r.value as Record<string, any>[];
    expect(attempt?.ok).toBe(false);
    expect(attempt?.name).toBe("DataCloneError");
    expect(after).toEqual(served);
  });

  it("is terminated for an oversized message, which changes nothing", async () => {
    const e = await failure(
      hostile({ attack: "oversize", bytes: 2 * 1024 * 1024 }, { maxMessageBytes: 1024 * 1024 }),
    );
    expect(e.reason).toBe("oversize");
    expect(e.message).toMatchInlineSnapshot(
      `"The agent sent a message of 2097168 bytes (limit 1048576); it was stopped."`,
    );
    expect(existsSync(join(dir, "root", "big.txt"))).toBe(false);
    // The host goes on serving other agents.
    expect((await run("basic-worker.js", { path: "/a.txt" })).value).toMatchObject({ text: "A" });
  });
});
