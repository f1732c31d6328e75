// examples/readme/shell.mjs — node shell.mjs (Linux, with bubblewrap)
import { createSandbox, describeCommandSandbox, runCommand } from "mountbox";

const sb = createSandbox(
  { root: "./project", mounts: ["./cache:/cache:ro"] },
  { basePath: import.meta.dirname },
);
const agent = sb.derive({ allowRead: ["/src", "/cache"], allowWrite: ["/src"] });

console.log(describeCommandSandbox(agent)); // for the model, before its first command
const r = await runCommand(agent, "ls src cache && echo hi > cache/x", {
  timeoutMs: 60_000, // default 60 s; kills every process the command started
  network: false, // default: no network at all, not even the host's 127.0.0.1
  allowUnixSockets: false, // default: no socket(AF_UNIX), so no host socket file is reachable
  env: { CI: "1" }, // nothing is inherited from the host process
  maxOutputBytes: 1 << 20, // per stream; default 1 MiB
  limits: { memoryMb: 1024, processes: 64, tmpMb: 256, cpuSeconds: 60 },
});
console.log(JSON.stringify({ exitCode: r.exitCode, stdout: r.stdout, notes: r.notes }));
