/**
 * Protected entries (e.g. `.git`) at the top of a writable folder bind: the
 * bind plan holds them read-only for a confined command, and holds absent
 * ones with an empty read-only placeholder so the command cannot create
 * them. Deeper levels are only enforced in-process.
 */
import { accessSync, constants, readdirSync } from "node:fs";
import type { Policy } from "../sandbox/policy.js";
import type { BindStep } from "./bind-plan.js";
import { readKind } from "./host-lookup.js";

/**
 * Protected entries (e.g. `.git`) directly inside a writable folder bound at
 * `step.virtual`: existing ones are bound read-only; an absent protected
 * name gets an empty read-only placeholder, so the command cannot create it
 * (a `.git` with `core.fsmonitor` or hooks would run code on the host at the
 * next `git status` there). Deeper levels are only enforced in-process.
 * Places that cannot be held (a link in the way) are added to `unsafe`.
 */
export function planProtectedEntries(policy: Policy, step: BindStep, unsafe: string[]): BindStep[] {
  const out: BindStep[] = [];
  let names: string[];
  try {
    names = readdirSync(step.host);
  } catch {
    return out;
  }
  const prefix = step.host === "/" ? "" : step.host;
  const at = (name: string): string =>
    step.virtual === "/" ? `/${name}` : `${step.virtual}/${name}`;
  const present = new Set<string>();
  for (const name of names) {
    const v = at(name);
    if (!policy.table.isProtected(v)) continue;
    present.add(name.toLowerCase());
    const host = `${prefix}/${name}`;
    const kind = readKind(host);
    if (kind !== "dir" && kind !== "file") {
      // A link (or a vanished entry) cannot be bound over: the command could
      // replace it with a folder of its own.
      unsafe.push(v);
      continue;
    }
    out.push({ kind: "bind", virtual: v, host, writable: false, file: kind === "file" });
  }
  // A folder the host user cannot write (say a root-owned workspace used by
  // another user) is no more writable by the command: nothing to hold.
  if (!isWritableByUs(step.host)) return out;
  for (const name of listProtectedNames(policy)) {
    if (present.has(name)) continue;
    out.push({
      kind: "bind",
      virtual: at(name),
      host: `${prefix}/${name}`,
      writable: false,
      file: false,
      placeholder: true,
    });
  }
  return out;
}

/** Protected names (not paths) that are plain file names. */
function listProtectedNames(policy: Policy): string[] {
  return policy.table.protectedEntries.filter(
    (p) => !p.startsWith("/") && p !== "" && p !== "." && p !== ".." && !p.includes("/"),
  );
}

function isWritableByUs(host: string): boolean {
  try {
    accessSync(host, constants.W_OK);
    return true;
  } catch {
    return false;
  }
}
