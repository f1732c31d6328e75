/**
 * The network warning (issue 20): before Node 25 an agent thread keeps the
 * network whatever its worker's `network` says, and the host warns — once
 * per process (`MOUNTBOX_NETWORK_UNENFORCED`), however many agents, workers
 * and hosts it runs. A host that accepts it turns it off with Node's own
 * `--disable-warning=MOUNTBOX_NETWORK_UNENFORCED` (Node ≥ 20.11), on the
 * command line or in `NODE_OPTIONS`. From Node 25 on there is nothing to
 * warn about. Hosts run as child processes of the Node running the tests.
 */
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { assertBuilt } from "./conformance/thread.js";
import { writeFiles } from "./helpers/packed.js";
import { makeTempDir, removeDir } from "./helpers/tree.js";

const INDEX = pathToFileURL(fileURLToPath(new URL("../dist/src/index.js", import.meta.url))).href;
const NOOP = fileURLToPath(new URL("./fixtures/host/noop.js", import.meta.url));
const CODE = "MOUNTBOX_NETWORK_UNENFORCED";
/** Node takes the network from threads (≥ 25): nothing to warn about. */
const ENFORCED = process.allowedNodeEnvironmentFlags.has("--allow-net");

// Two hosts, three workers (one delegating), twelve agents: one process.
const HOST = `
import { createHost } from ${JSON.stringify(INDEX)};
const results = [];
for (let h = 0; h < 2; h++) {
  const host = await createHost({
    workers: {
      a: { module: ${JSON.stringify(NOOP)} },
      b: { module: ${JSON.stringify(NOOP)} },
      c: { module: ${JSON.stringify(NOOP)}, delegates: ["a"] },
    },
  });
  results.push(...(await Promise.all(["a", "b", "c", "a", "b", "c"].map((w, i) => host.run(w, i)))));
  await host.close();
}
console.log(JSON.stringify(results));
`;

let dir: string;
beforeAll(() => {
  assertBuilt();
  dir = makeTempDir("mountbox-netwarn-");
  writeFiles(dir, { "host.mjs": HOST });
});
afterAll(() => removeDir(dir));

/** Runs the host with extra Node flags (or NODE_OPTIONS); its stdout and stderr. */
function runHost(args: string[], nodeOptions = ""): { stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [...args, join(dir, "host.mjs")], {
    cwd: dir,
    encoding: "utf8",
    timeout: 60_000,
    env: { ...process.env, NODE_OPTIONS: nodeOptions },
  });
  expect(r.status, r.stderr).toBe(0);
  expect(JSON.parse(r.stdout)).toEqual([0, 1, 2, 3, 4, 5, 0, 1, 2, 3, 4, 5]);
  return { stdout: r.stdout, stderr: r.stderr };
}

const count = (text: string) => text.split(CODE).length - 1;

describe("the network warning", () => {
  it("is written once per process, however many agents and hosts run", () => {
    const { stderr } = runHost([]);
    expect(count(stderr)).toBe(ENFORCED ? 0 : 1);
    if (!ENFORCED)
      expect(stderr.match(/\[MOUNTBOX_NETWORK_UNENFORCED\][^\n]*/)?.[0]).toBe(
        `[${CODE}] Warning: Agent threads have the network on this Node.js (${process.version}) although their workers do not ask for it ('network' is false): Node can take it away from a thread only from Node 25 on.`,
      );
  });

  it("is turned off by Node's --disable-warning, on the command line or in NODE_OPTIONS", () => {
    expect(count(runHost([`--disable-warning=${CODE}`]).stderr)).toBe(0);
    expect(count(runHost([], `--disable-warning=${CODE}`).stderr)).toBe(0);
  });
});
