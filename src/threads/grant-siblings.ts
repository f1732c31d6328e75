/**
 * Works around a fault of Node's permission model that breaks real pnpm
 * installs: when two granted folders are *links* and the path of one is a
 * string prefix of the other's (`…/@ai-sdk/provider` and
 * `…/@ai-sdk/provider-utils`), Node's grant tree splits at the shared
 * prefix and then refuses the shorter path itself — while still allowing
 * what lies below it. Node's resolver `stat`s every link it crosses at
 * exactly that path, so the import fails with ERR_ACCESS_DENIED although
 * the grant was given (seen on Node 20.20, 22.23, 24.21 and 26.10; a
 * folder below the shorter path, or a real folder, is not affected).
 *
 * The grant cannot be spelled another way (Node turns every folder grant
 * into `folder/*`), so the link's folder is granted instead — only where
 * that adds nothing: a folder of pnpm's virtual store
 * (`node_modules/.pnpm/<id>/node_modules[/@scope]`) whose entries are all
 * granted already, and whose links all lead into the same store. Elsewhere
 * the grant fails with a message that says what to do.
 */
import { lstatSync, readdirSync, realpathSync } from "node:fs";
import { basename, dirname, join, sep } from "node:path";
import { isWithin } from "./module-grants.js";

/** The pnpm store folder (`…/node_modules/.pnpm`) that `dir` is a package-links folder of, if any. */
function findStoreOf(dir: string): string | undefined {
  const parts = dir.split(sep);
  const at = parts.lastIndexOf(".pnpm");
  if (at < 1 || parts[at - 1] !== "node_modules") return undefined;
  // .pnpm/<id>/node_modules, or .pnpm/<id>/node_modules/@scope
  const rest = parts.slice(at + 1);
  const shaped =
    (rest.length === 2 && rest[1] === "node_modules") ||
    (rest.length === 3 && rest[1] === "node_modules" && rest[2]!.startsWith("@"));
  return shaped && rest[0] !== "node_modules" ? parts.slice(0, at + 1).join(sep) : undefined;
}

function isLink(p: string): boolean {
  try {
    return lstatSync(p).isSymbolicLink();
  } catch {
    return false;
  }
}

function isGranted(p: string, grants: readonly string[]): boolean {
  return grants.some((g) => isWithin(p, g));
}

/**
 * True if granting the folder `dir` in place of its entries gives a thread
 * nothing new: every entry is granted, and every link leads into `store`
 * (a `..` after crossing a link climbs to the link target's folder, so the
 * targets must stay inside the store).
 */
function isFolderCovered(dir: string, store: string, grants: readonly string[]): boolean {
  for (const name of readdirSync(dir)) {
    const entry = join(dir, name);
    if (!isGranted(entry, grants)) return false;
    if (!isLink(entry)) continue;
    let real: string;
    try {
      real = realpathSync(entry);
    } catch {
      return false;
    }
    if (!isWithin(real, store) || !isGranted(real, grants)) return false;
  }
  return true;
}

/**
 * `grants` with every linked folder that Node would refuse (see the module
 * note) replaced by its folder of links, where that adds nothing.
 * @throws Error naming both packages and the fix, where it would add something
 */
export function repairPrefixSiblings(grants: readonly string[]): string[] {
  const out = [...grants];
  for (const p of grants) {
    const sibling = grants.find(
      (q) => q.length > p.length && q.startsWith(p) && q[p.length] !== sep,
    );
    if (!sibling || !isLink(p)) continue;
    const dir = dirname(p);
    const store = findStoreOf(dir);
    if (store && isFolderCovered(dir, store, grants)) {
      out.push(dir);
      continue;
    }
    throw new Error(
      `Cannot grant the thread the linked package folder '${basename(p)}' beside '${basename(sibling)}' in ${dir}: Node's permission model refuses a linked folder whose path is the beginning of another granted path's. Install the packages as folders rather than links (npm, or pnpm with 'nodeLinker: hoisted'), or declare only one of them.`,
    );
  }
  return out;
}
