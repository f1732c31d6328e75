/**
 * A process killed mid-write leaves the old content or the new, never a
 * torn file. Runs the built library (dist/) in a real child process.
 */
import { spawn } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, expect, it } from "vitest";
import { makeTempDir, removeDir } from "../helpers/tree.js";

const dist = resolve(import.meta.dirname, "../../dist/src/index.js");
const SIZE = 4 * 1024 * 1024;
let base: string;

beforeAll(() => {
  if (!existsSync(dist))
    throw new Error("dist/ is missing: run `npm run build` (npm test does it first)");
  base = makeTempDir();
  writeFileSync(join(base, "f.bin"), "A".repeat(SIZE));
  writeFileSync(
    join(base, "writer.mjs"),
    `import { createSandbox } from ${JSON.stringify(pathToFileURL(dist).href)};
     const sb = createSandbox({ root: ${JSON.stringify(base)} });
     const a = "A".repeat(${SIZE}), b = "B".repeat(${SIZE});
     process.send?.("ready");
     for (let i = 0; ; i++) await sb.writeFile("/f.bin", i % 2 ? a : b);`,
  );
});
afterAll(() => removeDir(base));

it("kills at random moments never leave a torn file", async () => {
  for (let round = 0; round < 8; round++) {
    const child = spawn(process.execPath, [join(base, "writer.mjs")], {
      stdio: ["ignore", "ignore", "inherit", "ipc"],
    });
    await new Promise((r) => child.once("message", r));
    await new Promise((r) => setTimeout(r, 5 + Math.floor(Math.random() * 60)));
    child.kill("SIGKILL");
    await new Promise((r) => child.once("exit", r));
    const content = readFileSync(join(base, "f.bin"), "latin1");
    expect(content.length).toBe(SIZE);
    expect(content === "A".repeat(SIZE) || content === "B".repeat(SIZE)).toBe(true);
  }
});
