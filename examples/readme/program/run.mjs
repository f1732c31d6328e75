// examples/readme/program/run.mjs — cd program && node run.mjs
import { createHost, loadProgram } from "mountbox";

const host = await createHost(await loadProgram("."));
console.log(JSON.stringify(await host.run("main", { topic: "setup" }), null, 2));
await host.close();
