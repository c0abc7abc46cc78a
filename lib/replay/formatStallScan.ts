import { escapeControl } from '../internal/escapeControl';
import { safeStringify } from '../internal/safeStringify';
import { cut, plural } from '../internal/text';
import type { StallScan } from './scanStalls';

/** What `agent-sm replay FILE --stall …` prints: each place a detector would have fired, or that none would. */
export function formatStallScan(scan: StallScan, file: string): string {
  const lines = [
    `Stall detectors ${scan.detectors.join(', ')} over ${escapeControl(file)}: ${plural(scan.responses, 'LLM response')} in its journal.`,
  ];
  if (scan.sightings.length === 0) {
    lines.push('None would have fired.');
    return lines.join('\n');
  }
  lines.push(
    `Would have fired ${plural(scan.sightings.length, 'time')} (the first moves the run to Stalled; each firing counts toward the policy):`,
  );
  for (const s of scan.sightings) {
    const { detector, reason, evidence } = s.finding;
    lines.push(
      escapeControl(
        `  response ${s.response} (turn ${s.turn}, after move ${s.afterSeq}): ${detector}: ${cut(reason, 300)}`,
      ),
    );
    lines.push(`    evidence: ${cut(escapeControl(safeStringify(evidence)), 300)}`);
  }
  return lines.join('\n');
}
