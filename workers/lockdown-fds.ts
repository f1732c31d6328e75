/**
 * Descriptor lockdown (issue 18, finding 3): part of the thread lockdown.
 *
 * Node's permission model checks paths, never descriptors, and a worker
 * thread shares the descriptor table of its process: without this, any
 * agent could `fstat` its way to the host's audit log and rewrite it, `pread`
 * a file another agent has open, write to the host's stdout (which an MCP
 * server may own), or close the host's descriptors and abort the process.
 *
 * So every descriptor-taking API a thread can reach accepts only descriptors
 * this thread opened itself through `fs.open`/`fs.openSync` (a dependency
 * reading its own files; Node's own `readFileSync` goes through them too),
 * and refuses every other number with
 * "… is not available in an agent thread: descriptors of the host process …".
 * APIs that exist only to adopt a descriptor or hand it to the kernel
 * (`fs.promises.open`'s `FileHandle`, `tty` streams, `net`/`dgram` handles'
 * `open(fd)`, HTTP/2 servers' `respondWithFD`) are refused outright. Each
 * replacement is pinned non-writable and non-configurable, like the rest of
 * the lockdown; `lockdown.ts` calls {@link lockDescriptors} before it syncs
 * the ESM named exports.
 */
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);

const WHY =
  "descriptors of the host process are not the thread's (only files this thread opened itself with fs.open); use ctx.sandbox for files and console.log for output";

type Fn = (this: unknown, ...args: unknown[]) => unknown;
type Obj = Record<string, unknown>;

/** Descriptors this thread opened through the wrapped `fs.open`/`fs.openSync`. */
const owned = new Set<number>();

/** Throws the refusal for `what`, naming the descriptor when it is a number. */
function refuseFd(what: string, fd?: unknown): never {
  const on = typeof fd === "number" ? ` on descriptor ${fd}` : "";
  throw new Error(`${what}${on} is not available in an agent thread: ${WHY}`);
}

/** Refuses unless `fd` is a descriptor this thread opened itself. */
function checkFd(what: string, fd: unknown): void {
  if (!owned.has(fd as number)) refuseFd(what, fd);
}

/** Refuses an `options.fd` (a number or a FileHandle) this thread did not open. */
function checkOptionsFd(what: string, options: unknown): void {
  if (typeof options !== "object" || options === null) return;
  const fd = (options as { fd?: unknown }).fd;
  if (fd !== undefined && fd !== null) checkFd(what, fd);
}

/** Defines `key` on `target` as a fixed value: not writable, not configurable. */
function pin(target: object, key: string, value: unknown): void {
  Object.defineProperty(target, key, {
    value,
    writable: false,
    configurable: false,
    enumerable: Object.getOwnPropertyDescriptor(target, key)?.enumerable ?? false,
  });
}

/** Pins `wrap(original)` over `target[key]`, keeping Node's promisify hints. */
function replace(target: Obj, key: string, wrap: (original: Fn) => Fn): void {
  const original = target[key];
  if (typeof original !== "function") return;
  const wrapped = wrap(original as Fn);
  // `util.promisify(fs.read)` resolves `{ bytesRead, buffer }` through a
  // symbol on the function: copy such data (never a function) over.
  for (const sym of Object.getOwnPropertySymbols(original)) {
    const d = Object.getOwnPropertyDescriptor(original, sym);
    if (d && "value" in d && typeof d.value !== "function") Object.defineProperty(wrapped, sym, d);
  }
  pin(target, key, wrapped);
}

/** Pins a function that always refuses over `target[key]`, if present. */
function refuseAll(target: Obj | undefined, key: string, what: string): void {
  if (!target || typeof target[key] !== "function") return;
  pin(target, key, function refused(): never {
    refuseFd(what);
  });
}

/** Wrapped constructors by original: aliases (`net.Stream`, `fs.FileReadStream`) share one. */
const checkedClasses = new Map<unknown, unknown>();

/** Wraps a constructor so that `check(args)` runs first; instances and `instanceof` stay the same. */
function replaceClass(target: Obj, key: string, check: (args: unknown[]) => void): void {
  const Original = target[key] as (new (...a: unknown[]) => object) & Fn;
  if (typeof Original !== "function") return;
  const done = checkedClasses.get(Original);
  if (done) {
    pin(target, key, done);
    return;
  }
  function Checked(this: unknown, ...args: unknown[]): unknown {
    check(args);
    // Node's function-style constructors (`net.Socket`, `fs.ReadStream`)
    // are also applied to a subclass's `this` (`tls.TLSSocket`).
    return new.target
      ? Reflect.construct(Original, args, new.target)
      : Reflect.apply(Original, this, args);
  }
  Checked.prototype = Original.prototype;
  Object.setPrototypeOf(Checked, Original);
  // The original must not be one `.constructor` away from any instance.
  pin(Original.prototype, "constructor", Checked);
  checkedClasses.set(Original, Checked);
  pin(target, key, Checked);
}

function lockFs(): void {
  const fs = require("node:fs") as Obj;
  replace(
    fs,
    "openSync",
    (openSync) =>
      function openSyncOwned(this: unknown, ...args: unknown[]) {
        const fd = openSync.apply(this, args) as number;
        owned.add(fd);
        return fd;
      },
  );
  replace(
    fs,
    "open",
    (open) =>
      function openOwned(this: unknown, ...args: unknown[]) {
        const cb = args.at(-1);
        if (typeof cb === "function")
          args[args.length - 1] = (err: unknown, fd: number) => {
            if (!err) owned.add(fd);
            cb(err, fd);
          };
        return open.apply(this, args);
      },
  );
  for (const key of ["close", "closeSync"])
    replace(
      fs,
      key,
      (close) =>
        function closeOwned(this: unknown, ...args: unknown[]) {
          checkFd(`fs.${key}`, args[0]);
          // Forget it first: once closed, the number may be the host's next file.
          owned.delete(args[0] as number);
          return close.apply(this, args);
        },
    );
  // The first argument is a descriptor.
  for (const base of [
    "read",
    "readv",
    "write",
    "writev",
    "fstat",
    "ftruncate",
    "fsync",
    "fdatasync",
    "futimes",
    "fchmod",
    "fchown",
  ])
    for (const key of [base, `${base}Sync`])
      replace(
        fs,
        key,
        (fn) =>
          function ownedOnly(this: unknown, ...args: unknown[]) {
            checkFd(`fs.${key}`, args[0]);
            return fn.apply(this, args);
          },
      );
  // The first argument is a path or a descriptor: a number must be the thread's.
  for (const base of ["readFile", "writeFile", "appendFile", "truncate"])
    for (const key of [base, `${base}Sync`])
      replace(
        fs,
        key,
        (fn) =>
          function pathOrOwned(this: unknown, ...args: unknown[]) {
            if (typeof args[0] === "number") checkFd(`fs.${key}`, args[0]);
            return fn.apply(this, args);
          },
      );
  // Streams take `options.fd` (a number or a FileHandle).
  for (const key of ["createReadStream", "createWriteStream"])
    replace(
      fs,
      key,
      (fn) =>
        function streamOwned(this: unknown, ...args: unknown[]) {
          checkOptionsFd(`fs.${key}`, args[1]);
          return fn.apply(this, args);
        },
    );
  for (const key of ["ReadStream", "WriteStream", "FileReadStream", "FileWriteStream"])
    replaceClass(fs, key, (args) => checkOptionsFd(`fs.${key}`, args[1]));
  replaceClass(fs, "Utf8Stream", (args) => checkOptionsFd("fs.Utf8Stream", args[0]));
  // A FileHandle's constructor (one `.constructor` away) adopts any `{ fd }`,
  // and its symbols let a forged one reach any descriptor: none is handed out.
  const promises = fs.promises as Obj;
  if (typeof promises.open === "function")
    pin(promises, "open", async function refused(): Promise<never> {
      refuseFd("fs.promises.open (FileHandle)");
    });
}

/** The prototype of the native handle `make` creates (and then releases), if this Node lets it. */
function handleProto(make: () => { handle: unknown; done(): void } | undefined): Obj | undefined {
  try {
    const made = make();
    if (!made) return undefined;
    const proto = made.handle ? (Object.getPrototypeOf(made.handle) as Obj) : undefined;
    made.done();
    return proto;
  } catch {
    // This Node refuses the handle here (no network on Node ≥ 25): so does
    // it for the agent, and there is nothing to lock.
    return undefined;
  }
}

function lockNet(): void {
  const net = require("node:net") as Obj;
  const check = (what: string) => (args: unknown[]) => checkOptionsFd(what, args[0]);
  for (const key of ["Socket", "Stream"]) replaceClass(net, key, check(`net.${key}`));
  for (const key of ["connect", "createConnection"])
    replace(
      net,
      key,
      (fn) =>
        function connectChecked(this: unknown, ...args: unknown[]) {
          checkOptionsFd(`net.${key}`, args[0]);
          return fn.apply(this, args);
        },
    );
  refuseAll(net, "_createServerHandle", "net._createServerHandle");
  // Every `listen` (`{ fd }`, `{ handle: { fd } }`, …) ends in `_listen2(…, fd)`.
  const server = (net.Server as { prototype: Obj } | undefined)?.prototype;
  if (server)
    replace(
      server,
      "_listen2",
      (listen2) =>
        function listenChecked(this: unknown, ...args: unknown[]) {
          if (typeof args[4] === "number" && args[4] >= 0) refuseFd("net.Server#listen", args[4]);
          return listen2.apply(this, args);
        },
    );
  // TCP and Pipe handles (any socket's `_handle`) adopt a descriptor with `open(fd)`.
  const Socket = net.Socket as new () => Obj & { destroy(): void; connect(o: object): void };
  for (const options of [{ path: true }, { port: {} }]) {
    const proto = handleProto(() => {
      const s = new Socket();
      // An invalid path or port is refused after the handle exists, before any I/O.
      try {
        s.connect(options);
      } catch {}
      return { handle: s._handle, done: () => s.destroy() };
    });
    refuseAll(proto, "open", "net handle open(fd)");
  }
}

function lockDgram(): void {
  const dgram = require("node:dgram") as Obj;
  refuseAll(dgram, "_createSocketHandle", "dgram._createSocketHandle");
  const socket = (dgram.Socket as { prototype: Obj } | undefined)?.prototype;
  if (socket)
    replace(
      socket,
      "bind",
      (bind) =>
        function bindChecked(this: unknown, ...args: unknown[]) {
          checkOptionsFd("dgram.Socket#bind", args[0]);
          return bind.apply(this, args);
        },
    );
  const createSocket = dgram.createSocket as (options: object) => Obj & { close(): void };
  const proto = handleProto(() => {
    // A lookup of its own: without one, a socket loads `dns` and sets up a
    // resolver (≈ 0.3 MiB a thread, issue 25) that this one never uses.
    const s = createSocket({ type: "udp4", lookup: () => {} });
    const state = Object.getOwnPropertySymbols(s)
      .map((k) => (s as unknown as Record<symbol, unknown>)[k])
      .find((v) => typeof v === "object" && v !== null && "handle" in v) as
      | { handle: unknown }
      | undefined;
    return { handle: state?.handle, done: () => s.close() };
  });
  refuseAll(proto, "open", "dgram handle open(fd)");
}

function lockOthers(): void {
  const tty = require("node:tty") as Obj;
  for (const key of ["ReadStream", "WriteStream"])
    replaceClass(tty, key, () => refuseFd(`tty.${key}`));
  // Adopts a descriptor as an IPC channel (`process.send`).
  refuseAll(require("node:child_process") as Obj, "_forkChild", "child_process._forkChild");
  // A server stream's `respondWithFD` sends any descriptor's contents. Its
  // class is reachable through a server, and through a client too: the base
  // class of a client session (one prototype up) builds server sessions over
  // any duplex stream, no network needed. So no HTTP/2 session is made here.
  const http2 = require("node:http2") as Obj;
  for (const key of ["createServer", "createSecureServer", "performServerHandshake", "connect"])
    refuseAll(http2, key, `http2.${key} (respondWithFD)`);
}

/** Takes every descriptor-based API away from this thread (see the module comment). */
export function lockDescriptors(): void {
  lockFs();
  lockNet();
  lockDgram();
  lockOthers();
}
