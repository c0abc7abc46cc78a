import type { HistoryValidation } from '../history/validateHistory';
import { escapeControl } from '../internal/escapeControl';
import { plural } from '../internal/text';

/**
 * `agent-sm validate`'s verdict as text: each problem by line, the corrupt lines read past
 * (`--salvage`), a run that did not end, and a closing line; `name` is the run as shown.
 */
export function formatValidation(name: string, result: HistoryValidation, skippedLines: readonly number[]): string {
  const out: string[] = [];
  for (const issue of result.issues)
    out.push(`${name}:${issue.line ?? '?'}: seq ${issue.seq}: ${issue.code}: ${escapeControl(issue.message)}`);
  if (skippedLines.length > 0)
    out.push(`${name}: skipped ${plural(skippedLines.length, 'corrupt line')} (--salvage): ${skippedLines.join(', ')}`);
  if (result.interrupted !== undefined) out.push(`${name}: ${escapeControl(result.interrupted.message)}`);
  if (result.ok && skippedLines.length === 0)
    out.push(
      `${name}: ${plural(result.records, 'record')}, ${result.interrupted === undefined ? 'no problems' : 'no problems in them, but the run did not end'}`,
    );
  else if (!result.ok)
    out.push(`${name}: ${plural(result.issues.length, 'problem')} in ${plural(result.records, 'record')}`);
  else out.push(`${name}: ${plural(result.records, 'record')} read, no problems in them`);
  return `${out.join('\n')}\n`;
}
