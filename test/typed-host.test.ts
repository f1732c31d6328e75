/**
 * Typed hosts (issue 20): a host given a worker map (`typeof import(…)` of
 * worker modules made with `defineWorker`) types `host.run(name, input)` by
 * name, and a worker's `WorkerContext<Delegates>` types `ctx.delegate` the
 * same way: unknown names and wrong inputs are type errors, results are
 * typed. Without a map nothing changes: any name, `unknown` results.
 *
 * These are type assertions: `npm run typecheck` (which covers test/) fails
 * when one does not hold — an unused `@ts-expect-error` included. The
 * functions holding them are never called.
 */
import { describe, expectTypeOf, it } from "vitest";
import {
  createHost,
  type Host,
  type HostOptions,
  type RunOptions,
  type WorkerInput,
  type WorkerOutput,
} from "../src/index.js";
import {
  type DefinedWorker,
  type DelegateOptions,
  defineWorker,
  type WorkerContext,
} from "../workers/index.js";
import type { MainDelegates } from "./fixtures/typed/main.js";

/** The host's workers, by name: each one's module. */
type Workers = {
  main: typeof import("./fixtures/typed/main.js");
  analyzer: typeof import("./fixtures/typed/analyzer.js");
  notes: typeof import("./fixtures/typed/notes.js");
};

declare const options: HostOptions;

describe("a host typed with its worker map", () => {
  it("types host.run by worker name: names, inputs, results", () => {
    async function typed(host: Host<Workers>) {
      expectTypeOf(await host.run("main", { path: "/a.md" })).toEqualTypeOf<{
        path: string;
        words: number;
      }>();
      expectTypeOf(await host.run("analyzer", { text: "a b" }, { timeoutMs: 5 })).toEqualTypeOf<{
        words: number;
      }>();
      // A worker that takes no input needs none.
      expectTypeOf(await host.run("notes")).toEqualTypeOf<string[]>();
      expectTypeOf<Parameters<typeof host.run>[0]>().toEqualTypeOf<"main" | "analyzer" | "notes">();
      // @ts-expect-error: no worker 'mian'
      await host.run("mian", { path: "/a.md" });
      // @ts-expect-error: main's input has `path: string`
      await host.run("main", { path: 1 });
      // @ts-expect-error: main needs its input
      await host.run("main");
      // @ts-expect-error: the options are RunOptions
      await host.run("analyzer", { text: "x" }, { timeout: 5 });
    }
    expectTypeOf(typed).toBeFunction();
  });

  it("createHost<Workers>() or the variable's declared type gives the typed host", () => {
    async function made() {
      expectTypeOf(await createHost<Workers>(options)).toEqualTypeOf<Host<Workers>>();
      // From the declared type (the form JSDoc `@type` gives plain-JS hosts).
      const host: Host<Workers> = await createHost(options);
      expectTypeOf(await host.run("analyzer", { text: "" })).toEqualTypeOf<{ words: number }>();
    }
    expectTypeOf(made).toBeFunction();
  });

  it("an untyped host takes any name and input, and results are unknown", () => {
    async function untyped() {
      const host = await createHost(options);
      expectTypeOf(host).toEqualTypeOf<Host>();
      expectTypeOf(await host.run("anything")).toBeUnknown();
      expectTypeOf(await host.run("anything", { any: 1 }, { timeoutMs: 1 })).toBeUnknown();
      expectTypeOf<Parameters<typeof host.run>[0]>().toEqualTypeOf<string>();
      // A typed map's host is not an untyped one's (its results are narrower).
      expectTypeOf<Host<Workers>>().not.toEqualTypeOf<Host>();
    }
    expectTypeOf(untyped).toBeFunction();
  });
});

describe("a worker's context typed with its delegates", () => {
  it("types ctx.delegate by worker name: names, inputs, results", () => {
    async function inWorker(ctx: WorkerContext<MainDelegates>) {
      expectTypeOf(await ctx.delegate("analyzer", { text: "a" })).toEqualTypeOf<{
        words: number;
      }>();
      expectTypeOf(await ctx.delegate("notes")).toEqualTypeOf<string[]>();
      await ctx.delegate("analyzer", { text: "a" }, { sandbox: { readonly: true } });
      // @ts-expect-error: 'main' is not among its delegates
      await ctx.delegate("main", { path: "/a" });
      // @ts-expect-error: analyzer's input has `text: string`
      await ctx.delegate("analyzer", { txt: "a" });
      // @ts-expect-error: the options are DelegateOptions
      await ctx.delegate("analyzer", { text: "a" }, { sandbox: { allowRaed: "/x" } });
    }
    expectTypeOf(inWorker).toBeFunction();
  });

  it("an untyped context delegates to any name, as before", () => {
    async function untyped(ctx: WorkerContext) {
      expectTypeOf(await ctx.delegate("anyone")).toBeUnknown();
      expectTypeOf(await ctx.delegate("anyone", 1, {} as DelegateOptions)).toBeUnknown();
    }
    expectTypeOf(untyped).toBeFunction();
  });

  it("defineWorker infers input, result and delegates; the helpers read them back", () => {
    const w = defineWorker(async (input: { n: number }, ctx: WorkerContext<MainDelegates>) => {
      const r = await ctx.delegate("analyzer", { text: String(input.n) });
      return r.words * 2;
    });
    expectTypeOf(w).toEqualTypeOf<DefinedWorker<{ n: number }, number, MainDelegates>>();
    expectTypeOf<WorkerInput<typeof w>>().toEqualTypeOf<{ n: number }>();
    expectTypeOf<WorkerOutput<typeof w>>().toEqualTypeOf<number>();
    // A module's type, a definition's and a plain function's all work.
    expectTypeOf<WorkerInput<Workers["analyzer"]>>().toEqualTypeOf<{ text: string }>();
    expectTypeOf<WorkerOutput<(input: string) => Promise<boolean>>>().toEqualTypeOf<boolean>();
    // Anything else says nothing: unknown.
    expectTypeOf<WorkerInput<unknown>>().toBeUnknown();
    expectTypeOf<WorkerOutput<{ nothing: true }>>().toBeUnknown();
    expectTypeOf<RunOptions>().toHaveProperty("timeoutMs");
  });
});
