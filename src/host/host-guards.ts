/**
 * Host-side guards for the process that runs agent threads.
 *
 * SIGUSR1 makes Node open its inspector on 127.0.0.1:9229, and whoever
 * connects runs code in the host's main thread. Agent threads cannot send
 * signals (the thread lockdown removes `process.kill`), but any process of
 * the same user can, and an agent that reaches the network could then
 * connect. Node starts the inspector on SIGUSR1 only while no JS listener is
 * installed for it (seen on Node 20.20: with a listener, `inspector.url()`
 * stays undefined), so the host installs one.
 *
 * The listener stays for the life of the process: removing the last SIGUSR1
 * listener does not give the signal back to the inspector, libuv restores
 * the default action and the next SIGUSR1 kills the process (seen on Node
 * 20.20). Trade-off: once a host was created, `kill -USR1 <pid>` no longer
 * attaches a debugger; start the process with `--inspect` instead.
 * Processes started with `--disable-sigusr1` (Node ≥ 22.14 / 23.7) need no
 * listener and get none.
 */

let guarded = false;
const ignoreSignal = (): void => {
  // Swallowed on purpose: the listener's presence is what keeps the inspector closed.
};

/**
 * Keeps SIGUSR1 from opening the inspector, for the rest of the process's
 * life (see the module comment for why it is never removed). Idempotent:
 * call it from every host; one listener is installed.
 */
export function guardProcessSignals(): void {
  if (guarded || process.platform === "win32" || isSigusr1Disabled()) return;
  guarded = true;
  process.on("SIGUSR1", ignoreSignal);
}

/** Whether this process was started with `--disable-sigusr1` (Node ≥ 22.14). */
function isSigusr1Disabled(): boolean {
  return (
    process.execArgv.includes("--disable-sigusr1") ||
    (process.env.NODE_OPTIONS ?? "").split(/\s+/).includes("--disable-sigusr1")
  );
}
