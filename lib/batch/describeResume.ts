import { cut, oneLine, plural } from '../internal/text';
import type { RunReport } from './runBatch';

/**
 * How a resumed run went on, in words: `recovered from its journal at LLM call N (…)` or `restarted from the
 * beginning: why`; empty for a run that was not resumed. Used by the text and HTML reports.
 */
export function describeResume(run: Pick<RunReport, 'resumed' | 'resume'>): string {
  if (run.resumed === undefined) return '';
  if (run.resumed === 'finished') return 'finished earlier (not run again)';
  const info = run.resume;
  if (run.resumed === 'restarted')
    return `restarted from the beginning${info?.reason === undefined ? '' : `: ${info.reason}`}`;
  if (info === undefined) return 'recovered from its journal';
  // A report kept before `replayedTools` was named `servedTools` still says what it served.
  const served = info.servedTools ?? (info as { replayedTools?: number }).replayedTools ?? 0;
  const tools = [
    served > 0 ? `${plural(served, 'tool result')} served` : '',
    info.rerunTools > 0 ? `${plural(info.rerunTools, 'tool call')} re-run` : '',
    info.interruptedTools > 0 ? `${plural(info.interruptedTools, 'tool call')} answered as interrupted` : '',
  ].filter((t) => t !== '');
  const diverged = info.diverged === undefined ? '' : `; went live early: ${cut(oneLine(info.diverged), 120)}`;
  return (
    `recovered from its journal at LLM call ${info.recordedCalls + 1} (${plural(info.recordedCalls, 'response')} served` +
    `${tools.length > 0 ? `; ${tools.join(', ')}` : ''})${diverged}`
  );
}
