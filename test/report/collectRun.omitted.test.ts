import { collectRun, PAGE_MOVES_KEPT } from '../../lib/report/collectRun';
import { renderRunPage } from '../../lib/report/renderRunPage';
import type { TransitionRecord } from '../../lib/machine/TransitionRecord';

/** A run of `turns` one-call turns: 4 moves a turn after the first. */
function records(turns: number): TransitionRecord<string>[] {
  const out: TransitionRecord<string>[] = [];
  let seq = 0;
  const move = (from: string, to: string): void => {
    seq += 1;
    out.push({ seq, from, to, description: `${from} to ${to}`, at: seq, durationMs: 1, forced: false });
  };
  move('Ready', 'WaitingForUserInput');
  for (let t = 0; t < turns; t++) {
    move('WaitingForUserInput', 'SendingToLLM');
    move('SendingToLLM', 'ProcessingLLMResponse');
    move('ProcessingLLMResponse', 'EndOfTurn');
    move('EndOfTurn', 'WaitingForUserInput');
  }
  return out;
}

describe('a run longer than a page keeps', () => {
  it('keeps its first and last moves, counts the rest, and the summary still covers them all', () => {
    const all = records(12_000); // 48,001 moves
    const run = collectRun(all);
    expect(run.omittedMoves).toBe(all.length - 2 * PAGE_MOVES_KEPT);
    expect(run.records.map((r) => r.seq)).toEqual([
      ...all.slice(0, PAGE_MOVES_KEPT).map((r) => r.seq),
      ...all.slice(-PAGE_MOVES_KEPT).map((r) => r.seq),
    ]);
    expect(run.summary.records).toBe(all.length);
    expect(run.order).toEqual(expect.arrayContaining(['SendingToLLM', 'EndOfTurn']));
  });

  it('says so on the page, naming where the gap is', () => {
    const all = records(12_000);
    const html = renderRunPage(all, { file: 'long.jsonl' });
    expect(html).toContain(
      `This run has ${(all.length - 2 * PAGE_MOVES_KEPT).toLocaleString('en-US')} more moves than a page keeps`,
    );
    expect(html).toContain(`(to seq ${PAGE_MOVES_KEPT})`);
    expect(html).toContain(`(from seq ${all.length - PAGE_MOVES_KEPT + 1})`);
  });

  it('leaves a run that fits whole, with no note', () => {
    const all = records(100);
    const run = collectRun(all);
    expect(run.omittedMoves).toBe(0);
    expect(run.records).toHaveLength(all.length);
    expect(renderRunPage(all)).not.toContain('more moves than a page keeps');
  });
});
