import { esc } from './html';

// Charts drawn here, as SVG text, when the page is built: no charting library in the page, no
// canvas, nothing to load, readable with the script blocked. Labels go through `esc`; colours
// are CSS classes (the policy forbids style attributes), numbers are rounded coordinates.

/** One bar of a horizontal bar chart. */
export interface Bar {
  readonly label: string;
  readonly value: number;
  /** CSS class of the bar (its colour). */
  readonly cls: string;
  /** Text after the bar, e.g. `12.0 s (20%)`. */
  readonly note: string;
}

const r = (n: number): number => Math.round(n * 10) / 10;

/** Horizontal bars, one per row, longest value full width. */
export function barChart(
  bars: readonly Bar[],
  options: { title: string; width?: number; labelWidth?: number },
): string {
  const { title, width = 760, labelWidth = 210 } = options;
  const row = 22;
  const noteWidth = 150;
  const height = bars.length * row + 8;
  const max = Math.max(0, ...bars.map((b) => b.value));
  const span = width - labelWidth - noteWidth;
  const out = [
    `<svg class="chart" role="img" aria-label="${esc(title)}" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}">`,
    `<title>${esc(title)}</title>`,
  ];
  bars.forEach((b, i) => {
    const y = 4 + i * row;
    const w = max > 0 ? Math.max(b.value > 0 ? 1 : 0, (b.value / max) * span) : 0;
    out.push(
      `<text class="label" x="${labelWidth - 8}" y="${y + 15}" text-anchor="end">${esc(b.label)}</text>`,
      `<rect class="${esc(b.cls)}" x="${labelWidth}" y="${y + 3}" width="${r(w)}" height="${row - 6}" rx="2"><title>${esc(`${b.label}: ${b.note}`)}</title></rect>`,
      `<text class="note" x="${r(labelWidth + w + 6)}" y="${y + 15}">${esc(b.note)}</text>`,
    );
  });
  out.push('</svg>');
  return out.join('');
}

/** One line of a line chart: points sorted by x. */
export interface Series {
  readonly name: string;
  readonly cls: string;
  readonly points: ReadonlyArray<readonly [number, number]>;
}

/**
 * Step lines over time (a cumulative figure only changes when something is spent), with
 * optional horizontal limit line. `x` is milliseconds from the start.
 */
export function lineChart(
  series: readonly Series[],
  options: {
    title: string;
    yFormat: (n: number) => string;
    xFormat: (ms: number) => string;
    xMax?: number;
    limit?: { value: number; label: string };
    /** Moments to mark with an upright line (a crash, a resume), labelled once per class. */
    marks?: ReadonlyArray<{ x: number; label: string; cls: string }>;
    width?: number;
    height?: number;
  },
): string {
  const { title, yFormat, xFormat, limit, width = 760, height = 220 } = options;
  const left = 70;
  const right = 20;
  const top = 14;
  const bottom = 40;
  const all = series.flatMap((s) => s.points);
  const xMax = Math.max(1, options.xMax ?? 0, ...all.map((p) => p[0]));
  const yMax = Math.max(limit?.value ?? 0, ...all.map((p) => p[1])) * 1.05 || 1;
  const X = (x: number): number => r(left + (x / xMax) * (width - left - right));
  const Y = (y: number): number => r(top + (1 - y / yMax) * (height - top - bottom));
  const out = [
    `<svg class="chart" role="img" aria-label="${esc(title)}" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}">`,
    `<title>${esc(title)}</title>`,
  ];
  out.push(
    `<line class="axis" x1="${left}" y1="${Y(0)}" x2="${width - right}" y2="${Y(0)}"/>`,
    `<line class="axis" x1="${left}" y1="${top}" x2="${left}" y2="${Y(0)}"/>`,
  );
  for (let i = 0; i <= 4; i++) {
    const y = (yMax / 1.05) * (i / 4);
    out.push(
      `<line class="grid" x1="${left}" y1="${Y(y)}" x2="${width - right}" y2="${Y(y)}"/>`,
      `<text class="tick" x="${left - 6}" y="${Y(y) + 4}" text-anchor="end">${esc(yFormat(y))}</text>`,
    );
    const x = xMax * (i / 4);
    out.push(
      `<text class="tick" x="${X(x)}" y="${height - bottom + 16}" text-anchor="${i === 0 ? 'start' : i === 4 ? 'end' : 'middle'}">${esc(xFormat(x))}</text>`,
    );
  }
  if (limit !== undefined) {
    out.push(
      `<line class="limit" x1="${left}" y1="${Y(limit.value)}" x2="${width - right}" y2="${Y(limit.value)}"/>`,
      `<text class="limit-label" x="${width - right}" y="${Y(limit.value) - 4}" text-anchor="end">${esc(limit.label)}</text>`,
    );
  }
  // Runs cut off together mark one moment: one line per pixel and class, one label per class.
  const drawn = new Set<string>();
  const labelled = new Set<string>();
  for (const m of options.marks ?? []) {
    const x = X(Math.min(xMax, Math.max(0, m.x)));
    if (drawn.has(`${m.cls} ${x}`)) continue;
    drawn.add(`${m.cls} ${x}`);
    out.push(
      `<line class="mark ${esc(m.cls)}" x1="${x}" y1="${top}" x2="${x}" y2="${Y(0)}"><title>${esc(m.label)}</title></line>`,
    );
    if (labelled.has(m.cls)) continue;
    labelled.add(m.cls);
    out.push(
      `<text class="mark-label ${esc(m.cls)}" x="${x + 3}" y="${top + 10 + 12 * (labelled.size - 1)}">${esc(m.label)}</text>`,
    );
  }
  series.forEach((s, i) => {
    if (s.points.length === 0) return;
    let d = `M${X(0)},${Y(0)}`;
    for (const [x, y] of s.points) d += `H${X(x)}V${Y(y)}`;
    d += `H${X(xMax)}`;
    out.push(`<path class="line ${esc(s.cls)}" d="${d}"/>`);
    const legendX = left + 10 + i * 190;
    out.push(
      `<rect class="${esc(s.cls)}" x="${legendX}" y="${height - 14}" width="12" height="4"/>`,
      `<text class="note" x="${legendX + 16}" y="${height - 9}">${esc(s.name)}</text>`,
    );
  });
  out.push('</svg>');
  return out.join('');
}

/**
 * At most `max` points of a step series, keeping the last value in each slice of time (a
 * cumulative series loses no peak that way): 10,000 runs' spend stays a small path.
 */
export function thin(points: ReadonlyArray<readonly [number, number]>, max: number): Array<readonly [number, number]> {
  if (points.length <= max) return [...points];
  const xMax = points[points.length - 1]![0] || 1;
  const out: Array<readonly [number, number]> = [];
  let bucket = -1;
  for (const p of points) {
    const b = Math.min(max - 1, Math.floor((p[0] / xMax) * max));
    if (b === bucket) out[out.length - 1] = p;
    else out.push(p);
    bucket = b;
  }
  return out;
}
