import type { HistorySummary } from '../history/summarizeHistory';
import { safeStringify } from '../internal/safeStringify';
import { cut, plural } from '../internal/text';
import { esc } from './html';

/** The run page's panel of stalls (the adapter's `stall`): each firing's detector, what it did, why, and its evidence, as `agent-sm inspect` lists them. */
export function stallPanel(stalls: NonNullable<HistorySummary['stalls']>): string {
  const rows = stalls.list.map(
    (n) =>
      `<li><strong>${esc(`seq ${n.seq}, turn ${n.turn}: ${n.detector}${n.policy === undefined ? '' : ` → ${n.policy}`}`)}</strong> ${esc(n.reason)}` +
      (n.evidence === undefined ? '' : `<br><code>${esc(cut(safeStringify(n.evidence), 600))}</code>`) +
      '</li>',
  );
  return [
    '<div class="panel incomplete" id="stalls">',
    `<strong>${esc(`Stalls: ${plural(stalls.count, 'firing')} of a detector that found the agent repeating itself`)}</strong>`,
    `<ul>${rows.join('')}</ul>`,
    '</div>',
  ].join('\n');
}
