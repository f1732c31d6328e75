/**
 * The seccomp program's shape (its effect is tested with real bubblewrap in
 * os-hardening.test.ts): a valid classic-BPF program for each architecture.
 */
import { describe, expect, test } from "vitest";
import { buildSeccompFilter, detectSeccompArch } from "../src/os/seccomp.js";

/** Decodes `struct sock_filter` entries. */
function decode(b: Buffer) {
  const out: { code: number; jt: number; jf: number; k: number }[] = [];
  for (let i = 0; i < b.length; i += 8)
    out.push({ code: b.readUInt16LE(i), jt: b[i + 2]!, jf: b[i + 3]!, k: b.readUInt32LE(i + 4) });
  return out;
}

describe("seccomp filter", () => {
  test.each([
    ["x64", 0xc000003e, 250],
    ["arm64", 0xc00000b7, 219],
  ] as const)(
    "%s: checks the architecture first, denies keyctl, every jump stays inside",
    (arch, audit, keyctl) => {
      const prog = decode(buildSeccompFilter(arch));
      // ld [arch]; jeq AUDIT_ARCH
      expect(prog[0]).toEqual({ code: 0x20, jt: 0, jf: 0, k: 4 });
      expect(prog[1]).toMatchObject({ code: 0x15, k: audit });
      const last = prog.length - 1;
      prog.forEach((insn, i) => {
        if ((insn.code & 0x07) === 0x05 && insn.code !== 0x05) {
          expect(i + 1 + insn.jt).toBeLessThanOrEqual(last);
          expect(i + 1 + insn.jf).toBeLessThanOrEqual(last);
        }
      });
      const k = prog.findIndex((p) => p.code === 0x15 && p.k === keyctl && p.jt > 0);
      expect(k).toBeGreaterThan(1);
      // keyctl jumps to RET ERRNO|EPERM.
      expect(prog[k + 1 + prog[k]!.jt]).toEqual({ code: 0x06, jt: 0, jf: 0, k: 0x00050001 });
      expect(prog.length).toBeLessThan(4096);
    },
  );

  test("known architectures only", () => {
    expect(detectSeccompArch("x64")).toBe("x64");
    expect(detectSeccompArch("arm64")).toBe("arm64");
    expect(detectSeccompArch("ia32")).toBeUndefined();
  });
});
