// examples/readme/approvals/host.mjs — node host.mjs, from any folder
import { Writable } from "node:stream";
import { createHost } from "mountbox";

const audit = [];
const host = await createHost({
  sandbox: { root: "./project", writeApproval: true }, // writes anywhere need approval
  basePath: import.meta.dirname,
  workers: {
    notes: {
      module: "./worker.js",
      sandbox: { allowRead: "/notes", allowWrite: "/notes" },
    },
  },
  dynamic: { enabled: true, ceiling: "/" }, // may ask to widen, within the host's sandbox
  // Every string in the request is built by the host: normalized virtual paths.
  onApproval: async ({ worker, operation, access, path }) => {
    const answer = operation === "expand" ? "session" : operation === "write" ? "once" : "deny";
    console.log(`${worker}: ${operation}${access ? ` (${access})` : ""} ${path} → ${answer}`);
    return answer;
  },
  auditLog: new Writable({
    write(line, _enc, done) {
      audit.push(JSON.parse(line));
      done();
    },
  }),
});
console.log(await host.run("notes"));
console.log(host.suggestedSandboxes().notes.yaml.trimEnd());
const counts = {};
for (const { type } of audit) counts[type] = (counts[type] ?? 0) + 1;
console.log(counts); // one JSON line each: no host paths, no file contents
await host.close();
