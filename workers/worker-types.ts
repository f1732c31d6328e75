/**
 * Typed workers (issue 20): the types that tie a worker's name to its
 * module, so `host.run(name, input)` and `ctx.delegate(name, input)` check
 * the name and the input and type the result. Types only: nothing here
 * exists at run time.
 *
 * A worker map names each worker's type: its module's type (TypeScript's
 * `typeof import` of the module's path, whose `default` is what
 * `defineWorker` returned), that `defineWorker` result's type, or a worker
 * function's. `createHost<Workers>(…)` takes the map (in plain JavaScript, a
 * JSDoc `@typedef` and a host variable declared with `@type` as
 * `Host<Workers>`); `WorkerContext<Delegates>` types `ctx.delegate`. See
 * docs/runtime.md, "Typed hosts".
 *
 * Without a map (the default) every name is accepted and every result is
 * `unknown`, as before. (Module paths are not written here: the import
 * graph test reads the built JavaScript, comments included.)
 */

/**
 * The worker map of an untyped host or context: any name, inputs and
 * results `unknown`.
 */
export type UntypedWorkers = Record<string, unknown>;

/** The worker function a worker type stands for (a module's default export's `run`, …). */
type RunOf<T> = T extends { readonly default: infer D } ? RunOfDefinition<D> : RunOfDefinition<T>;
type RunOfDefinition<D> = D extends { readonly run: infer F }
  ? F
  : D extends (...args: never[]) => unknown
    ? D
    : undefined;

/** The input a worker takes (`unknown` for a worker type that says nothing). */
export type WorkerInput<T> =
  RunOf<T> extends (input: infer I, ...rest: never[]) => unknown ? I : unknown;

/** The result a worker resolves with (`unknown` for a worker type that says nothing). */
export type WorkerOutput<T> = RunOf<T> extends (...args: never[]) => infer R ? Awaited<R> : unknown;

/**
 * The arguments after a worker's name: its input — optional when the worker
 * accepts `undefined` — then the call's options.
 */
export type WorkerArgs<T, Options> =
  undefined extends WorkerInput<T>
    ? [input?: WorkerInput<T>, options?: Options]
    : [input: WorkerInput<T>, options?: Options];

/** The worker names of a worker map. */
export type WorkerName<W> = keyof W & string;
