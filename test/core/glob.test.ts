import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { IoError } from "../../src/errors/index.js";
import { compileGlob, matchWildcard } from "../../src/sandbox/glob.js";

describe("compileGlob", () => {
  it.each([
    ["**/*", "a/b/c.ts", true],
    ["**/*.ts", "a.ts", true],
    ["*.ts", "src/a.ts", false],
    ["src/*.ts", "src/a.ts", true],
    ["src/**", "src/a/b", true],
    ["**/.env", "a/.env", true],
    ["*", ".hidden", true],
    ["{src,lib}/**/*.ts", "lib/x/y.ts", true],
    ["{src/a,lib}/*.ts", "src/a/y.ts", true],
    ["[ab]/*.md", "c/x.md", false],
    ["a?c/d", "abc/d", true],
    ["./*.ts", "a.ts", true],
  ])("%s vs %s → %s", (pattern, path, want) => {
    expect(compileGlob(pattern)(path)).toBe(want);
  });

  it("refuses empty, over-long and overly complex patterns", () => {
    for (const p of ["", "x".repeat(1001), `${"{?,??}".repeat(32)}Z`, "{a,b}".repeat(9), 42])
      expect(() => compileGlob(p)).toThrow(IoError);
  });

  it("agrees with a naive reference of the same semantics (fast-check)", () => {
    // Exponential but obviously right: try every split for `**`.
    const segRe = (g: string) =>
      new RegExp(
        `^${g.replaceAll(".", "\\.").replaceAll("*", "[^/]*").replaceAll("?", "[^/]")}$`,
        "s",
      );
    const naive = (segs: string[], parts: string[], first = true): boolean => {
      if (segs.length === 0) return parts.length === 0;
      const [g, ...rest] = segs as [string, ...string[]];
      if (g === "**" && rest.length === 0 && !first) return parts.length > 0;
      if (g === "**") {
        for (let k = 0; k <= parts.length; k++) if (naive(rest, parts.slice(k), false)) return true;
        return false;
      }
      return parts.length > 0 && segRe(g).test(parts[0]!) && naive(rest, parts.slice(1), false);
    };
    const seg = fc.oneof(
      fc
        .stringMatching(/^[ab.*?]{1,4}$/)
        .filter((g) => g !== "." && g !== ".." && !g.includes("**")),
      fc.constant("**"),
    );
    const name = fc.stringMatching(/^[ab.]{1,5}$/).filter((n) => n !== "." && n !== "..");
    fc.assert(
      fc.property(
        fc.array(seg, { minLength: 1, maxLength: 4 }),
        fc.array(name, { minLength: 1, maxLength: 5 }),
        (segs, parts) => {
          expect(
            compileGlob(segs.join("/"))(parts.join("/")),
            `${segs.join("/")} vs ${parts.join("/")}`,
          ).toBe(naive(segs, parts));
        },
      ),
      { numRuns: 3000 },
    );
  });
});

describe("matchWildcard", () => {
  it("agrees with a regex on * and ? (fast-check)", () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[ab*?]{0,6}$/), fc.stringMatching(/^[ab]{0,8}$/), (p, s) => {
        const re = new RegExp(`^${p.replaceAll("*", ".*").replaceAll("?", ".")}$`, "s");
        expect(matchWildcard(p, s)).toBe(re.test(s));
      }),
      { numRuns: 2000 },
    );
  });
});
