// examples/readme/tools.mjs — node tools.mjs
import { createSandbox, createToolDefinitions } from "mountbox";

const root = createSandbox(
  { root: "./project", mounts: ["./cache:/cache:ro"] },
  { basePath: import.meta.dirname },
);
const agent = root.derive({ allowRead: ["/src", "/cache"], allowWrite: ["/src"] });

// Framework-neutral definitions: name, description, zod inputSchema, annotations, execute.
const tools = await createToolDefinitions(agent, { limits: { readMaxLines: 2000 } });
console.log(tools.map((t) => t.name).join(", "));

const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
console.log(await byName.read_file.execute({ path: "/src/a.ts" }));
console.log(await byName.read_file.execute({ path: "/../etc/passwd" })); // refused, as text
console.log(await byName.grep.execute({ pattern: "export const", path: "/src" }));
const edit = { oldText: "hello", newText: "hi" };
console.log(await byName.edit_file.execute({ path: "/src/a.ts", edits: [edit], dryRun: true }));
console.log(await byName.list_allowed_paths.execute({}));
