// diffBatches, the pure comparison of two batches: tasks matched by id, regressions and
// improvements apart, the other changes by the size of their cost change, tasks of one side,
// and "same" only when nothing but time differs.
import { diffBatches, type RunDiffFacts } from '../../lib/batch/reading/diffBatches';
import type { BatchFolder, FolderRun } from '../../lib/batch/reading/readBatchFolder';

interface Run {
  id: string;
  outcome?: string;
  reason?: string;
  costUsd?: number;
  unpricedCalls?: number;
  llmCalls?: number;
  tokens?: number;
  digest?: string;
  durationMs?: number;
}

function batch(dir: string, runs: Run[]): { folder: BatchFolder; facts: Map<string, RunDiffFacts> } {
  const folderRuns: FolderRun[] = runs.map((r) => ({
    id: r.id,
    outcome: r.outcome ?? 'end_of_turn',
    reason: r.reason,
    costUsd: r.costUsd ?? 0.01,
    uncertainUsd: 0,
    releasedUsd: 0,
    uncertain: [],
    unpricedCalls: r.unpricedCalls ?? 0,
    unpriced: [],
    file: `${dir}/${r.id}.jsonl`,
    interrupted: [],
  }));
  const facts = new Map(
    runs.map((r) => [
      r.id,
      {
        llmCalls: r.llmCalls ?? 2,
        toolCalls: 1,
        inputTokens: r.tokens ?? 100,
        outputTokens: 10,
        durationMs: r.durationMs ?? 1000,
        digest: r.digest ?? 'd',
      },
    ]),
  );
  const costUsd = folderRuns.reduce((n, r) => n + r.costUsd, 0);
  return {
    folder: {
      dir,
      manifest: undefined,
      running: false,
      paused: undefined,
      raiseArgs: [dir],
      runs: folderRuns,
      totals: {
        runs: runs.length,
        outcomes: {},
        costUsd,
        uncertainUsd: 0,
        releasedUsd: 0,
        uncertain: [],
        unpricedCalls: 0,
        unpriced: [],
      },
      stopped: undefined,
      resumed: false,
      raises: [],
    },
    facts,
  };
}

const diff = (a: Run[], b: Run[]) => {
  const x = batch('A', a);
  const y = batch('B', b);
  return diffBatches(x.folder, x.facts, y.folder, y.facts);
};

describe('diffBatches', () => {
  it('the same tasks alike, at other speeds, are the same', () => {
    const result = diff(
      [{ id: 'a' }, { id: 'b' }],
      [
        { id: 'b', durationMs: 9 },
        { id: 'a', durationMs: 5000 },
      ],
    );
    expect(result).toMatchObject({ same: true, unchanged: 2, regressions: [], improvements: [], changed: [] });
    expect(result.a.totals.durationMs).toBe(2000);
    expect(result.b.totals.durationMs).toBe(5009);
  });

  it('a call of unknown cost on one side makes the task differ, even at the same dollars', () => {
    const result = diff([{ id: 'a', costUsd: 0 }], [{ id: 'a', costUsd: 0, unpricedCalls: 1 }]);
    expect(result.same).toBe(false);
    expect(result.changed.map((p) => [p.id, p.a.unpricedCalls, p.b.unpricedCalls])).toEqual([['a', 0, 1]]);
  });

  it('a regression keeps both reasons; an improvement is apart', () => {
    const result = diff(
      [{ id: 'a' }, { id: 'b', outcome: 'error', reason: 'HTTP 500' }],
      [{ id: 'a', outcome: 'budget_exceeded', reason: 'cap reached' }, { id: 'b' }],
    );
    expect(result.same).toBe(false);
    expect(result.regressions.map((p) => [p.id, p.a.outcome, p.b.outcome, p.b.reason])).toEqual([
      ['a', 'end_of_turn', 'budget_exceeded', 'cap reached'],
    ]);
    expect(result.improvements.map((p) => [p.id, p.a.reason, p.b.outcome])).toEqual([['b', 'HTTP 500', 'end_of_turn']]);
    expect(result.a.totals.succeeded).toBe(1);
    expect(result.b.totals.succeeded).toBe(1);
  });

  it('the other changes, largest cost change first (either way), then calls', () => {
    const result = diff(
      [{ id: 'small' }, { id: 'big' }, { id: 'cheaper' }, { id: 'calls' }, { id: 'steps' }, { id: 'same' }],
      [
        { id: 'small', costUsd: 0.011 },
        { id: 'big', costUsd: 0.5 },
        { id: 'cheaper', costUsd: 0.001 },
        { id: 'calls', llmCalls: 7 },
        { id: 'steps', digest: 'other' },
        { id: 'same' },
      ],
    );
    expect(result.changed.map((p) => p.id)).toEqual(['big', 'cheaper', 'small', 'calls', 'steps']);
    expect(result.changed[0]).toMatchObject({ costDeltaUsd: 0.49, llmCallsDelta: 0, stepsDiffer: false });
    expect(result.changed.at(-1)).toMatchObject({ costDeltaUsd: 0, stepsDiffer: true });
    expect(result.unchanged).toBe(1);
  });

  it('tasks on one side only are listed and make the batches differ', () => {
    const result = diff([{ id: 'a' }, { id: 'gone' }], [{ id: 'a' }, { id: 'new', outcome: 'error' }]);
    expect(result.onlyA.map((r) => r.id)).toEqual(['gone']);
    expect(result.onlyB.map((r) => [r.id, r.outcome])).toEqual([['new', 'error']]);
    expect(result.same).toBe(false);
    expect(result.unchanged).toBe(1);
  });
});
