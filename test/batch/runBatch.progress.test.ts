import { createScriptedAgent } from '../../lib/agent/createScriptedAgent';
import { runBatch, type BatchProgress, type BatchTask } from '../../lib/batch/runBatch';

const instant = async (): Promise<void> => undefined;

function tasks(n: number): BatchTask[] {
  return Array.from({ length: n }, (_, i) => ({
    id: `t${i}`,
    input: 'go',
    agent: () =>
      createScriptedAgent({
        sleep: instant,
        replies: [{ text: 'done', usage: { inputTokens: 1, outputTokens: 1, costUsd: 0.1 } }],
      }),
  }));
}

/** One progress call as a line: what happened, and the counts it came with. */
function line(p: BatchProgress): string {
  const e = p.event;
  const what =
    e.type === 'skipped'
      ? `skipped ${e.count} (${e.reason})`
      : e.type === 'finished'
        ? `finished ${e.run.id} ${e.run.outcome}`
        : `${e.type} ${e.id}`;
  return `${what}: done ${p.done}/${p.total}, running ${p.running}, $${p.usage.costUsd.toFixed(2)}`;
}

describe('runBatch onProgress', () => {
  it('fires once per task event, in order: each run started and finished, the rest skipped in one event', async () => {
    const seen: string[] = [];
    await runBatch(tasks(3), {
      concurrency: 1,
      logger: false,
      total: { maxCostUsd: 0.2, strict: false },
      onProgress: (p) => void seen.push(line(p)),
    });
    expect(seen).toEqual([
      'started t0: done 0/3, running 1, $0.00',
      'finished t0 end_of_turn: done 1/3, running 0, $0.10',
      'started t1: done 1/3, running 1, $0.10',
      'finished t1 end_of_turn: done 2/3, running 0, $0.20',
      'skipped 1 (budget_exceeded): done 3/3, running 0, $0.20',
    ]);
  });
});
