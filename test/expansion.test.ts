/**
 * Dynamic sandbox expansion across real threads (issue 13, seed 003): grant
 * once/session, denial, the ceiling, a callee bounded by its caller's
 * effective sandbox, describe() showing grants, nothing persisted, and
 * suggested sandboxes that round-trip through program.yaml.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHost as createBuiltHost, loadProgram } from "../dist/src/index.js";
import type { ApprovalRequest, Host, HostOptions, WorkerSpec } from "../src/index.js";
import { assertBuilt } from "./conformance/thread.js";
import { makeTempDir, removeDir, writeTree } from "./helpers/tree.js";

const createHost = createBuiltHost as unknown as (o: HostOptions) => Promise<Host>;
const script = fileURLToPath(new URL("./fixtures/approvals/script.js", import.meta.url));

let base: string;
beforeAll(() => {
  assertBuilt();
  base = makeTempDir();
  writeTree(join(base, "project"), {
    docs: { "a.md": "A" },
    src: { "a.ts": "a", deep: { "d.ts": "d" } },
    out: { "o.txt": "o" },
  });
  writeTree(join(base, "secret"), { "s.txt": "S" });
});
afterAll(() => removeDir(base));

type Step = { op: string; args?: unknown[]; worker?: string; input?: unknown };
type Outcome = { ok: boolean; value?: unknown; code?: string; message?: string };

const workers = (helper: WorkerSpec["sandbox"] = { allowRead: "/docs" }) => ({
  main: { module: script, delegates: ["helper"], sandbox: { allowRead: "/docs" } },
  helper: { module: script, sandbox: helper },
});

function hostWith(
  decide: (r: ApprovalRequest) => "once" | "session" | "deny",
  seen: string[],
  extra: Partial<HostOptions> = {},
): Promise<Host> {
  return createHost({
    sandbox: { root: "project", mounts: ["secret:/secret"] },
    basePath: base,
    workers: workers(),
    dynamic: { enabled: true },
    onApproval: (r) => {
      seen.push(`${r.agentId} ${r.operation} ${r.access ?? ""} ${r.path}`);
      return decide(r);
    },
    ...extra,
  });
}

const run = (h: Host, steps: Step[]) => h.run("main", { steps }) as Promise<Outcome[]>;

describe("dynamic expansion", () => {
  it("is off by default: access outside the sandbox fails without asking", async () => {
    const seen: string[] = [];
    const host = await hostWith(() => "session", seen, { dynamic: { enabled: false } });
    try {
      const [r] = await run(host, [{ op: "readFile", args: ["/src/a.ts"] }]);
      expect(r?.code).toBe("path_not_in_sandbox");
      expect(seen).toEqual([]);
    } finally {
      await host.close();
    }
  });

  it("once widens one operation; session widens the rest of the run and shows in describe()", async () => {
    const seen: string[] = [];
    let answer: "once" | "session" = "once";
    const host = await hostWith(() => answer, seen);
    try {
      const once = await run(host, [
        { op: "readFile", args: ["/src/a.ts"] },
        { op: "readFile", args: ["/src/a.ts"] },
        { op: "describe" },
      ]);
      expect(once.map((o) => o.ok)).toEqual([true, true, true]);
      expect((once[2]!.value as { readable: string[] }).readable).toEqual(["/docs"]);
      answer = "session";
      const session = await run(host, [
        { op: "readFile", args: ["/src/deep/d.ts"] },
        { op: "readFile", args: ["/src/deep/d.ts"] },
        { op: "writeFile", args: ["/src/deep/n.ts", "n"] },
        { op: "editFile", args: ["/src/deep/n.ts", [{ oldText: "n", newText: "m" }]] },
        { op: "describe" },
      ]);
      expect(session.map((o) => o.ok)).toEqual([true, true, true, true, true]);
      expect(session[4]?.value).toMatchObject({
        readable: ["/docs", "/src/deep"],
        writable: ["/src/deep"],
      });
      expect(seen).toEqual([
        "a1 expand read /src",
        "a1 expand read /src",
        "a2 expand read /src/deep",
        "a2 expand write /src/deep",
      ]);
      // Never persisted: a later run starts from its configured sandbox.
      const later = await run(host, [{ op: "describe" }]);
      expect((later[0]!.value as { readable: string[] }).readable).toEqual(["/docs"]);
    } finally {
      await host.close();
    }
  });

  it("deny fails with an actionable message", async () => {
    const host = await hostWith(() => "deny", []);
    try {
      const [r] = await run(host, [{ op: "writeFile", args: ["/out/x.txt", "x"] }]);
      expect(r).toMatchInlineSnapshot(`
        {
          "code": "approval_denied",
          "message": "Access denied: write access to '/out' is outside this agent's sandbox, and widening it was not approved. Do not retry the same request; choose another path or report that you could not do this.",
          "ok": false,
        }
      `);
    } finally {
      await host.close();
    }
  });

  it("never goes beyond the ceiling (no question is even asked)", async () => {
    const seen: string[] = [];
    const host = await hostWith(() => "session", seen, {
      dynamic: { enabled: true, ceiling: ["/src", "/docs"] },
    });
    try {
      const out = await run(host, [
        { op: "readFile", args: ["/secret/s.txt"] },
        { op: "readFile", args: ["/out/o.txt"] },
        { op: "readFile", args: ["/src/a.ts"] },
      ]);
      expect(out.map((o) => o.code ?? "ok")).toEqual([
        "path_not_in_sandbox",
        "path_not_in_sandbox",
        "ok",
      ]);
      expect(seen).toEqual(["a1 expand read /src"]);
    } finally {
      await host.close();
    }
  });

  it("bounds a callee by its caller's effective sandbox, and does not pass grants down", async () => {
    const seen: string[] = [];
    const host = await hostWith(() => "session", seen);
    try {
      const out = await run(host, [
        { op: "readFile", args: ["/src/a.ts"] },
        {
          op: "delegate",
          worker: "helper",
          input: {
            steps: [
              { op: "readFile", args: ["/src/a.ts"] },
              { op: "readFile", args: ["/out/o.txt"] },
            ],
          },
        },
      ]);
      expect(out[1]?.value).toMatchObject([
        { ok: true, value: "a" },
        { ok: false, code: "path_not_in_sandbox" },
      ]);
      expect(seen).toEqual(["a1 expand read /src", "a2 expand read /src"]);
    } finally {
      await host.close();
    }
  });

  it("suggests sandbox blocks that grant exactly what was approved (round trip through program.yaml)", async () => {
    const host = await hostWith(() => "session", []);
    try {
      await run(host, [
        { op: "readFile", args: ["/src/a.ts"] },
        { op: "writeFile", args: ["/out/new.txt", "x"] },
      ]);
      const suggested = host.suggestedSandboxes();
      expect(Object.keys(suggested)).toEqual(["main"]);
      expect(suggested.main?.sandbox).toEqual({
        allowRead: ["/docs", "/out", "/src"],
        allowWrite: ["/out"],
      });
      expect(suggested.main?.yaml).toMatchInlineSnapshot(`
        "sandbox:
          allow_read:
            - "/docs"
            - "/out"
            - "/src"
          allow_write:
            - "/out"
        "
      `);
    } finally {
      await host.close();
    }
    const dir = join(base, "program");
    const yaml = host.suggestedSandboxes().main!.yaml;
    writeTree(dir, {});
    writeFileSync(
      join(dir, "program.yaml"),
      `sandbox: { root: "../project" }\nworkers:\n  main:\n    module: ${JSON.stringify(script)}\n${yaml
        .split("\n")
        .map((l) => (l ? `    ${l}` : l))
        .join("\n")}`,
    );
    const options = await loadProgram(dir);
    const seen: string[] = [];
    const again = await createHost({
      ...options,
      onApproval: (r) => {
        seen.push(r.path);
        return "deny";
      },
    });
    try {
      const out = await run(again, [
        { op: "readFile", args: ["/src/a.ts"] },
        { op: "writeFile", args: ["/out/new2.txt", "x"] },
        { op: "writeFile", args: ["/src/x.ts", "x"] },
        { op: "readFile", args: ["/secret/s.txt"] },
        { op: "describe" },
      ]);
      expect(out.map((o) => o.code ?? "ok")).toEqual([
        "ok",
        "ok",
        "path_not_writable",
        "path_not_in_sandbox",
        "ok",
      ]);
      expect(out[4]?.value).toMatchObject({
        readable: ["/docs", "/out", "/src"],
        writable: ["/out"],
      });
      expect(seen).toEqual([]);
    } finally {
      await again.close();
    }
  });

  it("is configured by program.yaml's sandbox block", async () => {
    const dir = join(base, "program-dynamic");
    writeTree(dir, {});
    writeFileSync(
      join(dir, "program.yaml"),
      [
        'sandbox: { root: "../project", dynamic: { enabled: true, ceiling: [/src] } }',
        "workers:",
        `  main: { module: ${JSON.stringify(script)}, sandbox: { allow_read: [/docs] } }`,
        "",
      ].join("\n"),
    );
    const seen: string[] = [];
    const host = await createHost({
      ...(await loadProgram(dir)),
      onApproval: (r) => {
        seen.push(`${r.operation} ${r.access} ${r.path}`);
        return "once";
      },
    });
    try {
      const out = await run(host, [
        { op: "readFile", args: ["/src/a.ts"] },
        { op: "readFile", args: ["/out/o.txt"] },
      ]);
      expect(out.map((o) => o.code ?? "ok")).toEqual(["ok", "path_not_in_sandbox"]);
      expect(seen).toEqual(["expand read /src"]);
    } finally {
      await host.close();
    }
  });

  it("is configured in the sandbox config too, strictly", async () => {
    const seen: string[] = [];
    const host = await createHost({
      sandbox: { root: "project", dynamic: { enabled: true, ceiling: "/src" } },
      basePath: base,
      workers: workers(),
      onApproval: (r) => {
        seen.push(r.path);
        return "once";
      },
    });
    try {
      const out = await run(host, [
        { op: "readFile", args: ["/src/a.ts"] },
        { op: "readFile", args: ["/out/o.txt"] },
      ]);
      expect(out.map((o) => o.code ?? "ok")).toEqual(["ok", "path_not_in_sandbox"]);
      expect(seen).toEqual(["/src"]);
    } finally {
      await host.close();
    }
    const bad = await createHost({
      sandbox: {
        root: "project",
        dynamic: { enabled: "yes", ceiling: "/nope", extra: 1 },
      } as never,
      basePath: base,
      workers: workers(),
    }).catch((e: Error) => e);
    expect((bad as Error).message).toMatchInlineSnapshot(`
      "Invalid configuration:
      ✖ unknown key 'extra' (expected enabled, ceiling) → at sandbox.dynamic.extra
      ✖ expected true or false → at sandbox.dynamic.enabled"
    `);
    const outside = await createHost({
      sandbox: { root: "project" },
      basePath: base,
      workers: workers(),
      dynamic: { enabled: true, ceiling: ["/nope", "/src/../.."] },
    }).catch((e: Error) => e);
    expect((outside as Error).message).toMatchInlineSnapshot(`
      "Invalid configuration:
      ✖ '/src/../..' is not a path the host's sandbox can read → at dynamic.ceiling[1]"
    `);
  });
});
