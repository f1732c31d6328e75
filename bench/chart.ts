/**
 * bench/ratios.svg: one small line chart per tracked figure over the
 * recorded runs (bench/runs/*.json), hand-written SVG with no dependency.
 * Pure: the same runs in the same order give the same bytes.
 */
import { parseGoal } from "./goal.js";
import { type BenchRun, formatRatio, labelCommit, type RunRow } from "./track.js";

/** A figure the chart follows across runs, picked from the rows by module, name and baseline. */
export interface TrackedFigure {
  /** The panel's title. */
  title: string;
  /** The bench module holding the row. */
  module: string;
  /** The start of the row's name (names may grow a detail). */
  name: string;
  /**
   * The baselines to plot against, in order of preference: the first whose
   * text (a substring of the row's baseline) occurs in any run is plotted, so
   * a panel never mixes ratios to different baselines. `goal` is the
   * issue's goal, drawn when the rows carry none.
   */
  baselines: { match: string; goal?: string }[];
}

/** The figures issue 25 asks to track: resolve, derive, port, delegation and shell. */
export const TRACKED_FIGURES: TrackedFigure[] = [
  {
    title: "resolve vs realpath",
    module: "core",
    name: "resolve (existing file",
    baselines: [{ match: "fs.realpathSync.native" }],
  },
  {
    title: "derive vs 3 × realpath",
    module: "core",
    name: "derive(",
    baselines: [{ match: "3 × fs.realpathSync.native", goal: "≥ 0.8×" }],
  },
  {
    title: "port read, 64 in flight, vs raw-port floor",
    module: "port",
    name: "ctx.sandbox.readFile 1 KiB, 64 in flight",
    baselines: [{ match: "raw-port floor" }],
  },
  {
    title: "run + 10 delegations (fresh threads) vs bare Worker starts",
    module: "host",
    name: "run + 10 delegations (fresh threads)",
    baselines: [{ match: "bare new Worker starts" }],
  },
  {
    title: "one delegation, warm spare ready, vs a bare Worker start",
    module: "host",
    name: "one delegation's latency, spare ready",
    baselines: [{ match: "bare new Worker start" }],
  },
  {
    title: 'runCommand(sb, "true") vs bare bwrap (else spawn)',
    module: "os",
    name: 'runCommand(sb, "true")',
    baselines: [{ match: "bwrap", goal: "≥ 0.5×" }, { match: 'spawn("true")' }],
  },
];

/** One figure's points over the runs, with the baseline and goal the panel shows. */
export interface FigureSeries {
  figure: TrackedFigure;
  /** The baseline text of the latest point, or null when no run has the row. */
  baseline: string | null;
  /** The goal drawn: the latest point's own, else the issue's, else null. */
  goal: string | null;
  /** True when the goal drawn is the issue's (the rows carry none). */
  goalFromIssue: boolean;
  /** Index into the runs, ratio, and whether that run was a short `--ci` run. */
  points: { index: number; ratio: number; ci: boolean }[];
}

const matchesFigure = (row: RunRow, f: TrackedFigure, baseline: string) =>
  row.module === f.module && row.name.startsWith(f.name) && row.baseline.includes(baseline);

/** Picks a figure's row out of each run (runs without it leave a gap). */
export function collectSeries(runs: BenchRun[], figure: TrackedFigure): FigureSeries {
  const choice = figure.baselines.find((b) =>
    runs.some((run) => run.rows.some((row) => matchesFigure(row, figure, b.match))),
  );
  const series: FigureSeries = {
    figure,
    baseline: null,
    goal: null,
    goalFromIssue: false,
    points: [],
  };
  if (!choice) return series;
  let latest: RunRow | undefined;
  runs.forEach((run, index) => {
    const row = run.rows.find((r) => matchesFigure(r, figure, choice.match));
    if (!row) return;
    series.points.push({ index, ratio: row.ratio, ci: run.ci });
    latest = row;
  });
  series.baseline = latest?.baseline ?? null;
  series.goal = latest?.goal ?? choice.goal ?? null;
  series.goalFromIssue = !latest?.goal && choice.goal !== undefined;
  return series;
}

/**
 * Orders runs by their commit's place in `history` (shas, oldest first, as
 * `git rev-list --reverse HEAD` gives them), then by date; runs of commits
 * outside the history come last, by date.
 */
export function orderRuns(runs: BenchRun[], history: string[]): BenchRun[] {
  const place = new Map(history.map((sha, i) => [sha, i]));
  const rank = (run: BenchRun) => (run.commit ? (place.get(run.commit.sha) ?? Infinity) : Infinity);
  return [...runs].sort((a, b) => {
    const ra = rank(a);
    const rb = rank(b);
    if (ra !== rb) return ra < rb ? -1 : 1;
    return a.date < b.date ? -1 : a.date > b.date ? 1 : 0;
  });
}

/** Escapes text for SVG content and attribute values. */
export function escapeXml(s: string): string {
  return s
    .replaceAll("&", "&amp;")
    .replaceAll("<", "&lt;")
    .replaceAll(">", "&gt;")
    .replaceAll('"', "&quot;");
}

/** A coordinate rounded to 0.1 px, printed without a trailing ".0". */
const px = (v: number) => String(Math.round(v * 10) / 10);

/** A tick step of 1, 2, 2.5 or 5 × 10^k giving about four steps up to `max`. */
export function pickTickStep(max: number): number {
  const rough = max / 4;
  const power = 10 ** Math.floor(Math.log10(rough));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * power).find((s) => s >= rough);
  return step ?? 10 * power;
}

/** A tick label: the value with at most 3 decimals, trailing zeros dropped, and "×". */
const tickLabel = (v: number) => `${String(Math.round(v * 1000) / 1000)}×`;

/** Cuts text to `max` characters with an ellipsis. */
const clip = (s: string, max: number) => (s.length > max ? `${s.slice(0, max - 1)}…` : s);

const PANEL_W = 460;
const PANEL_H = 210;
const COLS = 2;
const MARGIN = 10;
const HEADER_H = 64;
// The right margin holds the goal's label, beside its dashed line, clear of the points.
const PLOT = { left: 52, right: PANEL_W - 70, top: 52, bottom: PANEL_H - 42 };
const MAX_X_LABELS = 8;
const BLUE = "#0969da";
const RED = "#cf222e";
const GREY = "#57606a";
const GRID = "#d8dee4";
const INK = "#1f2328";

/** The x position of run `i` of `n` inside a panel (a single run sits in the middle). */
function placeX(i: number, n: number): number {
  if (n <= 1) return (PLOT.left + PLOT.right) / 2;
  return PLOT.left + (i * (PLOT.right - PLOT.left)) / (n - 1);
}

/** Draws one panel (its top-left corner at the origin). */
function drawPanel(series: FigureSeries, labels: string[]): string[] {
  const { figure, points } = series;
  const out = [
    `<rect x="0.5" y="0.5" width="${PANEL_W - 1}" height="${PANEL_H - 1}" fill="#ffffff" stroke="${GRID}"/>`,
    `<text x="12" y="20" font-size="13" font-weight="600" fill="${INK}">${escapeXml(figure.title)}</text>`,
    `<text x="12" y="37" font-size="10" fill="${GREY}">${escapeXml(
      clip(
        `${figure.module}: ${series.baseline ? `ratio to “${series.baseline}”` : figure.name}`,
        84,
      ),
    )}</text>`,
  ];
  const goal = parseGoal(series.goal);
  const goalValue = goal?.min ?? goal?.max;
  const highest = Math.max(0, goalValue ?? 0, ...points.map((p) => p.ratio));
  const step = pickTickStep(highest > 0 ? highest * 1.1 : 1);
  const top = Math.max(step, Math.ceil((highest * 1.1) / step) * step);
  const y = (v: number) => PLOT.bottom - (v / top) * (PLOT.bottom - PLOT.top);
  for (let t = 0; t <= top + step / 1000; t += step) {
    out.push(
      `<line x1="${PLOT.left}" y1="${px(y(t))}" x2="${PLOT.right}" y2="${px(y(t))}" stroke="${GRID}" stroke-width="1"/>`,
      `<text x="${PLOT.left - 6}" y="${px(y(t) + 3.5)}" font-size="10" fill="${GREY}" text-anchor="end">${tickLabel(t)}</text>`,
    );
  }
  // Short shas under the runs, thinned evenly from the latest (always labelled) back, so none overlap.
  const every = Math.ceil(labels.length / MAX_X_LABELS);
  labels.forEach((label, i) => {
    if ((labels.length - 1 - i) % every !== 0) return;
    out.push(
      `<text x="${px(placeX(i, labels.length))}" y="${PLOT.bottom + 16}" font-size="10" fill="${GREY}" text-anchor="middle" font-family="ui-monospace, SFMono-Regular, Menlo, Consolas, monospace">${escapeXml(label)}</text>`,
    );
  });
  if (goalValue !== undefined) {
    const gy = px(y(goalValue));
    out.push(
      `<line x1="${PLOT.left}" y1="${gy}" x2="${PLOT.right}" y2="${gy}" stroke="${RED}" stroke-width="1.5" stroke-dasharray="6 4"/>`,
      ...[
        "goal",
        `${goal?.min !== undefined ? "≥" : "≤"} ${goalValue}×`,
        ...(series.goalFromIssue ? ["(issue 25)"] : []),
      ].map(
        (line, i) =>
          `<text x="${PLOT.right + 6}" y="${px(y(goalValue) - 2 + i * 11)}" font-size="10" fill="${RED}">${escapeXml(line)}</text>`,
      ),
    );
  }
  if (points.length === 0) {
    out.push(
      `<text x="${px((PLOT.left + PLOT.right) / 2)}" y="${px((PLOT.top + PLOT.bottom) / 2)}" font-size="11" fill="${GREY}" text-anchor="middle">not in any recorded run</text>`,
    );
    return out;
  }
  const n = labels.length;
  // The line joins full runs only: a --ci run is too short to be a point of the trend.
  const full = points.filter((p) => !p.ci);
  if (full.length >= 2)
    out.push(
      `<polyline fill="none" stroke="${BLUE}" stroke-width="2" points="${full
        .map((p) => `${px(placeX(p.index, n))},${px(y(p.ratio))}`)
        .join(" ")}"/>`,
    );
  for (const p of points)
    out.push(
      `<circle cx="${px(placeX(p.index, n))}" cy="${px(y(p.ratio))}" r="3.5" fill="${p.ci ? "#ffffff" : BLUE}" stroke="${BLUE}" stroke-width="1.5"/>`,
    );
  const last = points[points.length - 1]!;
  const lx = placeX(last.index, n);
  out.push(
    `<text x="${px(lx)}" y="${px(y(last.ratio) - 8)}" font-size="11" font-weight="600" fill="${INK}" stroke="#ffffff" stroke-width="3" paint-order="stroke" text-anchor="${lx > PLOT.right - 30 ? "end" : "middle"}">${escapeXml(formatRatio(last.ratio))}</text>`,
  );
  return out;
}

/** The legend line: a full run, a --ci run, the goal; then how the chart is made. */
function drawLegend(x: number, y: number): string[] {
  const text = (dx: number, s: string) =>
    `<text x="${x + dx}" y="${y + 4}" font-size="11" fill="${GREY}">${escapeXml(s)}</text>`;
  return [
    `<circle cx="${x + 4}" cy="${y}" r="3.5" fill="${BLUE}" stroke="${BLUE}" stroke-width="1.5"/>`,
    text(12, "full run (joined by the line)"),
    `<circle cx="${x + 180}" cy="${y}" r="3.5" fill="#ffffff" stroke="${BLUE}" stroke-width="1.5"/>`,
    text(188, "short --ci run"),
    `<line x1="${x + 280}" y1="${y}" x2="${x + 304}" y2="${y}" stroke="${RED}" stroke-width="1.5" stroke-dasharray="6 4"/>`,
    text(310, "goal"),
    text(360, "made by npm run bench -- --chart (and by --json, --write)"),
  ];
}

/**
 * Renders bench/ratios.svg from runs already in commit order: one panel per
 * tracked figure, x = the runs (short sha), y = the ratio from 0, the goal
 * dashed; full runs filled and joined, `--ci` runs hollow.
 */
export function renderRatioChart(
  runs: BenchRun[],
  figures: TrackedFigure[] = TRACKED_FIGURES,
): string {
  const labels = runs.map(labelCommit);
  const rows = Math.ceil(figures.length / COLS);
  const width = COLS * PANEL_W + (COLS + 1) * MARGIN;
  const height = HEADER_H + rows * (PANEL_H + MARGIN) + MARGIN;
  const ci = runs.filter((r) => r.ci).length;
  const out = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="-apple-system, BlinkMacSystemFont, 'Segoe UI', Helvetica, Arial, sans-serif">`,
    "<title>mountbox benchmark ratios over the recorded runs</title>",
    `<rect width="${width}" height="${height}" fill="#f6f8fa"/>`,
    `<text x="${MARGIN + 2}" y="24" font-size="16" font-weight="600" fill="${INK}">Benchmark ratios over the recorded runs (${runs.length} run${runs.length === 1 ? "" : "s"}${ci ? `, ${ci} of them --ci` : ""})</text>`,
    `<text x="${MARGIN + 2}" y="42" font-size="11" fill="${GREY}">ratio = measured ÷ baseline, both in the same run (above 1× is faster). x: bench/runs/*.json in commit order, short sha (+ = uncommitted changes).</text>`,
    ...drawLegend(MARGIN + 2, 54),
  ];
  figures.forEach((figure, i) => {
    const x = MARGIN + (i % COLS) * (PANEL_W + MARGIN);
    const y = HEADER_H + Math.floor(i / COLS) * (PANEL_H + MARGIN);
    out.push(
      `<g transform="translate(${x} ${y})">`,
      ...drawPanel(collectSeries(runs, figure), labels),
      "</g>",
    );
  });
  out.push("</svg>");
  return `${out.join("\n")}\n`;
}
