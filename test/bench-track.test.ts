/**
 * Tracking benchmarks across commits (issue 25): the recorded run's shape,
 * `--compare`'s matching, percent math, goal marks and input checks, the
 * runner's arguments, RESULTS.md's kept notes and chart, and the chart
 * itself for 1 and 3 runs (well-formed XML, checked by a small parser).
 * Pure code only: no benchmark runs here (speed goes to bench/).
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parseBenchArgs } from "../bench/args.js";
import { collectSeries, orderRuns, renderRatioChart, TRACKED_FIGURES } from "../bench/chart.js";
import { findGrossRegressions, pickRecordedRun } from "../bench/gate.js";
import { formatResultsHeader, mergeResults, NOTES_MARK } from "../bench/results-md.js";
import {
  type BenchRun,
  type CollectedRow,
  compareRuns,
  formatChange,
  formatComparison,
  makeBenchRun,
  markChange,
  nameRunFile,
  parseBenchRun,
  readBenchRun,
} from "../bench/track.js";

const SHA = [
  "1111111aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
  "2222222bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb",
  "3333333ccccccccccccccccccccccccccccccccc",
];

/** A row as a bench module returns it, with its module. */
function row(
  module: string,
  name: string,
  baseline: string,
  ratio: number,
  goal?: string,
): CollectedRow {
  return {
    module,
    name,
    baseline,
    hz: ratio * 1000,
    baselineHz: 1000,
    ratio,
    ...(goal ? { goal } : {}),
  };
}

/** A run of `rows` at commit `sha` on a fixed machine and date. */
function makeRun(
  rows: CollectedRow[],
  opts: {
    sha?: string;
    date?: string;
    ci?: boolean;
    dirty?: boolean;
    failed?: string[];
    node?: string;
  } = {},
): BenchRun {
  return makeBenchRun(
    {
      date: opts.date ?? "2026-11-28T01:00:00.000Z",
      commit: { sha: opts.sha ?? SHA[0]!, dirty: opts.dirty ?? false },
      node: opts.node ?? "v20.20.2",
      machine: {
        cpu: "AMD EPYC",
        cpus: 2,
        memoryGiB: 24,
        platform: "linux",
        arch: "x64",
        loadavg: [0.5, 0.4, 0.3],
      },
      ci: opts.ci ?? false,
      modules: [...new Set(rows.map((r) => r.module))],
      failed: opts.failed ?? [],
    },
    rows,
  );
}

/** Rows of the tracked figures, as the bench modules name them, at the given ratios. */
function trackedRows(r: {
  resolve: number;
  derive: number;
  port: number;
  shell?: number;
}): CollectedRow[] {
  return [
    row(
      "core",
      "resolve (existing file, 4 levels deep)",
      "fs.realpathSync.native (floor)",
      r.resolve,
      "≥ 0.8×",
    ),
    row(
      "core",
      "resolve (existing file, 4 levels deep)",
      "MCP filesystem validatePath",
      7.4,
      "≥ 3×",
    ),
    row(
      "core",
      "derive({ allowRead: [2 entries], allowWrite })",
      "3 × fs.realpathSync.native",
      r.derive,
    ),
    row(
      "port",
      "ctx.sandbox.readFile 1 KiB, 64 in flight",
      "raw-port floor, 64 in flight",
      r.port,
      "≥ 0.8×",
    ),
    ...(r.shell === undefined
      ? []
      : [row("os", 'runCommand(sb, "true") (bubblewrap)', 'spawn("true")', r.shell)]),
  ];
}

/**
 * Checks that `xml` is well-formed enough for a browser: one root, every
 * tag closed in order, attributes quoted, only known entities, no stray `<`
 * or `&`. Returns the element names in document order.
 */
function checkXml(xml: string): string[] {
  const names: string[] = [];
  const stack: string[] = [];
  const token = /<(\/?)([A-Za-z][\w:-]*)((?:\s+[\w:-]+="[^"<]*")*)\s*(\/?)>|([^<]+)/gy;
  let end = 0;
  for (let m = token.exec(xml); m !== null; m = token.exec(xml)) {
    end = token.lastIndex;
    const [, closing, name, , selfClosing, text] = m;
    if (text !== undefined) {
      if (stack.length === 0 && text.trim() !== "")
        throw new Error(`text outside the root: ${text}`);
      const bad = /&(?!(amp|lt|gt|quot|apos);)/.exec(text);
      if (bad) throw new Error(`bare & in ${text}`);
      continue;
    }
    if (closing) {
      const open = stack.pop();
      if (open !== name) throw new Error(`</${name}> closes <${open}>`);
      continue;
    }
    if (stack.length === 0 && names.length > 0) throw new Error("a second root element");
    names.push(name!);
    if (!selfClosing) stack.push(name!);
  }
  if (end !== xml.length) throw new Error(`not XML at ${end}: ${xml.slice(end, end + 40)}`);
  if (stack.length > 0) throw new Error(`unclosed <${stack.join("> <")}>`);
  return names;
}

describe("a recorded run (--json)", () => {
  it("has every figure with commit, Node, machine and date, in one fixed shape", () => {
    const run = makeRun([
      row("core", "canRead", "realpath", 45.4),
      row("io", "readFile", "MCP", 15.5, "≥ 3×"),
    ]);
    expect(run.rows[0]).toEqual({
      module: "core",
      name: "canRead",
      baseline: "realpath",
      hz: 45400,
      baselineHz: 1000,
      ratio: 45.4,
      goal: null,
      unit: null,
    });
    expect({ ...run, rows: run.rows.length }).toMatchInlineSnapshot(`
      {
        "ci": false,
        "commit": {
          "dirty": false,
          "sha": "1111111aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
        },
        "date": "2026-11-28T01:00:00.000Z",
        "failed": [],
        "kind": "mountbox-bench-run",
        "machine": {
          "arch": "x64",
          "cpu": "AMD EPYC",
          "cpus": 2,
          "loadavg": [
            0.5,
            0.4,
            0.3,
          ],
          "memoryGiB": 24,
          "platform": "linux",
        },
        "modules": [
          "core",
          "io",
        ],
        "node": "v20.20.2",
        "rows": 2,
        "version": 1,
      }
    `);
    // What is written is what is read back; "failed" may be absent.
    expect(parseBenchRun(JSON.stringify(run), "x.json")).toEqual(run);
    expect(parseBenchRun(JSON.stringify({ ...run, failed: undefined }), "x.json").failed).toEqual(
      [],
    );
  });

  it("is named by date, short sha, dirtiness, Node major and kind", () => {
    expect(nameRunFile(makeRun([]))).toBe("2026-11-28-1111111-node20.json");
    expect(nameRunFile(makeRun([], { ci: true, dirty: true }))).toBe(
      "2026-11-28-1111111-dirty-node20-ci.json",
    );
  });
});

describe("--compare", () => {
  const a = makeRun([
    row("core", "resolve", "realpath", 0.8, "≥ 0.8×"),
    row("core", "resolve", "MCP validatePath", 7.5, "≥ 3×"),
    row("pool", "p99 with grep", "no grep", 1, "≤ 2×"),
    row("os", "runCommand", "spawn", 0.06),
    row("io", "gone", "floor", 1),
  ]);
  const b = makeRun(
    [
      row("core", "resolve", "realpath", 0.68, "≥ 0.8×"),
      row("core", "resolve", "MCP validatePath", 9, "≥ 3×"),
      row("pool", "p99 with grep", "no grep", 1.25, "≤ 2×"),
      row("os", "runCommand", "spawn", 0.12),
      row("io", "new", "floor", 2),
    ],
    { sha: SHA[1], ci: true, failed: ["model"] },
  );

  it("matches rows by module, name and baseline and computes B ÷ A − 1", () => {
    const c = compareRuns(a, b);
    expect(
      c.rows.map((r) => [r.module, r.baseline, r.a, r.b, formatChange(r.change), r.mark]),
    ).toEqual([
      ["core", "realpath", 0.8, 0.68, "-15.0%", "worse"],
      ["core", "MCP validatePath", 7.5, 9, "+20.0%", "better"],
      ["pool", "no grep", 1, 1.25, "+25.0%", "worse"],
      ["os", "spawn", 0.06, 0.12, "+100.0%", null],
    ]);
    expect(c.onlyA.map((r) => r.name)).toEqual(["gone"]);
    expect(c.onlyB.map((r) => r.name)).toEqual(["new"]);
  });

  it("marks only moves beyond 10%, in the direction of the goal", () => {
    expect(markChange(-0.1, "≥ 0.8×")).toBeNull();
    expect(markChange(-0.11, "≥ 0.8×")).toBe("worse");
    expect(markChange(0.11, "≥ 0.77× (≤ 1.3× the time)")).toBe("better");
    expect(markChange(0.11, "≤ 1.3×")).toBe("worse");
    expect(markChange(-0.5, "≤ 1.3×")).toBe("better");
    expect(markChange(-0.5, null)).toBeNull();
    expect(markChange(null, "≥ 1×")).toBeNull();
  });

  it("prints percents with a sign, n/a for a zero A, and no -0.0", () => {
    expect([0.1234, -0.0304, -0.0004, 0, null].map(formatChange)).toEqual([
      "+12.3%",
      "-3.0%",
      "+0.0%",
      "+0.0%",
      "n/a",
    ]);
    const zero = compareRuns(makeRun([row("m", "x", "y", 0)]), makeRun([row("m", "x", "y", 1)]));
    expect(zero.rows[0]?.change).toBeNull();
  });

  it("matches a repeated key occurrence by occurrence", () => {
    const twice = (x: number, y: number) => makeRun([row("m", "n", "b", x), row("m", "n", "b", y)]);
    expect(compareRuns(twice(1, 2), twice(1.5, 4)).rows.map((r) => r.change)).toEqual([0.5, 1]);
  });

  it("prints both runs, a table, the marks' meaning and the rows in one run only", () => {
    const text = formatComparison(
      compareRuns(a, b),
      { label: "a.json", run: a },
      { label: "b.json", run: b },
    );
    expect(text).toMatchInlineSnapshot(`
      "A a.json: 1111111, node v20.20.2, 2 × AMD EPYC, 24 GiB, linux-x64, load 0.5, 2026-11-28, full run
      B b.json: 2222222, node v20.20.2, 2 × AMD EPYC, 24 GiB, linux-x64, load 0.5, 2026-11-28, --ci run (short) (failed: model)
      Note: different kinds of run (--ci is short and noisy): changes may come from that, not the code.

      | module | measured | baseline | A | B | change | goal | |
      |---|---|---|---:|---:|---:|---|---|
      | core | resolve | realpath | 0.80× | 0.68× | -15.0% | ≥ 0.8× | ✖ worse |
      | core | resolve | MCP validatePath | 7.50× | 9.00× | +20.0% | ≥ 3× | ✓ better |
      | pool | p99 with grep | no grep | 1.00× | 1.25× | +25.0% | ≤ 2× | ✖ worse |
      | os | runCommand | spawn | 0.060× | 0.12× | +100.0% |  |  |

      change = B ÷ A − 1. ✖ / ✓: moved against / toward its goal by more than 10%.

      Only in A (1):
      - io: gone vs floor (1.00×)

      Only in B (1):
      - io: new vs floor (2.00×)"
    `);
  });

  describe("refuses what is not a bench run, saying what to give", () => {
    const dir = mkdtempSync(join(tmpdir(), "mountbox-bench-track-"));
    afterAll(() => rmSync(dir, { recursive: true, force: true }));
    const messageOf = (fn: () => unknown) => {
      try {
        fn();
      } catch (err) {
        return `${(err as Error).name} ${(err as { code?: string }).code}: ${(err as Error).message}`;
      }
      throw new Error("did not throw");
    };
    const file = (name: string, text: string) => {
      writeFileSync(join(dir, name), text);
      return join(dir, name);
    };

    it("a missing file, a folder", () => {
      expect(messageOf(() => readBenchRun("bench/runs/nope.json"))).toMatchInlineSnapshot(
        `"BenchInputError bench_input_invalid: bench/runs/nope.json: no such file — give files written by \`npm run bench -- --json\` (bench/runs/*.json)"`,
      );
      expect(
        messageOf(() => readBenchRun(dir)).endsWith(
          ": a folder, not a file — give files written by `npm run bench -- --json` (bench/runs/*.json)",
        ),
      ).toBe(true);
      expect(readBenchRun(file("ok.json", JSON.stringify(a)))).toEqual(a);
    });

    it("not JSON, JSON of something else, another version, broken rows", () => {
      const cases = [
        "# Benchmark results",
        "[1, 2]",
        JSON.stringify({ date: "d", node: "v20", rows: [] }),
        JSON.stringify({ ...a, version: 2 }),
        JSON.stringify({ ...a, machine: undefined }),
        JSON.stringify({ ...a, rows: {} }),
        JSON.stringify({ ...a, rows: [a.rows[0], { ...a.rows[1], ratio: "7.5" }] }),
        JSON.stringify({ ...a, rows: [null] }),
        JSON.stringify({ ...a, rows: [{ ...a.rows[0], goal: 0.8 }] }),
        JSON.stringify({ ...a, rows: [{ ...a.rows[0], hz: null }] }),
      ];
      expect(
        cases.map((text) => messageOf(() => parseBenchRun(text, "A.json"))),
      ).toMatchInlineSnapshot(`
        [
          "BenchInputError bench_input_invalid: A.json: not JSON — give files written by \`npm run bench -- --json\` (bench/runs/*.json)",
          "BenchInputError bench_input_invalid: A.json: not a bench run (no "kind": "mountbox-bench-run") — give files written by \`npm run bench -- --json\` (bench/runs/*.json)",
          "BenchInputError bench_input_invalid: A.json: not a bench run (no "kind": "mountbox-bench-run") — give files written by \`npm run bench -- --json\` (bench/runs/*.json)",
          "BenchInputError bench_input_invalid: A.json: bench run version 2; this runner reads version 1 — record the run again with this checkout",
          "BenchInputError bench_input_invalid: A.json: not a bench run ("date", "node" or "machine" missing) — give files written by \`npm run bench -- --json\` (bench/runs/*.json)",
          "BenchInputError bench_input_invalid: A.json: not a bench run ("rows" is not a list) — give files written by \`npm run bench -- --json\` (bench/runs/*.json)",
          "BenchInputError bench_input_invalid: A.json: row 2 is not a bench row: "ratio" is not a finite number",
          "BenchInputError bench_input_invalid: A.json: row 1 is not a bench row: it is not an object",
          "BenchInputError bench_input_invalid: A.json: row 1 is not a bench row: "goal" is neither text nor null",
          "BenchInputError bench_input_invalid: A.json: row 1 is not a bench row: "hz" is not a finite number",
        ]
      `);
    });
  });
});

describe("the runner's arguments", () => {
  it("reads --json's file only when it ends in .json, and module filters", () => {
    expect(parseBenchArgs(["--json"]).json).toEqual({ file: null });
    expect(parseBenchArgs(["--json", "port"])).toMatchObject({
      json: { file: null },
      only: ["port"],
    });
    expect(parseBenchArgs(["core", "--ci", "--json", "out/x.json"])).toMatchObject({
      ci: true,
      json: { file: "out/x.json" },
      only: ["core"],
    });
    expect(parseBenchArgs(["--compare", "a.json", "b.json"]).compare).toEqual(["a.json", "b.json"]);
  });

  it("refuses a wrong combination with the usage", () => {
    const messageOf = (argv: string[]) => {
      try {
        parseBenchArgs(argv);
        return "accepted";
      } catch (err) {
        return (err as Error).message.replace(/ — usage: .*/, " — usage");
      }
    };
    expect(
      [
        ["--compare", "a.json"],
        ["--compare", "a.json", "b.json", "--ci"],
        ["--chart", "--ci"],
        ["--jsno"],
      ].map(messageOf),
    ).toMatchInlineSnapshot(`
        [
          "--compare needs two run files (A, then B) — usage",
          "--compare only reads two run files: give it alone — usage",
          "--chart only redraws bench/ratios.svg from bench/runs/: give it alone (--write and --json redraw it too) — usage",
          "unknown option --jsno — usage",
        ]
      `);
  });
});

describe("bench/RESULTS.md (--write)", () => {
  it("embeds the chart in the generated head and keeps the notes below the mark", () => {
    const run = makeRun([]);
    const header = formatResultsHeader(run, "bench/runs/2026-11-28-1111111-node20.json");
    expect(header).toContain("![Tracked ratios over the recorded runs](ratios.svg)");
    const old = `# old head\n\n| old table |\n\n${NOTES_MARK}\n## Notes\n\n- kept\n`;
    const next = mergeResults(old, header, ["\n### core\n", "| new table |"]);
    expect(next).not.toContain("old head");
    expect(next).toContain("| new table |");
    expect(next.endsWith(`${NOTES_MARK}\n## Notes\n\n- kept\n`)).toBe(true);
    // Rewritten again, nothing is lost or doubled.
    expect(mergeResults(next, header, ["\n### core\n", "| new table |"])).toBe(next);
    expect(mergeResults("", header, [])).toContain(NOTES_MARK);
  });
});

describe("the chart (bench/ratios.svg)", () => {
  it("follows the rows the bench modules name (every figure has its module)", () => {
    expect(TRACKED_FIGURES.map((f) => f.module)).toEqual([
      "core",
      "core",
      "port",
      "host",
      "host",
      "os",
    ]);
  });

  it("draws one run: one point per figure present, the goals dashed, well-formed", () => {
    const svg = renderRatioChart([
      makeRun(trackedRows({ resolve: 0.82, derive: 0.49, port: 0.72 })),
    ]);
    const names = checkXml(svg);
    expect(names[0]).toBe("svg");
    expect(names.filter((n) => n === "g")).toHaveLength(6);
    const panels = svg.split("<g ").slice(1);
    expect(panels.map((p) => p.match(/<circle /g)?.length ?? 0)).toEqual([1, 1, 1, 0, 0, 0]);
    expect(names).not.toContain("polyline");
    expect(svg).toContain("(1 run)");
    // Goals: the rows' own, and derive's from issue 25 (its row has none).
    const goalOf = (panel: string) =>
      [...panel.matchAll(/fill="#cf222e">([^<]*)</g)].map((m) => m[1]).join(" ");
    expect(panels.map(goalOf)).toEqual([
      "goal ≥ 0.8×",
      "goal ≥ 0.8× (issue 25)",
      "goal ≥ 0.8×",
      "",
      "",
      "",
    ]);
    expect(panels.join("").match(/stroke-dasharray="6 4"/g)).toHaveLength(3);
    expect(svg.match(/>not in any recorded run</g)).toHaveLength(3);
    expect(svg).toContain(">1111111<");
    expect(svg).toContain("ratio to “fs.realpathSync.native (floor)”");
  });

  it("draws three runs in the order given: a line through full runs, --ci runs hollow", () => {
    const runs = [
      makeRun(trackedRows({ resolve: 0.82, derive: 0.49, port: 0.72, shell: 0.06 }), {
        sha: SHA[0],
      }),
      makeRun(trackedRows({ resolve: 0.9, derive: 0.61, port: 0.75 }), { sha: SHA[1], ci: true }),
      makeRun(trackedRows({ resolve: 1.1, derive: 0.85, port: 0.95, shell: 0.3 }), {
        sha: SHA[2],
        dirty: true,
      }),
    ];
    const svg = renderRatioChart(runs);
    checkXml(svg);
    expect(svg).toBe(renderRatioChart(runs));
    expect(svg).toContain("(3 runs, 1 of them --ci)");
    for (const label of ["1111111", "2222222", "3333333+"]) expect(svg).toContain(`>${label}<`);
    const resolvePanel = svg.split("<g ")[1]!;
    expect(resolvePanel.match(/<polyline[^>]*>/g)).toMatchInlineSnapshot(`
      [
        "<polyline fill="none" stroke="#0969da" stroke-width="2" points="52,104.6 390,82.9"/>",
      ]
    `);
    expect(resolvePanel.match(/<circle[^>]*>/g)).toMatchInlineSnapshot(`
      [
        "<circle cx="52" cy="104.6" r="3.5" fill="#0969da" stroke="#0969da" stroke-width="1.5"/>",
        "<circle cx="221" cy="98.4" r="3.5" fill="#ffffff" stroke="#0969da" stroke-width="1.5"/>",
        "<circle cx="390" cy="82.9" r="3.5" fill="#0969da" stroke="#0969da" stroke-width="1.5"/>",
      ]
    `);
    expect(resolvePanel).toContain(">1.10×<");
    // The shell panel: two points (the --ci run lacks the row), against spawn("true").
    const shell = collectSeries(runs, TRACKED_FIGURES[5]!);
    expect(shell).toMatchObject({
      baseline: 'spawn("true")',
      goal: null,
      points: [{ index: 0 }, { index: 2 }],
    });
    expect(svg).toContain("&quot;true&quot;");
  });

  it("prefers a figure's first baseline once any run has it, with that baseline's goal", () => {
    const bwrap = row(
      "os",
      'runCommand(sb, "true") (bubblewrap)',
      "bare bwrap, same namespaces and binds",
      0.4,
    );
    const runs = [
      makeRun(trackedRows({ resolve: 1, derive: 1, port: 1, shell: 0.06 })),
      makeRun([bwrap]),
    ];
    expect(collectSeries(runs, TRACKED_FIGURES[5]!)).toMatchObject({
      baseline: "bare bwrap, same namespaces and binds",
      goal: "≥ 0.5×",
      goalFromIssue: true,
      points: [{ index: 1, ratio: 0.4 }],
    });
  });

  it("orders runs by commit history, then date; unknown commits last", () => {
    const at = (sha: string, date: string) => makeRun([], { sha, date });
    const runs = [
      at(SHA[2]!, "2026-01-01"),
      at("f".repeat(40), "2025-01-01"),
      at(SHA[0]!, "2026-03-01"),
      at(SHA[0]!, "2026-02-01"),
    ];
    expect(
      orderRuns(runs, [SHA[0]!, SHA[1]!, SHA[2]!]).map(
        (r) => `${r.commit?.sha.slice(0, 1)} ${r.date}`,
      ),
    ).toEqual(["1 2026-02-01", "1 2026-03-01", "3 2026-01-01", "f 2025-01-01"]);
  });

  it("is checked by a parser that refuses broken XML", () => {
    expect(checkXml('<svg a="1"><g><text>x &amp; y</text></g><circle r="2"/></svg>')).toEqual([
      "svg",
      "g",
      "text",
      "circle",
    ]);
    const refusal = (xml: string) => {
      try {
        checkXml(xml);
        return "accepted";
      } catch (err) {
        return (err as Error).message;
      }
    };
    expect(
      [
        "<svg><g></svg>",
        "<svg><text>a & b</text></svg>",
        "<svg a=1></svg>",
        "<svg></svg><svg></svg>",
        "<svg>",
      ].map(refusal),
    ).toMatchInlineSnapshot(`
      [
        "</svg> closes <g>",
        "bare & in a & b",
        "not XML at 0: <svg a=1></svg>",
        "a second root element",
        "unclosed <svg>",
      ]
    `);
  });

  it("draws no runs without failing", () => {
    const svg = renderRatioChart([]);
    checkXml(svg);
    expect(svg.split("<g ").slice(1).join("")).not.toContain("<circle");
    expect(svg.match(/>not in any recorded run</g)).toHaveLength(6);
  });
});

describe("CI's gross-regression gate", () => {
  const names = (fs: ReturnType<typeof findGrossRegressions>) =>
    fs.map((f) => `${f.row.name}: ${f.row.ratio} (recorded ${f.recorded})`);

  it("fails a ratio below half its goal when no run is recorded, or the recorded run met it", () => {
    const run = makeRun([
      row("core", "resolve", "realpath", 0.39, "≥ 0.8×"),
      row("core", "derive", "realpath", 0.41, "≥ 0.8×"),
      row("fairness", "p99", "alone", 4.1, "≤ 2×"),
      row("io", "no goal", "x", 0.01),
    ]);
    expect(names(findGrossRegressions(run))).toEqual([
      "resolve: 0.39 (recorded null)",
      "p99: 4.1 (recorded null)",
    ]);
    const met = makeRun([
      row("core", "resolve", "realpath", 0.9, "≥ 0.8×"),
      row("fairness", "p99", "alone", 1.1, "≤ 2×"),
    ]);
    expect(names(findGrossRegressions(run, met))).toEqual([
      "resolve: 0.39 (recorded 0.9)",
      "p99: 4.1 (recorded 1.1)",
    ]);
  });

  it("holds a goal the recorded run missed to half (twice) that run's ratio", () => {
    const recorded = makeRun([
      row("os", "runCommand", "bare bwrap", 0.3, "≥ 0.5×"),
      row("host", "spare", "bare", 6, "≥ 10×"),
      row("pool", "p99", "alone", 3, "≤ 2×"),
    ]);
    const steady = makeRun([
      row("os", "runCommand", "bare bwrap", 0.2, "≥ 0.5×"),
      row("host", "spare", "bare", 3.5, "≥ 10×"),
      row("pool", "p99", "alone", 5.9, "≤ 2×"),
    ]);
    expect(findGrossRegressions(steady, recorded)).toEqual([]);
    const halved = makeRun([
      row("os", "runCommand", "bare bwrap", 0.14, "≥ 0.5×"),
      row("host", "spare", "bare", 2.9, "≥ 10×"),
      row("pool", "p99", "alone", 6.1, "≤ 2×"),
    ]);
    expect(names(findGrossRegressions(halved, recorded))).toEqual([
      "runCommand: 0.14 (recorded 0.3)",
      "spare: 2.9 (recorded 6)",
      "p99: 6.1 (recorded 3)",
    ]);
  });

  it("picks the newest full run on the same Node major, else the newest full run", () => {
    const at = (date: string, node: string, ci = false) =>
      makeRun([row("core", "r", "b", 1, "≥ 0.8×")], { date, node, ci });
    const runs = [
      at("2026-11-27T00:00:00.000Z", "v20.20.2"),
      at("2026-11-28T00:00:00.000Z", "v24.21.0"),
      at("2026-11-28T01:00:00.000Z", "v20.20.2", true),
      at("2026-11-26T00:00:00.000Z", "v20.19.0"),
    ];
    expect(pickRecordedRun(runs, "v20.20.2")).toBe(runs[0]);
    expect(pickRecordedRun(runs, "v24.1.0")).toBe(runs[1]);
    expect(pickRecordedRun(runs, "v26.0.0")).toBe(runs[1]);
    expect(pickRecordedRun([], "v20.20.2")).toBeUndefined();
  });
});
