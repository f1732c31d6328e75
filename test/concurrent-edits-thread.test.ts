/**
 * Issue 26, finding 1, from real agent threads: four agents edit one shared
 * file at once, each its own slots; every edit an agent was told is done is
 * in the file.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createHost as createBuiltHost } from "../dist/src/index.js";
import type { Host, HostOptions } from "../src/index.js";
import { assertBuilt } from "./conformance/thread.js";
import { makeTempDir, removeDir } from "./helpers/tree.js";

const createHost = createBuiltHost as unknown as (o: HostOptions) => Promise<Host>;
const fx = (name: string) => fileURLToPath(new URL(`./fixtures/load/${name}`, import.meta.url));
const AGENTS = 4;
const EDITS = 30;

let base: string;
beforeAll(() => {
  assertBuilt();
  base = makeTempDir();
});
afterAll(() => removeDir(base));

it("keeps every edit of four agents × thirty edits of one file", async () => {
  const lines: string[] = [];
  for (let a = 0; a < AGENTS; a++)
    for (let k = 0; k < EDITS; k++) lines.push(`slot ${a}-${k} open`);
  writeFileSync(join(base, "shared.txt"), `${lines.join("\n")}\n`);
  const host = await createHost({
    sandbox: { root: base },
    workers: { editor: { module: fx("editor.js") } },
  });
  try {
    const results = (await Promise.all(
      Array.from({ length: AGENTS }, (_, agent) =>
        host.run("editor", { path: "/shared.txt", agent, count: EDITS }),
      ),
    )) as { done: string[]; refused: string[] }[];
    const text = readFileSync(join(base, "shared.txt"), "utf8");
    const done = results.flatMap((r) => r.done);
    expect(results.flatMap((r) => r.refused)).toEqual([]);
    expect(done).toHaveLength(AGENTS * EDITS);
    expect(done.filter((m) => !text.includes(m))).toEqual([]);
    expect(text).not.toContain("open");
  } finally {
    await host.close();
  }
});
