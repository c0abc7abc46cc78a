import { mergeUncertain } from '../internal/formatSpend';
import type { RunMoney } from './spendOfRun';

/**
 * A batch's money: its runs' (`spendOfRun`) added up, each figure rounded to 1e-10 as it grows,
 * and the reasons money is uncertain (or of unknown cost) merged. The one sum `inspect` (`readBatchFolder`) and
 * `watch` (`WatchState.spend`) both say, so the two agree on a folder read at one moment. Pure.
 */
export function sumRunMoney(runs: Iterable<RunMoney>): RunMoney {
  let costUsd = 0;
  let uncertainUsd = 0;
  let releasedUsd = 0;
  let unpricedCalls = 0;
  const reasons: RunMoney['uncertain'][] = [];
  const unpriced: RunMoney['unpriced'][] = [];
  for (const run of runs) {
    costUsd = roundCost(costUsd + run.costUsd);
    uncertainUsd = roundCost(uncertainUsd + run.uncertainUsd);
    releasedUsd = roundCost(releasedUsd + run.releasedUsd);
    unpricedCalls += run.unpricedCalls;
    reasons.push(run.uncertain);
    unpriced.push(run.unpriced);
  }
  return {
    costUsd,
    uncertainUsd,
    releasedUsd,
    uncertain: mergeUncertain(reasons),
    unpricedCalls,
    unpriced: mergeUncertain(unpriced),
  };
}

/** Dollars rounded to 1e-10, as usage totals round them. */
function roundCost(usd: number): number {
  return Math.round(usd * 1e10) / 1e10;
}
