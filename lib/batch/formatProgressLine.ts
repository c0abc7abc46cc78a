import { formatUsd } from '../internal/formatUsd';

/** What the progress line of a running batch shows. */
export interface ProgressLineFigures {
  /** Runs ended, skipped ones included. */
  done: number;
  total: number;
  /** Runs ended otherwise than by ending their turn (skipped ones apart). */
  failed: number;
  skipped: number;
  /** Runs in flight. */
  running: number;
  /** Spend charged to the batch's shared budget so far. */
  costUsd: number;
  /** The batch's `total.maxCostUsd`, when it has one. */
  capUsd?: number;
  /** Seconds left at the pace so far, when known. */
  etaSeconds?: number;
  /** The drawn bar, e.g. `[=====-----]`. */
  bar?: string;
}

/**
 * One line for a terminal of `width` columns: `batch [=====-----] 7/12 done | 1 failed | 3 in
 * flight | $0.7000 of $2.0000 | ETA 4s`. Where it does not fit, the bar goes first (the figures
 * say more), then the line is cut to the width, so that a narrow terminal never wraps it (a
 * wrapped line would be drawn again one row down at each redraw).
 */
export function formatProgressLine(figures: ProgressLineFigures, width: number): string {
  const { done, total, failed, skipped, running, costUsd, capUsd, etaSeconds, bar } = figures;
  const parts = [
    `${done}/${total} done`,
    `${failed} failed`,
    ...(skipped > 0 ? [`${skipped} skipped`] : []),
    `${running} in flight`,
    capUsd === undefined ? `${formatUsd(costUsd)} spent` : `${formatUsd(costUsd)} of ${formatUsd(capUsd)}`,
  ];
  if (done < total && etaSeconds !== undefined && Number.isFinite(etaSeconds) && etaSeconds >= 0)
    parts.push(`ETA ${formatSeconds(etaSeconds)}`);
  const figuresText = parts.join(' | ');
  const withBar = bar === undefined ? undefined : `batch ${bar} ${figuresText}`;
  // The last column is left free: a line that fills it makes some terminals wrap.
  if (withBar !== undefined && withBar.length < width) return withBar;
  const line = `batch ${figuresText}`;
  return line.length < width ? line : line.slice(0, Math.max(0, width - 1)).trimEnd();
}

function formatSeconds(seconds: number): string {
  const s = Math.ceil(seconds);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}
