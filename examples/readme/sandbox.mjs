// examples/readme/sandbox.mjs — node sandbox.mjs
import { createSandbox } from "mountbox";

const root = createSandbox(
  { root: "./project", mounts: ["./cache:/cache:ro"] },
  { basePath: import.meta.dirname },
);
const agent = root.derive({ allowRead: ["/src", "/cache"], allowWrite: ["/src/generated"] });
const code = "export const api = 1;\n";
const outcome = (p) =>
  p.then(
    () => "ok",
    (e) => e.code,
  );

console.log(await agent.readFile("/src/a.ts")); // ✔
await agent.writeFile("/src/generated/api.ts", code); // ✔ atomic, parents created
console.log(await outcome(agent.writeFile("/cache/x", "…"))); // ✖ path_not_writable
console.log(await outcome(agent.readFile("/../etc/passwd"))); // ✖ path_not_in_sandbox
try {
  agent.derive({ allowWrite: "/src" });
} catch (e) {
  console.log(e.code); // ✖ permission_escalation
}
