import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Budget } from '../../lib/agent/money/Budget';
import { OperationError, TurnCancelledError } from '../../lib/agent/TurnError';
import { runTask } from '../../lib/batch/tasks/runTask';
import { loadHistory } from '../../lib/history/loadHistory';
import { validateHistory } from '../../lib/history/validateHistory';
import { manualClock } from '../helpers/manualClock';
import { runBatch } from '../../lib/batch/runBatch';
import type { StepMirror } from '../../lib/agent/StepMirror';
import { BudgetExceededError } from '../../lib/agent/TurnError';

describe('runTask with a framework task { id, drive(mirror) }', () => {
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
        drive: async (mirror) => {
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

  it.each([
    ['in memory', false],
    ['with a history folder', true],
  ])(
    'a framework that calls the model again after its run ended (%s) is refused with that end, and the report keeps its spend',
    async (_, kept) => {
      let sent = 0;
      const refusals: unknown[] = [];
      const report = await runBatch(
        [
          {
            id: 'fw',
            input: 'go',
            // A loop that does not stop when a call is refused: it tries twice more after its run ended.
            drive: async (mirror) => {
              for (let i = 0; i < 5; i++) {
                try {
                  await mirror.model({
                    send: () => Promise.resolve((sent += 1)),
                    read: () => ({
                      toolCalls: [{ id: `c${i}`, name: 'look', input: {} }],
                      usage: { inputTokens: 10, outputTokens: 10, costUsd: 0.01 },
                    }),
                    served: () => 0,
                  });
                  await mirror.tool({ id: `c${i}`, name: 'look', input: {} }, () => 'seen');
                } catch (error) {
                  refusals.push(error);
                }
              }
            },
          },
        ],
        {
          logger: false,
          clock: manualClock().now,
          perRun: { maxCostUsd: 0.025, strict: false },
          ...(kept ? { historyDir: path.join(dir, 'kept') } : {}),
        },
      );
      expect(sent).toBe(3);
      // The third answer crossed the cap; the two calls after the end are refused with it, no new run started.
      expect(refusals).toHaveLength(3);
      for (const error of refusals) expect(error).toBeInstanceOf(BudgetExceededError);
      expect(report.runs[0]).toMatchObject({ outcome: 'budget_exceeded', usage: { llmCalls: 3, costUsd: 0.03 } });
      expect(report.totals).toMatchObject({ llmCalls: 3, costUsd: 0.03 });
      if (kept) await valid(path.join(dir, 'kept', 'fw.jsonl'));
    },
  );

  it('a task whose framework ran twice (two generateText calls) is reported with what both runs spent', async () => {
    const call = (mirror: StepMirror, text: string) =>
      mirror.model({
        send: () => Promise.resolve(text),
        read: () => ({ text, usage: { inputTokens: 10, outputTokens: 10, costUsd: 0.01 } }),
        served: () => text,
      });
    const report = await runBatch(
      [
        {
          id: 'fw',
          input: 'plan',
          drive: async (mirror) => {
            await call(mirror, 'the plan');
            mirror.runEnd({ text: 'the plan' });
            mirror.runStart('do it');
            await call(mirror, 'done');
          },
        },
      ],
      { logger: false, clock: manualClock().now },
    );
    expect(report.runs[0]).toMatchObject({ outcome: 'end_of_turn', usage: { llmCalls: 2, costUsd: 0.02 } });
    expect(report.totals).toMatchObject({ llmCalls: 2, costUsd: 0.02 });
  });

  it('a task giving its loop under the old name run is refused, naming drive, and nothing runs', async () => {
    let called = false;
    const old = { id: 'a', input: 'go', run: async () => void (called = true) };
    await expect(runTask(old as never, { name: 'tasks[0]' })).rejects.toThrow(
      'Expected `tasks[0].run` to be left out: a framework task gives its loop as `drive(mirror)` (`run` is now `drive`)',
    );
    expect(called).toBe(false);
  });

  it('a run that rejects ends in Error with the cause; one that reports nothing ends in Error too', async () => {
    const failed = await runTask(
      { id: 'a', drive: () => Promise.reject(new Error('framework blew up')) },
      { adapter: { logger: false }, historyFile: path.join(dir, 'a.jsonl') },
    );
    expect(failed.outcome).toBe('error');
    expect(failed.error).toBeInstanceOf(OperationError);
    expect(failed.error!.message).toContain('framework blew up');
    await valid(path.join(dir, 'a.jsonl'));
    const silent = await runTask({ id: 'b', drive: () => undefined }, { adapter: { logger: false } });
    expect(silent.outcome).toBe('error');
  });

  it('the task’s signal cancels the run through the mirror', async () => {
    const controller = new AbortController();
    const file = path.join(dir, 'c.jsonl');
    const run = await runTask(
      {
        id: 'c',
        drive: async (mirror, { signal }) => {
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
