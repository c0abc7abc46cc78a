import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Deadline } from '../../lib/agent/money/Deadline';
import { createScriptedAgent } from '../../lib/agent/createScriptedAgent';
import { BudgetExceededError, OperationError, TurnCancelledError } from '../../lib/agent/TurnError';
import { runTask } from '../../lib/batch/tasks/runTask';
import { loadHistory } from '../../lib/history/loadHistory';
import { manualClock } from '../helpers/manualClock';

const instant = (): Promise<void> => Promise.resolve();
const agent = (): ReturnType<typeof createScriptedAgent> =>
  createScriptedAgent({
    sleep: instant,
    replies: [
      { toolCalls: [{ id: 'c1', name: 'bash', input: {} }] },
      { text: 'done', usage: { inputTokens: 10, outputTokens: 5, costUsd: 0.01 } },
    ],
    tools: { bash: { output: 'ok' } },
  });

describe('runTask', () => {
  let dir: string;
  beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sm-task-'))));
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('builds the agent from its factory, runs one turn, writes its history file and says how it ended', async () => {
    const clock = manualClock();
    const file = path.join(dir, 't1.jsonl');
    const run = await runTask(
      { id: 't1', input: 'go', agent: () => agent() },
      { adapter: { logger: false, clock: clock.now }, historyFile: file, historyOptions: { runId: 't1' } },
    );
    expect(run).toEqual({
      outcome: 'end_of_turn',
      usage: expect.objectContaining({ llmCalls: 2, toolCalls: 1, costUsd: 0.01 }),
      durationMs: 0,
      transitions: 12,
      historyFile: file,
    });
    const history = await loadHistory(file);
    expect(history.records).toHaveLength(12);
    // The file's last record says how the turn ended and what it spent.
    expect(history.records.at(-1)!.data).toMatchObject({
      outcome: 'end_of_turn',
      usage: { llmCalls: 2, costUsd: 0.01 },
    });
  });

  it('ends the run as error, naming the task, when its factory throws; no file is opened', async () => {
    const file = path.join(dir, 'bad.jsonl');
    const run = await runTask(
      { id: 'bad', input: 'go', agent: () => Promise.reject(new Error('no sandbox')) },
      { name: 'tasks[3]', adapter: { logger: false }, historyFile: file },
    );
    expect(run.outcome).toBe('error');
    expect(run.error).toBeInstanceOf(OperationError);
    expect(run.error!.message).toBe('tasks[3].agent() failed: no sandbox');
    expect(fs.existsSync(file)).toBe(false);
  });

  it('ends as budget_exceeded when a Deadline aborts a factory that hangs, after the grace', async () => {
    const stop = new AbortController();
    const pending = runTask(
      { id: 'slow', input: 'go', agent: () => new Promise(() => undefined) },
      { adapter: { logger: false, cancelGraceMs: 0, sleep: instant }, factorySignal: stop.signal },
    );
    stop.abort(
      new Deadline({
        limit: 'maxWallMs',
        used: 31,
        max: 30,
        message: 'shared budget exceeded: 31 ms of wall time, of 30 ms after 0 LLM calls',
      }),
    );
    const run = await pending;
    expect(run.outcome).toBe('budget_exceeded');
    expect(run.error).toBeInstanceOf(BudgetExceededError);
    expect(run.error!.message).toBe(
      'shared budget exceeded: 31 ms of wall time, of 30 ms after 0 LLM calls while the agent was being created',
    );
  });

  it('ends as cancelled when its signal aborts a pending factory', async () => {
    const stop = new AbortController();
    const pending = runTask(
      {
        id: 'slow',
        input: 'go',
        agent: ({ signal }) =>
          new Promise((_, reject) => signal.addEventListener('abort', () => reject(new Error('boot interrupted')))),
      },
      { adapter: { logger: false, sleep: instant }, signal: stop.signal },
    );
    stop.abort('user pressed Ctrl-C');
    const run = await pending;
    expect(run.outcome).toBe('cancelled');
    expect(run.error).toBeInstanceOf(TurnCancelledError);
    expect(run.error!.message).toBe(
      'cancelled during agent creation: batch aborted: user pressed Ctrl-C while the agent was being created; the agent factory stopped: boot interrupted',
    );
  });

  it('reports what onRun and its end function throw, without losing the run', async () => {
    const problems: string[] = [];
    const failed = await runTask(
      { id: 'a', input: 'go', agent: agent() },
      {
        adapter: { logger: false },
        onRun: () => {
          throw new Error('tracer down');
        },
      },
    );
    expect(failed).toMatchObject({ outcome: 'error', transitions: 0 });
    expect(failed.error!.message).toBe('tracer down');
    const ended = await runTask(
      { id: 'b', input: 'go', agent: agent() },
      {
        adapter: { logger: false },
        onRun: () => () => {
          throw new Error('flush failed');
        },
        onProblem: (m) => problems.push(m),
      },
    );
    expect(ended.outcome).toBe('end_of_turn');
    expect(problems).toEqual(["onRun's end function threw for run b: flush failed"]);
  });

  it('turns bad adapter options into an error outcome that names them', async () => {
    const run = await runTask(
      { id: 'a', input: 'go', agent: agent() },
      { adapter: { logger: false, cancelGraceMs: -1 } },
    );
    expect(run.outcome).toBe('error');
    expect(run.error!.message).toBe('Expected `cancelGraceMs` to be a non-negative finite number, got `-1` (number)');
  });
});
