import type { CapPause } from '../batch/keeping/capPause';
import { escapeControl } from '../internal/escapeControl';
import { formatSpend, type SpendFigures } from '../internal/formatSpend';
import { formatUsd } from '../internal/formatUsd';

/** What `inspect` and `watch` say of a batch paused at its cap: the figures, and the command that goes on. */
export interface CapPauseLines {
  /** `Paused at its cap: $0.0120 of $0.0200 ($0.0120 billed)`. */
  readonly paused: string;
  /** `raise with agent-sm raise DIR --total-usd 0.05` (or `--store URL ID`). */
  readonly raise: string;
}

/**
 * The lines of a batch paused at its dollar cap (`pause`, its folder's pause file): what it
 * spent (`spend`, the batch's money as `sumRunMoney` counts it, the same figures in `inspect`
 * and `watch`) of the cap, and the `agent-sm raise` that lets it go on, for the batch as `args`
 * name it (the folder as the user typed it, or `--store URL <batchId>`) and a new cap one step
 * up the 1-2-5 series (`suggestedCapUsd`). Pure.
 */
export function formatCapPause(pause: CapPause, args: readonly string[], spend: SpendFigures): CapPauseLines {
  return {
    paused: `Paused at its cap: ${formatUsd(spend.costUsd)} of ${formatUsd(pause.capUsd)} (${formatSpend(spend)})`,
    raise: `raise with agent-sm raise ${args.map((a) => shellWord(escapeControl(a))).join(' ')} --total-usd ${plainFigure(suggestedCapUsd(pause.capUsd))}`,
  };
}

/**
 * The cap `agent-sm raise` is suggested with: the next round figure above `capUsd` in the
 * 1-2-5 series ($0.02 → $0.05, $10 → $20, $30 → $50, $50 → $100): round, as a person would
 * type it, and about twice the cap, so a raise buys as much again as the batch has spent.
 */
export function suggestedCapUsd(capUsd: number): number {
  if (!(capUsd > 0) || !Number.isFinite(capUsd)) return 1;
  let power = 10 ** Math.floor(Math.log10(capUsd));
  for (;;) {
    for (const step of [1, 2, 5]) {
      const figure = Number((step * power).toPrecision(12));
      if (figure > capUsd * (1 + 1e-12)) return figure;
    }
    power *= 10;
  }
}

/** A figure as `--total-usd` takes it: plain decimals, never an exponent (`0.0005`, not `5e-4`). */
function plainFigure(usd: number): string {
  return usd.toFixed(12).replace(/\.?0+$/, '');
}

/** A folder as a shell takes it: as is when it has only plain characters, else in single quotes. */
function shellWord(text: string): string {
  return /^[\w./:@%+=,~-]+$/.test(text) ? text : `'${text.replace(/'/g, `'\\''`)}'`;
}
