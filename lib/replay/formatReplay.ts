import { escapeControl } from '../internal/escapeControl';
import { formatUsd } from '../internal/formatUsd';
import { plural } from '../internal/text';
import type { ReplayedMove, ReplayReport } from './replayRun';

/** `RunningTool → Cancelled (forced): cancelled during RunningTool: …` */
function show(move: ReplayedMove | undefined): string {
  if (move === undefined) return '(nothing: the run ended here)';
  return escapeControl(`${move.from} → ${move.to}${move.forced ? ' (forced)' : ''}: ${move.description}`);
}

/** What `agent-sm replay` prints: whether the run reproduced, else where it parted, and where limits would have stopped it. */
export function formatReplay(report: ReplayReport, file: string): string {
  const lines = [
    `Replay of ${escapeControl(file)}: ${plural(report.llmCalls, 'LLM call')} answered from the journal, no request made, no tool run.`,
  ];
  if (report.stoppedBy !== undefined) {
    lines.push(
      `Under these limits the run would have stopped at move ${report.stoppedBy.move.seq} of ${report.recordedMoves}: ${show(report.stoppedBy.move)}`,
    );
    const u = report.usage;
    lines.push(
      `It would have spent ${formatUsd(u.costUsd)} (${plural(u.inputTokens + u.outputTokens, 'token')}, ${plural(u.llmCalls, 'LLM call')}, ${plural(u.toolCalls, 'tool call')}).`,
    );
    return lines.join('\n');
  }
  if (report.reproduced) {
    lines.push(`Reproduced: the same ${report.recordedMoves} moves, in order.`);
    return lines.join('\n');
  }
  const at = report.firstDifference!;
  lines.push(
    `Not reproduced: the moves part at move ${at.index + 1} (recorded ${report.recordedMoves}, replayed ${report.replayedMoves}).`,
  );
  lines.push(`  recorded: ${show(at.recorded)}`);
  lines.push(`  replayed: ${show(at.replayed)}`);
  if (report.diverged !== undefined) lines.push(`  ${escapeControl(report.diverged)}`);
  if (at.recorded !== undefined && /budget|exceeded/i.test(at.recorded.description))
    lines.push('  (the recorded run was stopped by a limit the replay was not given: pass it with --budget)');
  return lines.join('\n');
}
