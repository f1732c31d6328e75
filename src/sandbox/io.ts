// Temporary stubs: the real I/O layer lands with Core II (in progress).
import type { Policy } from "./policy.js";

const todo = (): never => {
  throw new Error("I/O layer not implemented yet");
};
export const readText = async (_p: Policy, _path: string): Promise<string> => todo();
export const readBytes = async (_p: Policy, _path: string): Promise<Uint8Array> => todo();
export const writeFile = async (
  _p: Policy,
  _path: string,
  _c: string | Uint8Array,
): Promise<void> => todo();
export const editFile = async (
  _p: Policy,
  _path: string,
  _e: { oldText: string; newText: string }[],
  _d: boolean,
): Promise<{ diff: string }> => todo();
export const listFiles = async (_p: Policy, _path: string, _pat: string): Promise<string[]> =>
  todo();
export const stat = async (
  _p: Policy,
  _path: string,
): Promise<{ type: "file" | "directory"; size: number; mtimeMs: number }> => todo();
export const exists = async (_p: Policy, _path: string): Promise<boolean> => todo();
export const mkdir = async (_p: Policy, _path: string): Promise<void> => todo();
export const remove = async (_p: Policy, _path: string, _r: boolean): Promise<void> => todo();
export const move = async (_p: Policy, _a: string, _b: string, _o: boolean): Promise<void> =>
  todo();
