import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Budget } from '../../lib/agent/money/Budget';
import { OperationError, TurnCancelledError } from '../../lib/agent/TurnError';
import { runTask } from '../../lib/batch/tasks/runTask';
import { loadHistory } from '../../lib/history/loadHistory';
import { validateHistory } from '../../lib/history/validateHistory';
import { manualClock } from '../helpers/manualClock';

describe('runTask with a framework task { id, run(mirror) }', () => {
  let dir: string;
  beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sm-fwtask-'))));
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  const valid = async (file: string): Promise<void> => {
    const history = await loadHistory(file);
    const verdict = validateHistory(history.entries);
    expect(verdict.issues).toEqual([]);
    expect(verdict.interrupted).toBeUndefined();
  };

  it('runs the framework with the mirror, under the adapter options’ budgets, into its history file', async () => {
    const clock = manualClock();
    const file = path.join(dir, 'fw.jsonl');
    const shared = new Budget({ maxCostUsd: 1, strict: false });
    const run = await runTask(
      {
        id: 'fw',
        input: 'hello',
        run: async (mirror) => {
          expect(await mirror.modelCallStart()).toBeUndefined();
          mirror.modelResponse({ text: 'hi', usage: { inputTokens: 3, outputTokens: 2, costUsd: 0.25 } });
          // The framework reports its end through its own hook in real use; here runTask ends it.
        },
      },
      { adapter: { clock: clock.now, logger: false, sharedBudgets: [shared], journal: true }, historyFile: file },
    );
    expect(run).toMatchObject({ outcome: 'end_of_turn', transitions: 4, historyFile: file });
    expect(run.usage).toMatchObject({ llmCalls: 1, costUsd: 0.25 });
    expect(shared.usage.costUsd).toBe(0.25);
    await valid(file);
    expect((await loadHistory(file)).journal.map((j) => j.type)).toEqual(['reserve', 'llm']);
  });

  it('a run that rejects ends in Error with the cause; one that reports nothing ends in Error too', async () => {
    const failed = await runTask(
      { id: 'a', run: () => Promise.reject(new Error('framework blew up')) },
      { adapter: { logger: false }, historyFile: path.join(dir, 'a.jsonl') },
    );
    expect(failed.outcome).toBe('error');
    expect(failed.error).toBeInstanceOf(OperationError);
    expect(failed.error!.message).toContain('framework blew up');
    await valid(path.join(dir, 'a.jsonl'));
    const silent = await runTask({ id: 'b', run: () => undefined }, { adapter: { logger: false } });
    expect(silent.outcome).toBe('error');
  });

  it('the task’s signal cancels the run through the mirror', async () => {
    const controller = new AbortController();
    const file = path.join(dir, 'c.jsonl');
    const run = await runTask(
      {
        id: 'c',
        run: async (mirror, { signal }) => {
          await mirror.modelCallStart();
          mirror.modelResponse({ toolCalls: [{ id: 't1', name: 'slow' }] });
          expect(await mirror.toolStart({ id: 't1', name: 'slow' })).toBeUndefined();
          controller.abort('batch aborted');
          expect(signal.aborted).toBe(true);
          throw new Error('aborted');
        },
      },
      { adapter: { logger: false }, signal: controller.signal, historyFile: file },
    );
    expect(run.outcome).toBe('cancelled');
    expect(run.error).toBeInstanceOf(TurnCancelledError);
    await valid(file);
  });
});
