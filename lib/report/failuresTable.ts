import { plural } from '../internal/text';
import { esc } from './html';

/** One run of a batch page's failures table. */
export interface BatchPageFailure {
  readonly id: string;
  readonly outcome: string;
  /** Why it did not end well, when known. User data: escaped on the page. */
  readonly reason: string | undefined;
  readonly costUsd: number;
  /** Its row in the runs table (`#run-<row>` opens its page); -1 for none. */
  readonly row: number;
  /** A resume set earlier, cut-off attempts of it aside (and what they spent, when their files say). */
  readonly resumed?: ResumedMark | undefined;
}

/** A run a resume went on with: how many cut-off attempts were set aside, and what they spent when their files say. */
export interface ResumedMark {
  readonly attempts: number;
  readonly costUsd: number | undefined;
}

/**
 * Outcomes that did not end well, the worst first: the order `readBatchFolder` (and so
 * `agent-sm inspect`) lists them in, `incomplete` (a page's own word for a cut run) beside `cut_off`.
 */
export const FAILURE_ORDER: readonly string[] = [
  'error',
  'budget_exceeded',
  'stalled',
  'cancelled',
  'unreadable',
  'cut_off',
  'incomplete',
  'skipped',
];

/** Rows shown at most: the runs table below lists every run, so a batch of 10,000 failures stays a page that opens. */
export const FAILURES_SHOWN = 100;

/** Failures of `runs`, the worst first; runs of one outcome keep their order. */
export function rankFailures<T extends { readonly outcome: string }>(runs: readonly T[]): T[] {
  return runs
    .map((run, i) => ({ run, i, rank: FAILURE_ORDER.indexOf(run.outcome) }))
    .filter((r) => r.rank !== -1)
    .sort((a, b) => a.rank - b.rank || a.i - b.i)
    .map((r) => r.run);
}

/** A resumed run's mark, in words: that it was resumed, and what the attempts set aside spent when known. */
export function resumedMark(resumed: ResumedMark): string {
  const spent = resumed.costUsd === undefined ? '' : `, which spent $${resumed.costUsd.toFixed(4)}`;
  return `resumed after a crash: ${plural(resumed.attempts, 'cut-off attempt')} set aside${spent}`;
}

/**
 * The failures table that heads a batch page: each run that did not end well (already ranked,
 * the worst first) with its outcome, reason, cost and a link to its page; at most
 * `FAILURES_SHOWN`, with the count of the rest. With none, one line that says so. Pure.
 */
export function failuresTable(failures: readonly BatchPageFailure[], runs: number): string {
  if (failures.length === 0)
    return `<h2>Failures</h2><p class="all-well">No failures: ${runs === 1 ? 'the run' : `all ${runs.toLocaleString('en-US')} runs`} ended well.</p>`;
  const shown = failures.slice(0, FAILURES_SHOWN);
  const rows = shown.map((f) => {
    const id = f.row >= 0 ? `<a href="#run-${f.row}">${esc(f.id)}</a>` : esc(f.id);
    const mark = f.resumed === undefined ? '' : ` <span class="resumed">${esc(resumedMark(f.resumed))}</span>`;
    return `<tr class="o-${esc(f.outcome.replace(/[^a-z_]/g, ''))}"><td>${id}</td><td><span class="badge ${esc(f.outcome.replace(/[^a-z_]/g, ''))}">${esc(f.outcome)}</span></td><td class="reason">${esc(f.reason ?? '')}${mark}</td><td class="num">$${f.costUsd.toFixed(4)}</td></tr>`;
  });
  const count =
    failures.length > shown.length
      ? `the worst ${shown.length.toLocaleString('en-US')} of ${failures.length.toLocaleString('en-US')} shown; the runs table below lists them all (filter it by outcome)`
      : `${failures.length.toLocaleString('en-US')} of ${runs.toLocaleString('en-US')}`;
  return [
    `<h2>Failures <span class="count" id="failures-count">${esc(count)}</span></h2>`,
    `<p class="hint">${esc(`${plural(failures.length, 'run')} of ${runs.toLocaleString('en-US')} did not end well, the worst first.`)}</p>`,
    '<table id="failures"><thead><tr><th>run</th><th>outcome</th><th>reason</th><th class="num">cost</th></tr></thead>',
    `<tbody>${rows.join('')}</tbody></table>`,
  ].join('');
}
