import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import {
  BudgetExceededError,
  createScriptedAgent,
  InvalidArgumentError,
  LLMCallError,
  OperationError,
  RunSkippedError,
  runBatch,
  TurnCancelledError,
  type AgentLoop,
  type BatchOptions,
  type BatchProgress,
  type BatchTask,
  type ScriptedReply,
  type Sleep,
} from '../../lib/index';
import { HistoryFileError, loadHistory, validateHistory } from '../../lib/subpaths/history';
import { captureLogger } from '../helpers/captureLogger';
import { manualClock } from '../helpers/manualClock';
import { OPTION_DEFAULTS } from '../../lib/internal/optionTable';

// Agents wait in event-loop turns, not milliseconds: runs interleave, and no real time passes.
const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
const ticks = async (n: number): Promise<void> => {
  for (let i = 0; i < n; i++) await tick();
};
const fastSleep: Sleep = () => tick();

const toolReply = (costUsd: number, delayMs = 1): ScriptedReply => ({
  toolCalls: [{ id: 'c1', name: 'bash' }],
  usage: { costUsd, inputTokens: 100, outputTokens: 10 },
  delayMs,
});
const textReply = (costUsd: number, delayMs = 1): ScriptedReply => ({
  text: 'done',
  usage: { costUsd, inputTokens: 100, outputTokens: 10 },
  delayMs,
});

function scripted(replies: ScriptedReply[], tools: Parameters<typeof createScriptedAgent>[0]['tools'] = {}): AgentLoop {
  return createScriptedAgent({
    sleep: (ms) => ticks(ms),
    replies,
    tools: { bash: { output: 'ok', delayMs: 1 }, ...tools },
  });
}

/** `rounds` tool rounds then a text reply, each reply costing `cost`. */
function task(id: string, rounds: number, cost = 0.1): BatchTask {
  return {
    id,
    input: `work on ${id}`,
    agent: () => scripted([...Array.from({ length: rounds }, () => toolReply(cost)), textReply(cost)]),
  };
}

const base = (): BatchOptions => ({ logger: false, sleep: fastSleep, clock: manualClock().now });

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sm-batch-'));
});
afterEach(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('runBatch', () => {
  it('runs the tasks and options as they were at the call: an array or options the caller reuses at once change nothing', async () => {
    const tasks = [task('t0', 1), task('t1', 0)];
    const perRun = { maxLlmCalls: 10 };
    const total = { maxCostUsd: 100, strict: false };
    const options: BatchOptions = { ...base(), concurrency: 1, perRun, total };
    const running = runBatch(tasks, options);
    tasks.length = 0;
    options.concurrency = 0;
    perRun.maxLlmCalls = 1;
    total.maxCostUsd = 0.05;
    const report = await running;
    expect(report.runs.map((r) => [r.id, r.outcome])).toEqual([
      ['t0', 'end_of_turn'],
      ['t1', 'end_of_turn'],
    ]);
    expect(report.concurrency).toBe(1);
    expect(report.limits).toEqual({ perRun: { maxLlmCalls: 10 }, total: { maxCostUsd: 100, strict: false } });
  });

  it("names a misspelt option before a bad task, and a bad task before loading the batch's code", async () => {
    const bad = [{ id: '', input: 'go', agent: () => scripted([textReply(0)]) }];
    await expect(runBatch(bad, { totals: {} } as never)).rejects.toThrow(/totals/);
    await expect(runBatch(bad, {})).rejects.toThrow(InvalidArgumentError);
    await expect(runBatch(bad, 7 as never)).rejects.toThrow(/`options`/);
  });

  it('runs every task and reports them in task order, with usage summed and outcomes counted', async () => {
    // Longer tasks first, so they finish after shorter ones started later.
    const tasks = [task('t0', 3), task('t1', 0), task('t2', 2), task('t3', 1)];
    const report = await runBatch(tasks, { ...base(), concurrency: 2 });
    expect(report.runs.map((r) => [r.id, r.outcome, r.usage.llmCalls, r.usage.toolCalls])).toEqual([
      ['t0', 'end_of_turn', 4, 3],
      ['t1', 'end_of_turn', 1, 0],
      ['t2', 'end_of_turn', 3, 2],
      ['t3', 'end_of_turn', 2, 1],
    ]);
    expect(report.totals).toEqual({
      inputTokens: 1000,
      outputTokens: 100,
      costUsd: 1,
      toolCalls: 6,
      llmCalls: 10,
      wallMs: 0,
      uncertainUsd: 0,
      releasedUsd: 0,
      unpricedCalls: 0,
      outcomes: { end_of_turn: 4, wrapped_up: 0, budget_exceeded: 0, stalled: 0, error: 0, cancelled: 0, skipped: 0 },
    });
    expect(report.runs[1]).toEqual({
      id: 't1',
      outcome: 'end_of_turn',
      usage: {
        inputTokens: 100,
        outputTokens: 10,
        costUsd: 0.1,
        toolCalls: 0,
        llmCalls: 1,
        wallMs: 0,
        uncertainUsd: 0,
        releasedUsd: 0,
        unpricedCalls: 0,
      },
      durationMs: 0,
      transitions: 4,
    });
    expect(report).toMatchObject({ concurrency: 2, limits: {}, durationMs: 0 });
    expect(report.stopped).toBeUndefined();
  });

  it('resolves with an empty report for no tasks', async () => {
    const report = await runBatch([], base());
    expect(report.runs).toEqual([]);
    expect(report.totals.outcomes).toEqual({
      end_of_turn: 0,
      wrapped_up: 0,
      budget_exceeded: 0,
      stalled: 0,
      error: 0,
      cancelled: 0,
      skipped: 0,
    });
  });

  it('takes any iterable of tasks, reading it once', async () => {
    let reads = 0;
    function* generate(): Generator<BatchTask> {
      reads += 1;
      for (let i = 0; i < 5; i++) yield task(`gen-${i}`, i % 2);
    }
    const report = await runBatch(generate(), base());
    expect(report.runs.map((r) => r.id)).toEqual(['gen-0', 'gen-1', 'gen-2', 'gen-3', 'gen-4']);
    expect(reads).toBe(1);
  });

  it('never has more than `concurrency` runs in flight, and reaches it', async () => {
    // An agent is alive from its factory call until it has returned its last reply.
    let alive = 0;
    let maxAlive = 0;
    const tasks = Array.from({ length: 30 }, (_, i): BatchTask => ({
      id: `t${i}`,
      input: 'go',
      agent: () => {
        alive += 1;
        maxAlive = Math.max(maxAlive, alive);
        const rounds = (i * 7) % 4;
        const agent = scripted([
          ...Array.from({ length: rounds }, () => toolReply(0.01, 1 + (i % 3))),
          textReply(0.01, 1 + (i % 5)),
        ]);
        const send = agent.sendToolResults.bind(agent);
        const first = agent.sendUserMessage.bind(agent);
        let replies = 0;
        const counted = async (
          p: ReturnType<AgentLoop['sendUserMessage']>,
        ): ReturnType<AgentLoop['sendUserMessage']> => {
          const response = await p;
          if (++replies === rounds + 1) alive -= 1;
          return response;
        };
        return {
          ...agent,
          sendUserMessage: (m, ctx) => counted(first(m, ctx)),
          sendToolResults: (r, m, ctx) => counted(send(r, m, ctx)),
        };
      },
    }));
    const running: number[] = [];
    const report = await runBatch(tasks, { ...base(), concurrency: 5, onProgress: (p) => running.push(p.running) });
    expect(report.totals.outcomes.end_of_turn).toBe(30);
    expect(maxAlive).toBe(5);
    expect(Math.max(...running)).toBe(5);
    expect(alive).toBe(0);
  });

  describe('shared budget (`total`)', () => {
    it('stops runs in flight at their next check and skips the rest, with the numbers', async () => {
      const tasks = Array.from({ length: 10 }, (_, i) => task(`t${i}`, 3, 0.2));
      const report = await runBatch(tasks, { ...base(), concurrency: 3, total: { maxCostUsd: 1, strict: false } });
      const outcomes = report.runs.map((r) => r.outcome);
      expect(report.totals.outcomes.budget_exceeded).toBeGreaterThan(0);
      expect(report.totals.outcomes.skipped).toBeGreaterThan(0);
      // Runs start in task order, so the skipped ones are the tail.
      const firstSkipped = outcomes.indexOf('skipped');
      expect(outcomes.slice(firstSkipped).every((o) => o === 'skipped')).toBe(true);
      for (const run of report.runs) {
        if (run.outcome === 'budget_exceeded') {
          expect(run.error).toBeInstanceOf(BudgetExceededError);
          // The batch's figures, then the run's own.
          expect(run.error!.message).toMatch(
            /^the batch's total budget exceeded: \$1\.\d{4} of \$1\.0000 after \d+ LLM calls; this run: cost \$0\.\d{4} after \d LLM calls?$/,
          );
        }
        if (run.outcome === 'skipped') {
          expect(run).toEqual({
            id: run.id,
            outcome: 'skipped',
            usage: {
              inputTokens: 0,
              outputTokens: 0,
              costUsd: 0,
              toolCalls: 0,
              llmCalls: 0,
              wallMs: 0,
              uncertainUsd: 0,
              releasedUsd: 0,
              unpricedCalls: 0,
            },
            durationMs: 0,
            transitions: 0,
            error: run.error,
          });
          expect(run.error).toBeInstanceOf(RunSkippedError);
          expect(run.error).toMatchObject({ reason: 'budget_exceeded', spent: { limit: 'maxCostUsd', max: 1 } });
          expect(run.error!.message).toMatch(
            /^the batch's total budget exceeded: \$1\.\d{4} of \$1\.0000 after \d+ LLM calls$/,
          );
        }
      }
      expect(report.stopped).toEqual({ reason: 'budget_exceeded', message: report.runs[firstSkipped]!.error!.message });
      // At most one response per run in flight lands after the cap: 3 × $0.20.
      expect(report.totals.costUsd).toBeGreaterThanOrEqual(1);
      expect(report.totals.costUsd).toBeLessThanOrEqual(1 + 3 * 0.2);
      expect(report.limits).toEqual({ total: { maxCostUsd: 1, strict: false } });
    });

    it('can pass the cap by one response per run in flight, and no more', async () => {
      // Four runs start at once on an unspent pool, so all four calls go out: the worst case.
      const tasks = Array.from({ length: 8 }, (_, i) => task(`t${i}`, 0, 0.25));
      const report = await runBatch(tasks, { ...base(), concurrency: 4, total: { maxCostUsd: 0.01, strict: false } });
      expect(report.totals.costUsd).toBe(1);
      expect(report.totals.outcomes).toEqual({
        end_of_turn: 4,
        wrapped_up: 0,
        budget_exceeded: 0,
        stalled: 0,
        error: 0,
        cancelled: 0,
        skipped: 4,
      });
      // The reason is the pool as it stood when the first run not started was skipped.
      expect(report.stopped!.message).toBe("the batch's total budget exceeded: $0.2500 of $0.0100 after 4 LLM calls");
    });

    it('never lets call counts pass their cap', async () => {
      const tasks = Array.from({ length: 12 }, (_, i) => task(`t${i}`, 2));
      const report = await runBatch(tasks, { ...base(), concurrency: 4, total: { maxLlmCalls: 7, maxToolCalls: 100 } });
      expect(report.totals.llmCalls).toBe(7);
      expect(report.totals.outcomes.budget_exceeded + report.totals.outcomes.skipped).toBeGreaterThan(0);
    });

    it('measures `maxWallMs` as the batch elapsed time', async () => {
      const clock = manualClock();
      const slow = { bash: (call: { id: string }) => (clock.advance(400), { callId: call.id, output: 'slow' }) };
      const tasks = Array.from({ length: 6 }, (_, i): BatchTask => ({
        id: `t${i}`,
        input: 'go',
        agent: () => scripted([toolReply(0), toolReply(0), textReply(0)], slow),
      }));
      const report = await runBatch(tasks, { ...base(), clock: clock.now, concurrency: 2, total: { maxWallMs: 1000 } });
      // t0's tool: 400 ms, t1's: 800 ms; t0 goes on (800 < 1,000), its second tool ends at 1,200; both stop at their next check.
      expect(report.runs.map((r) => [r.outcome, r.usage.toolCalls])).toEqual([
        ['budget_exceeded', 2],
        ['budget_exceeded', 1],
        ...Array(4).fill(['skipped', 0]),
      ]);
      expect(report.runs[1]!.error!.message).toBe(
        "the batch's total budget exceeded: 1.2 s of wall time, of 1.0 s after 4 LLM calls; this run: wall time 1.2 s after 2 LLM calls",
      );
      expect(report.durationMs).toBe(1200);
    });
  });

  it('caps each run with `perRun`, and the others go on', async () => {
    const tasks = [task('cheap', 1, 0.1), task('dear', 4, 0.3), task('cheap-2', 0, 0.1)];
    const report = await runBatch(tasks, { ...base(), perRun: { maxCostUsd: 0.5, strict: false } });
    expect(report.runs.map((r) => r.outcome)).toEqual(['end_of_turn', 'budget_exceeded', 'end_of_turn']);
    expect(report.runs[1]!.error!.message).toBe('budget exceeded: $0.6000 of $0.5000 after 2 LLM calls');
    expect(report.limits).toEqual({ perRun: { maxCostUsd: 0.5, strict: false } });
  });

  describe('a run that throws', () => {
    it('ends that run as `error` with the cause — from the factory, even a non-Error — and the batch goes on', async () => {
      const thrown = { code: 42 };
      const tasks: BatchTask[] = [
        task('ok-1', 1),
        {
          id: 'error',
          input: 'go',
          agent: () => {
            throw new Error('cannot clone the repository');
          },
        },
        {
          id: 'string',
          input: 'go',
          agent: () => {
            throw 'no workspace left';
          },
        },
        {
          id: 'object',
          input: 'go',
          agent: () => {
            throw thrown;
          },
        },
        { id: 'async', input: 'go', agent: () => Promise.reject(new Error('sandbox failed to boot')) },
        {
          id: 'not-an-agent',
          input: 'go',
          agent: () => ({ sendUserMessage: async () => ({}) }) as unknown as AgentLoop,
        },
        { id: 'async-ok', input: 'go', agent: async () => scripted([textReply(0.1)]) },
        task('ok-2', 0),
      ];
      const report = await runBatch(tasks, base());
      expect(report.runs.map((r) => [r.id, r.outcome, r.error?.message])).toEqual([
        ['ok-1', 'end_of_turn', undefined],
        ['error', 'error', 'tasks[1].agent() failed: cannot clone the repository'],
        ['string', 'error', 'tasks[2].agent() failed: no workspace left'],
        ['object', 'error', 'tasks[3].agent() failed: {"code":42}'],
        ['async', 'error', 'tasks[4].agent() failed: sandbox failed to boot'],
        [
          'not-an-agent',
          'error',
          'Expected `agent.sendToolResults` to be a function (it is required), got `undefined`',
        ],
        ['async-ok', 'end_of_turn', undefined],
        ['ok-2', 'end_of_turn', undefined],
      ]);
      expect(report.runs[1]!.error).toBeInstanceOf(OperationError);
      expect(report.runs[1]!.error!.cause).toEqual(new Error('cannot clone the repository'));
      expect(report.runs[2]!.error!.cause).toBe('no workspace left');
      expect(report.runs[3]!.error!.cause).toBe(thrown);
      expect(report.runs[5]!.error).toBeInstanceOf(InvalidArgumentError);
      expect(report.runs.slice(1, 6).every((r) => r.transitions === 0 && r.usage.llmCalls === 0)).toBe(true);
    });

    it('ends a run whose operations throw non-Error values as `error`, keeping the value', async () => {
      const llmThrows: AgentLoop = { ...scripted([]), sendUserMessage: () => Promise.reject(42) };
      const gatherThrows: AgentLoop = {
        ...scripted([toolReply(0.1)]),
        gatherAdditionalMessages: () => {
          throw null;
        },
      };
      const report = await runBatch(
        [
          { id: 'llm', input: 'go', agent: llmThrows },
          { id: 'gather', input: 'go', agent: gatherThrows },
          task('fine', 0),
        ],
        { ...base(), retry: { retries: 0 } },
      );
      expect(report.runs.map((r) => [r.id, r.outcome, r.error?.message])).toEqual([
        ['llm', 'error', 'sendUserMessage failed after 1 attempt: 42'],
        ['gather', 'error', 'gatherAdditionalMessages failed: null'],
        ['fine', 'end_of_turn', undefined],
      ]);
      expect(report.runs[0]!.error).toBeInstanceOf(LLMCallError);
      expect(report.runs[0]!.error!.cause).toBe(42);
    });
  });

  describe('`signal`', () => {
    it('aborted mid-batch: cancels the runs in flight, skips the rest, and resolves with the report', async () => {
      const controller = new AbortController();
      let toolsStarted = 0;
      let factories = 0;
      const tools = {
        // Stops when told to, like a well-behaved tool.
        wait: (call: { id: string }, ctx: { signal: AbortSignal }) =>
          new Promise<string>((resolve, reject) => {
            if (++toolsStarted === 2) controller.abort('user pressed Ctrl-C');
            ctx.signal.addEventListener('abort', () => reject(new Error('interrupted')), { once: true });
            void call;
            void resolve;
          }),
        // Ignores the signal: it is abandoned after the grace.
        stuck: () => new Promise<string>(() => undefined),
      };
      const tasks = Array.from({ length: 10 }, (_, i): BatchTask => ({
        id: `t${i}`,
        input: 'go',
        agent: () => {
          factories += 1;
          return scripted(
            [
              { toolCalls: [{ id: 'c1', name: i === 1 ? 'stuck' : 'wait' }], usage: { costUsd: 0.1 }, delayMs: 1 + i },
              textReply(0.1),
            ],
            tools,
          );
        },
      }));
      const events: BatchProgress['event'][] = [];
      const report = await runBatch(tasks, {
        ...base(),
        concurrency: 3,
        signal: controller.signal,
        onProgress: (p) => events.push(p.event),
      });
      expect(factories).toBe(3);
      expect(report.runs.map((r) => r.outcome)).toEqual([
        'cancelled',
        'cancelled',
        'cancelled',
        ...Array<string>(7).fill('skipped'),
      ]);
      expect(report.runs[0]!.error).toBeInstanceOf(TurnCancelledError);
      expect(report.runs[0]!.error!.message).toBe('cancelled during RunningTool: user pressed Ctrl-C');
      expect(report.runs[3]!.error).toEqual(new RunSkippedError('aborted', 'batch aborted: user pressed Ctrl-C'));
      expect(report.stopped).toEqual({ reason: 'aborted', message: 'batch aborted: user pressed Ctrl-C' });
      // The rest are skipped as soon as the signal fires, before the runs in flight end.
      expect(events.findIndex((e) => e.type === 'skipped')).toBeLessThan(
        events.findIndex((e) => e.type === 'finished'),
      );
    });

    it('resolves promptly in real time even when a tool ignores the abort', async () => {
      const controller = new AbortController();
      const tasks = Array.from({ length: 4 }, (_, i): BatchTask => ({
        id: `t${i}`,
        input: 'go',
        agent: createScriptedAgent({
          replies: [toolReply(0.1, 0), textReply(0.1, 0)],
          tools: { bash: () => new Promise<string>(() => undefined) },
        }),
      }));
      setTimeout(() => controller.abort(), 20);
      const report = await runBatch(tasks, {
        logger: false,
        concurrency: 2,
        signal: controller.signal,
        cancelGraceMs: 30,
      });
      expect(report.runs.map((r) => r.outcome)).toEqual(['cancelled', 'cancelled', 'skipped', 'skipped']);
      expect(report.runs[0]!.error!.message).toBe("cancelled during RunningTool: aborted by the caller's signal");
      expect(report.runs[2]!.error!.message).toBe('batch aborted');
    });

    it('aborted while an agent factory hangs: abandons it after the grace, ends the run as `cancelled` and resolves', async () => {
      const controller = new AbortController();
      const signals: AbortSignal[] = [];
      const hung = jest.fn(({ signal }: { signal: AbortSignal }): Promise<AgentLoop> => {
        signals.push(signal);
        setImmediate(() => controller.abort('user pressed Ctrl-C'));
        return new Promise<AgentLoop>(() => undefined);
      });
      const graces: number[] = [];
      const sleep: Sleep = (ms) => {
        graces.push(ms);
        return tick();
      };
      const report = await runBatch(
        [
          { id: 'a', input: 'go', agent: hung },
          { id: 'b', input: 'go', agent: hung },
        ],
        { ...base(), sleep, concurrency: 1, cancelGraceMs: 60_000, signal: controller.signal },
      );
      expect(hung).toHaveBeenCalledTimes(1);
      expect(signals[0]!.aborted).toBe(true);
      expect(graces).toEqual([60_000]);
      expect(report.runs.map((r) => r.outcome)).toEqual(['cancelled', 'skipped']);
      expect(report.totals.outcomes).toMatchObject({ cancelled: 1, skipped: 1, error: 0 });
      expect(report.runs[0]!.error).toBeInstanceOf(TurnCancelledError);
      expect(report.runs[0]!.error).toMatchObject({ during: 'agent creation' });
      expect(report.runs[0]!.error!.message).toBe(
        'cancelled during agent creation: batch aborted: user pressed Ctrl-C while the agent was being created; the agent factory did not settle within 60000 ms and was abandoned',
      );
      expect(report.runs[0]).toMatchObject({ transitions: 0, usage: { llmCalls: 0 } });
    });

    it('aborted while an agent factory runs: a factory that stops on its signal ends the run as `cancelled`', async () => {
      const controller = new AbortController();
      const factory = ({ signal }: { signal: AbortSignal }): Promise<AgentLoop> =>
        new Promise<AgentLoop>((_, reject) => {
          signal.addEventListener('abort', () => reject(new Error('sandbox boot interrupted')), { once: true });
          setImmediate(() => controller.abort());
        });
      const report = await runBatch([{ id: 'a', input: 'go', agent: factory }], {
        ...base(),
        signal: controller.signal,
        historyDir: dir,
      });
      expect(report.runs[0]).toMatchObject({ outcome: 'cancelled', transitions: 0 });
      expect(report.runs[0]!.historyFile).toBeUndefined();
      expect(report.runs[0]!.error!.message).toBe(
        'cancelled during agent creation: batch aborted while the agent was being created; the agent factory stopped: sandbox boot interrupted',
      );
    });

    it('gives a hung factory the grace the adapter gives an operation when cancelGraceMs is not set: one default', async () => {
      const controller = new AbortController();
      const hung = (): Promise<AgentLoop> => {
        setImmediate(() => controller.abort('stop'));
        return new Promise<AgentLoop>(() => undefined);
      };
      const graces: number[] = [];
      const sleep: Sleep = (ms) => {
        graces.push(ms);
        return tick();
      };
      await runBatch([{ id: 'a', input: 'go', agent: hung }], { ...base(), sleep, signal: controller.signal });
      expect(graces).toEqual([OPTION_DEFAULTS.cancelGraceMs]);
      expect(OPTION_DEFAULTS.cancelGraceMs).toBe(2000);
    });

    it('aborted while an agent factory runs: an agent that arrives within the grace makes no LLM call', async () => {
      const controller = new AbortController();
      const agent = scripted([textReply(0.1)]);
      const factory = (): Promise<AgentLoop> => {
        controller.abort('stop');
        return tick().then(() => agent);
      };
      const report = await runBatch([{ id: 'a', input: 'go', agent: factory }], {
        ...base(),
        signal: controller.signal,
      });
      expect(report.runs[0]).toMatchObject({ outcome: 'cancelled', usage: { llmCalls: 0 } });
      expect(report.runs[0]!.error).toMatchObject({ during: 'WaitingForUserInput', reason: 'stop' });
    });

    it('already aborted: skips every run without calling a factory', async () => {
      const factory = jest.fn(() => scripted([textReply(0)]));
      const report = await runBatch([{ id: 'a', input: 'go', agent: factory }], {
        ...base(),
        signal: AbortSignal.abort('shutting down'),
      });
      expect(factory).not.toHaveBeenCalled();
      expect(report.runs[0]).toMatchObject({
        outcome: 'skipped',
        error: { reason: 'aborted', message: 'batch aborted: shutting down' },
      });
    });
  });

  describe('`historyDir`', () => {
    it("writes complete files with historyDurability 'none', and rejects an unknown durability before any run", async () => {
      const historyDir = path.join(dir, 'none');
      const report = await runBatch([task('a', 1), task('b', 0)], { ...base(), historyDir, historyDurability: 'none' });
      for (const run of report.runs) {
        const history = await loadHistory(run.historyFile!);
        expect(history.records).toHaveLength(run.transitions);
        expect(validateHistory(history.entries).ok).toBe(true);
      }
      const factory = jest.fn(() => createScriptedAgent({ replies: [{ text: 'x' }] }));
      await expect(
        runBatch([{ id: 'c', input: 'go', agent: factory }], {
          ...base(),
          historyDir,
          historyDurability: 'always' as never,
        }),
      ).rejects.toThrow("Expected `historyDurability` to be 'none', 'turn' or 'move', got `always` (string)");
      expect(factory).not.toHaveBeenCalled();
    });

    it('writes complete files with historyGroupCommit and rejects a bad group commit before any run', async () => {
      const historyDir = path.join(dir, 'group');
      const report = await runBatch([task('a', 1), task('b', 3)], {
        ...base(),
        historyDir,
        historyDurability: 'none',
        historyGroupCommit: { maxLines: 1000 },
      });
      for (const run of report.runs) {
        const history = await loadHistory(run.historyFile!);
        expect(history.records).toHaveLength(run.transitions);
        expect(validateHistory(history.entries).ok).toBe(true);
      }
      const factory = jest.fn(() => createScriptedAgent({ replies: [{ text: 'x' }] }));
      await expect(
        runBatch([{ id: 'c', input: 'go', agent: factory }], {
          ...base(),
          historyDir,
          historyGroupCommit: { maxLines: 0 },
        }),
      ).rejects.toThrow('Expected `historyGroupCommit.maxLines` to be a positive integer, got `0`');
      expect(factory).not.toHaveBeenCalled();
    });

    it('writes each started run to its own JSON Lines file, one record per transition, under a safe unique name', async () => {
      const historyDir = path.join(dir, 'nested', 'runs');
      const tasks: BatchTask[] = [
        task('fix/parse', 1),
        task('fix?parse', 0),
        task('Build', 2),
        task('build', 0),
        // 40 tool rounds: far more moves than the 100 a machine keeps in memory.
        task('long', 40, 0.001),
        {
          id: 'broken',
          input: 'go',
          agent: () => {
            throw new Error('no agent');
          },
        },
      ];
      const report = await runBatch(tasks, { ...base(), historyDir, concurrency: 2 });
      const started = report.runs.filter((r) => r.historyFile !== undefined);
      expect(started.map((r) => r.id)).toEqual(['fix/parse', 'fix?parse', 'Build', 'build', 'long']);
      // The run files, the manifest the batch wrote first, naming every task's file, and the
      // cache of what the ended runs' files say, for a resume to read at once.
      expect(
        fs
          .readdirSync(historyDir)
          .filter((n) => n !== 'batch.json' && n !== 'ended-runs.cache')
          .sort(),
      ).toEqual(started.map((r) => path.basename(r.historyFile!)).sort());
      const manifest = JSON.parse(fs.readFileSync(path.join(historyDir, 'batch.json'), 'utf8')) as {
        tasks: Array<{ id: string; file: string }>;
      };
      expect(manifest.tasks.map((t) => t.id)).toEqual(report.runs.map((r) => r.id));
      expect(new Set(started.map((r) => r.historyFile!.toLowerCase())).size).toBe(started.length);
      expect(report.runs.find((r) => r.id === 'long')!.transitions).toBeGreaterThan(300);

      for (const run of started) {
        expect(path.dirname(run.historyFile!)).toBe(historyDir);
        expect(path.basename(run.historyFile!)).toMatch(/^[A-Za-z0-9_-][A-Za-z0-9._-]*\.jsonl$/);
        const history = await loadHistory(run.historyFile!);
        expect(history.records).toHaveLength(run.transitions);
        // The caps go with each file, so a report made from the folder alone can show them.
        expect(history.meta).toEqual(
          expect.objectContaining({
            runId: run.id,
            metadata: { taskId: run.id, index: report.runs.indexOf(run), batch: { limits: {}, concurrency: 2 } },
          }),
        );
        expect(history.records[0]!.from).toBe('Ready');
        expect(validateHistory(history.entries).ok).toBe(true);
        expect(run.historyError).toBeUndefined();
      }
      expect(path.basename(report.runs[0]!.historyFile!)).toMatch(/^fix_parse-[0-9a-f]{8}\.jsonl$/);
      expect(path.basename(report.runs[2]!.historyFile!)).toBe('Build.jsonl');

      // A second batch into the same directory is refused before it runs, naming the clash…
      await expect(runBatch([task('Build', 0)], { ...base(), historyDir })).rejects.toThrow(
        expect.objectContaining({
          code: 'file_exists',
          message: expect.stringMatching(
            /already holds a history file this batch would write \(Build\.jsonl\); to continue that batch .*`resume: true`.*; to replace it, pass `overwriteHistory: true`/,
          ),
        }),
      );
      // …and replaces the files when told to.
      const again = await runBatch([task('Build', 0)], { ...base(), historyDir, overwriteHistory: true });
      expect((await loadHistory(again.runs[0]!.historyFile!)).records).toHaveLength(again.runs[0]!.transitions);
    });

    it('has no file for runs that were skipped', async () => {
      const historyDir = path.join(dir, 'runs');
      const tasks = Array.from({ length: 6 }, (_, i) => task(`t${i}`, 1, 0.4));
      const report = await runBatch(tasks, {
        ...base(),
        historyDir,
        concurrency: 2,
        total: { maxCostUsd: 1, strict: false },
      });
      const skipped = report.runs.filter((r) => r.outcome === 'skipped');
      expect(skipped.length).toBeGreaterThan(0);
      expect(skipped.every((r) => r.historyFile === undefined)).toBe(true);
      expect(fs.readdirSync(historyDir).filter((n) => n.endsWith('.jsonl'))).toHaveLength(
        report.runs.length - skipped.length,
      );
      for (const run of report.runs.filter((r) => r.outcome === 'budget_exceeded')) {
        const history = await loadHistory(run.historyFile!);
        expect(history.records).toHaveLength(run.transitions);
        expect(history.records.at(-1)!.description).toBe(run.error!.message);
      }
    });

    it('rejects before any run when the directory cannot be made', async () => {
      const file = path.join(dir, 'a-file');
      fs.writeFileSync(file, 'not a directory');
      const factory = jest.fn(() => scripted([textReply(0)]));
      await expect(
        runBatch([{ id: 'a', input: 'go', agent: factory }], { ...base(), historyDir: path.join(file, 'runs') }),
      ).rejects.toThrow(HistoryFileError);
      expect(factory).not.toHaveBeenCalled();
    });
  });

  describe('`onProgress`', () => {
    it('reports each start and end with counts, usage and what happened', async () => {
      const progress: BatchProgress[] = [];
      await runBatch([task('a', 0), task('b', 1)], { ...base(), concurrency: 1, onProgress: (p) => progress.push(p) });
      expect(progress.map((p) => [p.event.type, p.done, p.running, p.usage.llmCalls])).toEqual([
        ['started', 0, 1, 0],
        ['finished', 1, 0, 1],
        ['started', 1, 1, 1],
        ['finished', 2, 0, 3],
      ]);
      expect(progress[3]!.outcomes.end_of_turn).toBe(2);
      expect(progress[3]!.event).toMatchObject({
        type: 'finished',
        index: 1,
        run: { id: 'b', outcome: 'end_of_turn' },
      });
      expect(progress.every((p) => p.total === 2)).toBe(true);
    });

    it('a throwing callback is logged and the batch goes on', async () => {
      const { logger, entries } = captureLogger('warn');
      const report = await runBatch([task('a', 0), task('b', 0)], {
        ...base(),
        logger,
        onProgress: () => {
          throw new Error('terminal went away');
        },
      });
      expect(report.totals.outcomes.end_of_turn).toBe(2);
      expect(entries.filter((e) => e.level === 'error').map((e) => e.message)).toEqual(
        Array(4).fill('onProgress threw: terminal went away; the batch goes on'),
      );
    });
  });

  describe('bad options', () => {
    const ok = (): BatchTask[] => [{ id: 'a', input: 'go', agent: factory }];
    const factory = jest.fn(() => scripted([textReply(0)]));
    beforeEach(() => factory.mockClear());

    it.each<[string, () => Promise<unknown>, string]>([
      [
        'concurrency 0',
        () => runBatch(ok(), { concurrency: 0 }),
        'Expected `concurrency` to be a positive integer, got `0` (number)',
      ],
      [
        'concurrency 2.5',
        () => runBatch(ok(), { concurrency: 2.5 }),
        'Expected `concurrency` to be a positive integer, got `2.5` (number)',
      ],
      [
        'concurrency "4"',
        () => runBatch(ok(), { concurrency: '4' as never }),
        'Expected `concurrency` to be a positive integer, got `4` (string)',
      ],
      [
        'a negative perRun limit',
        () => runBatch(ok(), { perRun: { maxCostUsd: -1 } }),
        'Expected `perRun.maxCostUsd` to be a non-negative finite number, got `-1` (number)',
      ],
      [
        'a non-number total limit',
        () => runBatch(ok(), { total: { maxTokens: 'lots' as never } }),
        'Expected `total.maxTokens` to be a non-negative finite number, got `lots` (string)',
      ],
      [
        'an unknown total limit',
        () => runBatch(ok(), { total: { maxDollars: 5 } as never }),
        'Expected `total.maxDollars` to be one of the limits maxCostUsd, maxTokens, maxToolCalls, maxLlmCalls, maxWallMs (unknown key), got `5` (number)',
      ],
      [
        'bad retry',
        () => runBatch(ok(), { retry: { retries: -1 } }),
        'Expected `retry.retries` to be a non-negative integer, got `-1` (number)',
      ],
      [
        'ledger: false beside the journal a history folder turns on',
        () => runBatch(ok(), { historyDir: path.join(os.tmpdir(), 'never-written'), ledger: false }),
        'Expected `ledger` to be left out or true while `journal` is on (with a `historyDir` it is on unless `journal: false`)',
      ],
      [
        'a misspelt retry key',
        () => runBatch(ok(), { retry: { maxAttempts: 1 } as never }),
        'Unknown option `maxAttempts` of the `retry` option',
      ],
      [
        'bad cancelGraceMs',
        () => runBatch(ok(), { cancelGraceMs: -5 }),
        'Expected `cancelGraceMs` to be a non-negative finite number, got `-5` (number)',
      ],
      [
        'bad signal',
        () => runBatch(ok(), { signal: {} as never }),
        'Expected `signal` to be an AbortSignal, got `{}` (object)',
      ],
      [
        'bad onProgress',
        () => runBatch(ok(), { onProgress: 'yes' as never }),
        'Expected `onProgress` to be a function (progress) => void, got `yes` (string)',
      ],
      [
        'bad historyDir',
        () => runBatch(ok(), { historyDir: '' }),
        'Expected `historyDir` to be a directory path, got `` (string)',
      ],
      [
        'bad logger',
        () => runBatch(ok(), { logger: { warn() {} } as never }),
        'Expected `logger` to be an object with error, warn, info and debug methods',
      ],
      ['options null', () => runBatch(ok(), null as never), 'Expected `options` to be an object, got `null`'],
    ])('rejects %s, naming the option and the value, before any run', async (_, call, message) => {
      await expect(call()).rejects.toThrow(InvalidArgumentError);
      await expect(call()).rejects.toThrow(message);
      expect(factory).not.toHaveBeenCalled();
    });

    it.each<[string, unknown, string]>([
      ['not iterable', 42, 'Expected `tasks` to be an array or iterable of { id, input, agent }, got `42` (number)'],
      ['a string', 'abc', 'Expected `tasks` to be an array or iterable of { id, input, agent }, got `abc` (string)'],
      [
        'a null task',
        [null],
        'Expected `tasks[0]` to be an object { id, input, agent } or { id, input?, drive }, got `null`',
      ],
      [
        'an empty id',
        [{ id: '', input: 'go', agent: factory }],
        'Expected `tasks[0].id` to be a non-empty string, got `` (string)',
      ],
      [
        'a missing input',
        [
          { id: 'a', input: 'go', agent: factory },
          { id: 'b', agent: factory },
        ],
        'Expected `tasks[1].input` to be a string (the user message), got `undefined`',
      ],
      [
        'a bad agent',
        [{ id: 'a', input: 'go', agent: 42 }],
        'Expected `tasks[0].agent` to be an AgentLoop or a function returning one (or give `drive(mirror)` for a framework loop), got `42` (number)',
      ],
      [
        "a framework task's loop under its old name, run",
        [{ id: 'a', input: 'go', run: async () => undefined }],
        'Expected `tasks[0].run` to be left out: a framework task gives its loop as `drive(mirror)` (`run` is now `drive`), got `[function run]` (function)',
      ],
      [
        'duplicate ids',
        [
          { id: 'fix-42', input: 'go', agent: factory },
          { id: 'b', input: 'go', agent: factory },
          { id: 'fix-42', input: 'again', agent: factory },
        ],
        'Expected `tasks[2].id` to be unique (`tasks[0].id` is the same), got `fix-42` (string)',
      ],
    ])('rejects tasks with %s, naming the task, before any run', async (_, tasks, message) => {
      await expect(runBatch(tasks as never, { logger: false })).rejects.toThrow(InvalidArgumentError);
      await expect(runBatch(tasks as never, { logger: false })).rejects.toThrow(message);
      expect(factory).not.toHaveBeenCalled();
    });
  });
});
