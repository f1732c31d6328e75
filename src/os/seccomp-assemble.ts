/**
 * The seccomp program's assembler: classic BPF instructions with labels,
 * resolved to the relative jumps the kernel reads, encoded as
 * `struct sock_filter` records. The program itself is in `seccomp.ts`.
 */

/** One instruction: `struct sock_filter { u16 code; u8 jt; u8 jf; u32 k; }`. */
export interface Insn {
  code: number;
  k: number;
  /** Label to jump to when true / false (conditional jumps only). */
  jt?: string;
  jf?: string;
  /** A label defined at this instruction. */
  label?: string;
}

/** Resolves labels to relative jumps (an empty label: fall through) and encodes. */
export function assemble(p: readonly Insn[]): Buffer {
  const at = new Map<string, number>();
  p.forEach((insn, i) => {
    if (insn.label !== undefined) at.set(insn.label, i);
  });
  const offset = (from: number, label: string | undefined): number => {
    if (label === undefined || label === "") return 0;
    const to = at.get(label);
    if (to === undefined) throw new Error(`seccomp: unknown label ${label}`);
    const d = to - from - 1;
    if (d < 0 || d > 255) throw new Error(`seccomp: jump to ${label} out of range`);
    return d;
  };
  const out = Buffer.alloc(p.length * 8);
  p.forEach((insn, i) => {
    out.writeUInt16LE(insn.code, i * 8);
    out.writeUInt8(offset(i, insn.jt), i * 8 + 2);
    out.writeUInt8(offset(i, insn.jf), i * 8 + 3);
    out.writeUInt32LE(insn.k >>> 0, i * 8 + 4);
  });
  return out;
}
