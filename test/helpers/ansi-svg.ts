/**
 * A terminal screen (tmux `capture-pane -e`: text with SGR escapes) drawn
 * as an SVG image, for the README's picture of the live view: monospace
 * text with the screen's colours, bold, dim and inverse cells.
 */

const CELL_W = 8.4;
const CELL_H = 18;
const PAD = 12;
const FOREGROUND = "#d8dee9";
const BACKGROUND = "#1e222a";
/** The 16 terminal colours (a dark theme). */
const PALETTE = [
  "#3b4252",
  "#e06c75",
  "#98c379",
  "#e5c07b",
  "#61afef",
  "#c678dd",
  "#56b6c2",
  "#d8dee9",
  "#5c6370",
  "#ff7b86",
  "#b5e890",
  "#ffd68a",
  "#7cc4ff",
  "#e09cff",
  "#7fdbe6",
  "#ffffff",
];

interface Style {
  fg?: string;
  bg?: string;
  bold: boolean;
  dim: boolean;
  inverse: boolean;
}

interface Run {
  col: number;
  text: string;
  style: Style;
}

function xmlEscape(s: string): string {
  return s.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;");
}

/** The 256-colour cube and grey ramp. */
function color256(n: number): string {
  if (n < 16) return PALETTE[n] as string;
  if (n >= 232) {
    const v = 8 + (n - 232) * 10;
    return `rgb(${v},${v},${v})`;
  }
  const i = n - 16;
  const c = (k: number) => (k === 0 ? 0 : 55 + k * 40);
  return `rgb(${c(Math.floor(i / 36))},${c(Math.floor(i / 6) % 6)},${c(i % 6)})`;
}

function applySgr(style: Style, params: number[]): Style {
  const s = { ...style };
  for (let i = 0; i < params.length; i++) {
    const p = params[i] as number;
    if (p === 0)
      Object.assign(s, { fg: undefined, bg: undefined, bold: false, dim: false, inverse: false });
    else if (p === 1) s.bold = true;
    else if (p === 2) s.dim = true;
    else if (p === 22) Object.assign(s, { bold: false, dim: false });
    else if (p === 7) s.inverse = true;
    else if (p === 27) s.inverse = false;
    else if (p >= 30 && p <= 37) s.fg = PALETTE[p - 30];
    else if (p >= 90 && p <= 97) s.fg = PALETTE[p - 90 + 8];
    else if (p === 39) s.fg = undefined;
    else if (p >= 40 && p <= 47) s.bg = PALETTE[p - 40];
    else if (p === 49) s.bg = undefined;
    else if ((p === 38 || p === 48) && params[i + 1] === 5) {
      const c = color256(params[i + 2] ?? 0);
      if (p === 38) s.fg = c;
      else s.bg = c;
      i += 2;
    }
  }
  return s;
}

/** Splits one captured line into runs of one style. */
function parseLine(line: string, start: Style): { runs: Run[]; end: Style } {
  const runs: Run[] = [];
  let style = start;
  let col = 0;
  let text = "";
  const flush = () => {
    if (text !== "") runs.push({ col: col - [...text].length, text, style });
    text = "";
  };
  for (let i = 0; i < line.length; ) {
    const m = /^\x1b\[([\d;]*)m/.exec(line.slice(i, i + 32));
    if (m !== null) {
      flush();
      style = applySgr(style, (m[1] || "0").split(";").map(Number));
      i += m[0].length;
      continue;
    }
    const ch = String.fromCodePoint(line.codePointAt(i) as number);
    text += ch;
    col++;
    i += ch.length;
  }
  flush();
  return { runs, end: style };
}

/** The screen as an SVG document, `cols` × `rows` cells. */
export function renderScreenSvg(screen: string, cols: number, title: string): string {
  const lines = screen.replace(/\n+$/, "").split("\n");
  const width = Math.ceil(cols * CELL_W + 2 * PAD);
  const height = Math.ceil(lines.length * CELL_H + 2 * PAD + 24);
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" role="img" aria-label="${xmlEscape(title)}">`,
    `<rect width="100%" height="100%" rx="8" fill="${BACKGROUND}"/>`,
    ...[0, 1, 2].map(
      (i) =>
        `<circle cx="${PAD + 6 + i * 18}" cy="${PAD + 4}" r="5" fill="${["#e06c75", "#e5c07b", "#98c379"][i]}"/>`,
    ),
    `<g font-family="'DejaVu Sans Mono','Menlo','Consolas',monospace" font-size="14" xml:space="preserve">`,
  ];
  let style: Style = { bold: false, dim: false, inverse: false };
  lines.forEach((line, row) => {
    const parsed = parseLine(line, style);
    style = parsed.end;
    const y = PAD + 24 + row * CELL_H;
    for (const r of parsed.runs) {
      const fg = r.style.inverse ? (r.style.bg ?? BACKGROUND) : (r.style.fg ?? FOREGROUND);
      const bg = r.style.inverse ? (r.style.fg ?? FOREGROUND) : r.style.bg;
      const x = PAD + r.col * CELL_W;
      const n = [...r.text].length;
      if (bg !== undefined)
        out.push(
          `<rect x="${x.toFixed(1)}" y="${y}" width="${(n * CELL_W).toFixed(1)}" height="${CELL_H}" fill="${bg}"/>`,
        );
      if (r.text.trim() === "") continue;
      const attrs = [
        `x="${x.toFixed(1)}"`,
        `y="${y + 13}"`,
        `fill="${fg}"`,
        `textLength="${(n * CELL_W).toFixed(1)}"`,
        ...(r.style.bold ? ['font-weight="bold"'] : []),
        ...(r.style.dim ? ['opacity="0.6"'] : []),
      ];
      out.push(`<text ${attrs.join(" ")}>${xmlEscape(r.text)}</text>`);
    }
  });
  out.push("</g>", "</svg>", "");
  return out.join("\n");
}
