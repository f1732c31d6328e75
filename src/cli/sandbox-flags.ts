/**
 * The sandbox options `exec` and `mcp` share: `--root DIR`,
 * `--mount SRC:TARGET[:ro]` (repeatable) and `--readonly`, as `parseArgs`
 * options, help lines, and the sandbox they make.
 */
import { createSandbox, type Sandbox } from "../sandbox/sandbox.js";
import { UsageError } from "./cli-io.js";

/** The `parseArgs` options of the sandbox flags. */
export const SANDBOX_OPTIONS = {
  root: { type: "string" },
  mount: { type: "string", multiple: true },
  readonly: { type: "boolean" },
} as const;

/** The sandbox flags' lines of a command's help. */
export const SANDBOX_HELP = `  --root DIR                   Host folder that becomes the sandbox's '/' (required)
  --mount SRC:TARGET[:ro]      Add a mount (repeatable); ':ro' makes it read-only
  --readonly                   Make the root and every mount read-only`;

/** The parsed sandbox flags. */
export interface SandboxFlags {
  root?: string | undefined;
  mount?: string[] | undefined;
  readonly?: boolean | undefined;
}

/**
 * The sandbox the flags describe.
 * @throws UsageError when --root is missing
 * @throws SandboxError (invalid_config) for a bad mount or root
 */
export function sandboxFromFlags(values: SandboxFlags): Sandbox {
  if (values.root === undefined || values.root === "")
    throw new UsageError("--root DIR is required");
  return createSandbox({
    root: values.root,
    readonly: values.readonly ?? false,
    mounts: values.mount ?? [],
  });
}
