/** The conformance suite against the in-process `Sandbox`. */
import type { Sandbox } from "../src/index.js";
import {
  createConformanceHost,
  runSandboxConformance,
  type SandboxLike,
} from "./conformance/suite.js";

/** The worker-side shape over a host `Sandbox` (roots are methods there). */
function adapt(sb: Sandbox): SandboxLike {
  return {
    readFile: (p) => sb.readFile(p),
    readBytes: (p) => sb.readBytes(p),
    writeFile: (p, c) => sb.writeFile(p, c),
    editFile: (p, e, o) => sb.editFile(p, e, o),
    listFiles: (p, g) => sb.listFiles(p, g),
    stat: (p) => sb.stat(p),
    exists: (p) => sb.exists(p),
    mkdir: (p) => sb.mkdir(p),
    remove: (p, o) => sb.remove(p, o),
    move: (a, b, o) => sb.move(a, b, o),
    canRead: (p) => sb.canRead(p),
    canWrite: (p) => sb.canWrite(p),
    readableRoots: () => sb.readableRoots,
    writableRoots: () => sb.writableRoots,
    describe: () => sb.describe(),
  };
}

runSandboxConformance("in-process Sandbox", async (variant) => {
  const host = await createConformanceHost();
  return { sandbox: adapt(host.sandboxFor(variant)), root: host.root, cleanup: host.cleanup };
});
