import { formatUsd } from './formatUsd';
import { plural } from './text';

/** The three figures of money, as totals carry them: charged (billed + uncertain), its uncertain part, and what was released. */
export interface SpendFigures {
  /** USD charged: billed plus uncertain. */
  readonly costUsd: number;
  /** Of `costUsd`, USD charged at a hold's worst case: the request may have been billed, no usage came back. */
  readonly uncertainUsd?: number | undefined;
  /** USD held and let go: provably not billed. */
  readonly releasedUsd?: number | undefined;
  /** Why money is uncertain, most calls first. */
  readonly uncertain?: ReadonlyArray<{ readonly why: string; readonly calls: number }> | undefined;
  /** LLM calls that may have been billed at a cost nobody knows: in none of the dollars above. */
  readonly unpricedCalls?: number | undefined;
  /** Why their cost is unknown, most calls first (when the reader knows). */
  readonly unpriced?: ReadonlyArray<{ readonly why: string; readonly calls: number }> | undefined;
}

/**
 * Money as every reader says it, the three figures apart: `$0.6139 billed`, then
 * `$0.1740 uncertain (19 LLM calls: <why>)` and `$0.0500 released` when there are any, and
 * `and 2 LLM calls of unknown cost (<why>)` for calls no price or hold covers. A cap counts
 * billed + uncertain; released money counts nowhere.
 */
export function formatSpend(spend: SpendFigures): string {
  const uncertain = spend.uncertainUsd ?? 0;
  const billed = Math.max(0, Math.round((spend.costUsd - uncertain) * 1e10) / 1e10);
  let out = `${formatUsd(billed)} billed`;
  if (uncertain > 0) {
    const reasons = spend.uncertain ?? [];
    const calls = reasons.reduce((n, r) => n + r.calls, 0);
    const first = reasons[0];
    const why =
      first === undefined
        ? ''
        : ` (${plural(calls, 'LLM call')}: ${first.why}${reasons.length > 1 ? `; ${plural(reasons.length - 1, 'other reason')}` : ''})`;
    out += `, ${formatUsd(uncertain)} uncertain${why}`;
  }
  if ((spend.releasedUsd ?? 0) > 0) out += `, ${formatUsd(spend.releasedUsd!)} released (not billed)`;
  // A call whose cost is unknown is never $0: the dollars above are then at least what was spent.
  const unpriced = spend.unpricedCalls ?? 0;
  if (unpriced > 0) {
    const reasons = spend.unpriced ?? [];
    const first = reasons[0];
    const why =
      first === undefined
        ? ''
        : ` (${first.why}${reasons.length > 1 ? `; ${plural(reasons.length - 1, 'other reason')}` : ''})`;
    out += `, and ${plural(unpriced, 'LLM call')} of unknown cost${why}`;
  }
  return out;
}

/**
 * Money in a table's cell: the amount charged, its uncertain part when there is one, and its
 * calls of unknown cost when there are any (`$0.4000 ($0.1000 uncertain)`, `$0.0000 (1 call of unknown cost)`).
 */
export function formatSpendCell(spend: Pick<SpendFigures, 'costUsd' | 'uncertainUsd' | 'unpricedCalls'>): string {
  const uncertain = spend.uncertainUsd ?? 0;
  const unpriced = spend.unpricedCalls ?? 0;
  const notes = [
    ...(uncertain > 0 ? [`${formatUsd(uncertain)} uncertain`] : []),
    ...(unpriced > 0 ? [`${plural(unpriced, 'call')} of unknown cost`] : []),
  ];
  return notes.length > 0 ? `${formatUsd(spend.costUsd)} (${notes.join(', ')})` : formatUsd(spend.costUsd);
}

/** Why money is uncertain, as the figures carry it: each reason and how many calls it covers. */
export type UncertainReasons = NonNullable<SpendFigures['uncertain']>;

/**
 * The reasons of several runs as one list, most calls first: the calls of one reason added up,
 * for a report that sums the runs' money (a batch's totals, a store's listing).
 */
export function mergeUncertain(lists: Iterable<UncertainReasons | undefined>): Array<{ why: string; calls: number }> {
  const calls = new Map<string, number>();
  for (const list of lists) for (const { why, calls: n } of list ?? []) calls.set(why, (calls.get(why) ?? 0) + n);
  return [...calls].map(([why, n]) => ({ why, calls: n })).sort((a, b) => b.calls - a.calls);
}
