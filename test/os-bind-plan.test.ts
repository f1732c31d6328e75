import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { createSandbox } from "../src/index.js";
import { type BindPlan, planBinds, toWorkspacePath } from "../src/os/bind-plan.js";
import { buildBwrapArgs } from "../src/os/bwrap.js";
import { policyOf, type Sandbox } from "../src/sandbox/sandbox.js";
import { BWRAP, HAS_BWRAP } from "./helpers/bwrap.js";

let dir: string;

/**
 * These plans are about areas, mounts and the `.git` guard: the other
 * protected defaults (one guard each, see test/protected-defaults.test.ts)
 * are left out so each plan stays readable.
 */
const GIT_ONLY = { protected: [".git"] };

beforeEach(() => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), "mountbox-plan-")));
  mkdirSync(join(dir, "root/src/lib"), { recursive: true });
  mkdirSync(join(dir, "root/.git"));
  mkdirSync(join(dir, "root/cache"));
  writeFileSync(join(dir, "root/src/a.ts"), "a");
  mkdirSync(join(dir, "cache"));
  mkdirSync(join(dir, "out"));
  mkdirSync(join(dir, "outside"));
});

afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** The plan with host paths replaced by `<tmp>` so it can be compared. */
function shown(plan: BindPlan): string[] {
  return plan.steps.map(
    (s) =>
      `${s.kind} ${s.virtual}${s.kind === "bind" ? ` <- ${s.host.replace(dir, "<tmp>")}` : ""} ${s.writable ? "rw" : "ro"}${s.file ? " file" : ""}${s.placeholder === true ? " guard" : ""}`,
  );
}

function planOf(sb: Sandbox): BindPlan {
  return planBinds(policyOf(sb));
}

describe("planBinds", () => {
  test("root with mounts: shallow first, read-only mount and .git read-only", () => {
    const sb = createSandbox({
      ...GIT_ONLY,
      root: join(dir, "root"),
      mounts: [`${join(dir, "cache")}:/cache:ro`, `${join(dir, "out")}:/out`],
    });
    const plan = planOf(sb);
    expect(shown(plan)).toEqual([
      "bind / <- <tmp>/root rw",
      "bind /.git <- <tmp>/root/.git ro guard",
      "bind /cache <- <tmp>/cache ro",
      "bind /out <- <tmp>/out rw",
      // Absent at the top of a writable bind: an empty read-only placeholder.
      "bind /out/.git <- <tmp>/out/.git ro guard",
    ]);
    // /out has no folder in the root yet: it must be created as a mount point;
    // the other places are checked (no link on the way) before bubblewrap runs.
    expect(plan.mountPoints).toContainEqual({
      base: join(dir, "root"),
      rest: ["out"],
      virtual: "/out",
      create: true,
    });
    expect(plan.mountPoints.filter((m) => m.create)).toHaveLength(1);
  });

  test("a read-only sandbox binds everything read-only and adds no .git bind", () => {
    const sb = createSandbox({
      ...GIT_ONLY,
      root: join(dir, "root"),
      readonly: true,
      mounts: [`${join(dir, "out")}:/out`],
    });
    expect(shown(planOf(sb))).toEqual(["bind / <- <tmp>/root ro", "bind /out <- <tmp>/out ro"]);
  });

  test("a derived child binds only its areas; an exact file area binds the file", () => {
    const sb = createSandbox({ ...GIT_ONLY, root: join(dir, "root") });
    const child = sb.derive({ allowRead: ["/src/a.ts", "/cache"], allowWrite: ["/cache"] });
    expect(shown(planOf(child))).toEqual([
      "bind /cache <- <tmp>/root/cache rw",
      "bind /cache/.git <- <tmp>/root/cache/.git ro guard",
      "bind /src/a.ts <- <tmp>/root/src/a.ts ro file",
    ]);
  });

  test("a writable area inside a readable one overlays it read-write", () => {
    const sb = createSandbox({ ...GIT_ONLY, root: join(dir, "root") });
    const child = sb.derive({ allowRead: ["/"], allowWrite: ["/src/lib"] });
    expect(shown(planOf(child))).toEqual([
      "bind / <- <tmp>/root ro",
      "bind /src/lib <- <tmp>/root/src/lib rw",
      "bind /src/lib/.git <- <tmp>/root/src/lib/.git ro guard",
    ]);
  });

  test("a folder also reachable through a read-only mount is read-only through both", () => {
    const sb = createSandbox({
      ...GIT_ONLY,
      root: join(dir, "root"),
      mounts: [`${join(dir, "root/src")}:/code:ro`],
    });
    expect(shown(planOf(sb))).toEqual([
      "bind / <- <tmp>/root rw",
      "bind /.git <- <tmp>/root/.git ro guard",
      "bind /code <- <tmp>/root/src ro",
      "bind /src <- <tmp>/root/src ro",
    ]);
  });

  test("an area that became a link leading outside is not bound", () => {
    mkdirSync(join(dir, "root/escape"));
    const sb = createSandbox({ ...GIT_ONLY, root: join(dir, "root") });
    const child = sb.derive({ allowRead: ["/escape", "/src"] });
    // Swapped for a link after the child was derived.
    rmSync(join(dir, "root/escape"), { recursive: true });
    symlinkSync(join(dir, "outside"), join(dir, "root/escape"));
    const plan = planOf(child);
    expect(shown(plan)).toEqual(["bind /src <- <tmp>/root/src ro"]);
    expect(plan.skipped).toEqual([{ virtual: "/escape", reason: "refused" }]);
  });

  test("a missing area is skipped, not created", () => {
    const sb = createSandbox({ ...GIT_ONLY, root: join(dir, "root") });
    const child = sb.derive({ allowRead: ["/src", "/nope"] });
    const plan = planOf(child);
    expect(shown(plan)).toEqual(["bind /src <- <tmp>/root/src ro"]);
    expect(plan.skipped).toEqual([{ virtual: "/nope", reason: "missing" }]);
  });

  test("bwrap arguments: namespaces, no network by default, workspace binds, cleared env", () => {
    const sb = createSandbox({ ...GIT_ONLY, root: join(dir, "root"), readonly: true });
    const args = buildBwrapArgs(planOf(sb), "echo hi", { network: false });
    for (const flag of [
      "--unshare-user",
      "--unshare-pid",
      "--unshare-ipc",
      "--unshare-uts",
      "--unshare-net",
      "--die-with-parent",
      "--new-session",
      "--clearenv",
    ])
      expect(args).toContain(flag);
    expect(args.join(" ")).toContain("--cap-drop ALL");
    expect(args.join(" ")).toContain(`--ro-bind ${join(dir, "root")} /workspace`);
    expect(args.join(" ")).toContain("--tmpfs /tmp");
    expect(args.join(" ")).toContain("--chdir /workspace");
    // The environment never sits on the command line (every host user can read it).
    expect(args).not.toContain("--setenv");
    expect(args.slice(-5)).toEqual(["--", "/bin/bash", "-c", "--", "echo hi"]);
    // Never the whole of /etc, /home or the host's /tmp.
    expect(args).not.toContain("/home");
    expect(args.filter((a) => a === "/etc")).toEqual([]);
    const withNet = buildBwrapArgs(planOf(sb), "true", { network: true });
    expect(withNet).not.toContain("--unshare-net");
  });

  test("a write-only area is left out", () => {
    const sb = createSandbox({ ...GIT_ONLY, root: join(dir, "root") });
    const child = sb.derive({ allowRead: ["/src"], allowWrite: ["/cache"] });
    const plan = planOf(child);
    expect(shown(plan)).toEqual(["bind /src <- <tmp>/root/src ro"]);
    expect(plan.skipped).toEqual([{ virtual: "/cache", reason: "write-only" }]);
  });

  test("a mask step hides a folder as an empty, read-only one (real bubblewrap)", (ctx) => {
    if (!HAS_BWRAP) {
      if (process.env.CI === "true" || process.env.MOUNTBOX_REQUIRE_BWRAP === "1")
        throw new Error(`bubblewrap not found at ${BWRAP}`);
      console.warn(
        `[skipped] mask step: bubblewrap not found at ${BWRAP}; install it or set MOUNTBOX_BWRAP`,
      );
      ctx.skip();
    }
    writeFileSync(join(dir, "root/cache/hidden.txt"), "hidden");
    const plan: BindPlan = {
      steps: [
        { kind: "bind", virtual: "/", host: join(dir, "root"), writable: true, file: false },
        { kind: "mask", virtual: "/cache", host: "", writable: false, file: false },
        { kind: "mask", virtual: "/src/a.ts", host: "", writable: false, file: true },
      ],
      mountPoints: [],
      skipped: [],
      unsafe: [],
      gitUnreadable: [],
    };
    const cmd = "ls -A cache; cat src/a.ts; touch cache/x 2>/dev/null || echo refused";
    const args = buildBwrapArgs(plan, cmd, { network: false });
    const r = spawnSync(BWRAP, args, { encoding: "utf8" });
    expect(r.stdout).toBe("refused\n");
    expect(r.status).toBe(0);
  });

  test("toWorkspacePath", () => {
    expect(toWorkspacePath("/")).toBe("/workspace");
    expect(toWorkspacePath("/src/a.ts")).toBe("/workspace/src/a.ts");
  });
});
