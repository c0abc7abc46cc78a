import fc from 'fast-check';
import { extendTable } from '../../lib/machine/extendTable';
import type { HistoryEntry } from '../../lib/history/HistoryEntry';
import { toHistoryTableInfo } from '../../lib/history/HistoryTableInfo';
import { StateMachine } from '../../lib/machine/StateMachine';
import { HistorySummarizer, summarizeHistory } from '../../lib/history/summarizeHistory';
import type { TransitionRecord } from '../../lib/machine/TransitionRecord';
import { DEFAULT_TABLE } from '../../lib/machine/transitions';
import { failedRun, FAILING_TURN, scriptedMachine, T0, TOOL_TURN } from '../fixtures/agentRun';

const entries = (records: readonly TransitionRecord[]): HistoryEntry[] =>
  records.map((record, i) => ({ kind: 'record', line: i + 2, record }));

describe('summarizeHistory()', () => {
  it('tells where and why a failed run ended, with the moves before it', () => {
    const summary = summarizeHistory(entries(failedRun().history()), { lastMoves: 3 });
    expect(summary.status).toBe('failed');
    expect(summary.finalState).toBe('Error');
    expect(summary.failure).toEqual({
      turn: 2,
      state: 'Error',
      from: 'SendingToLLM',
      seq: 15,
      line: 16,
      at: T0 + 5 + 21109 + 39000,
      durationMs: 30000,
      description: 'LLM request failed',
      data: { status: 529, message: 'overloaded' },
      forced: false,
      lastMoves: [
        expect.objectContaining({ seq: 13 }),
        expect.objectContaining({ seq: 14 }),
        expect.objectContaining({ seq: 15 }),
      ],
    });
    expect(summary.lastMoves.map((r) => r.seq)).toEqual([13, 14, 15]);
  });

  it('gives the path: turns with their outcomes, skipping the moves between turns', () => {
    const summary = summarizeHistory(failedRun().history());
    expect(summary.turns).toEqual({
      count: 2,
      outcomes: { EndOfTurn: 1, Error: 1 },
      list: [
        {
          turn: 1,
          firstSeq: 2,
          lastSeq: 12,
          startAt: T0 + 2005,
          endAt: T0 + 5 + 21108,
          durationMs: 19108,
          moves: 11,
          forced: 0,
          end: 'terminal',
          outcome: 'EndOfTurn',
          description: 'answered',
        },
        {
          turn: 2,
          firstSeq: 14,
          lastSeq: 15,
          startAt: T0 + 5 + 21109 + 9000,
          endAt: T0 + 5 + 21109 + 39000,
          durationMs: 30000,
          moves: 2,
          forced: 0,
          end: 'terminal',
          outcome: 'Error',
          description: 'LLM request failed',
        },
      ],
    });
    expect(summary).toMatchObject({
      records: 15,
      firstSeq: 1,
      lastSeq: 15,
      startedAt: T0,
      endedAt: T0 + 60114,
      elapsedMs: 60114,
    });
  });

  it('gives the time per state: visits, total, share, median, max, most time first', () => {
    const summary = summarizeHistory(failedRun().history());
    expect(summary.states.slice(0, 3)).toEqual([
      {
        state: 'SendingToLLM',
        visits: 2,
        totalMs: 33000,
        share: 33000 / 60114,
        medianMs: 16500,
        maxMs: 30000,
        medianExact: true,
      },
      {
        state: 'RunningTool',
        visits: 1,
        totalMs: 12000,
        share: 12000 / 60114,
        medianMs: 12000,
        maxMs: 12000,
        medianExact: true,
      },
      {
        state: 'WaitingForUserInput',
        visits: 2,
        totalMs: 11000,
        share: 11000 / 60114,
        medianMs: 5500,
        maxMs: 9000,
        medianExact: true,
      },
    ]);
    expect(summary.states.reduce((n, s) => n + s.visits, 0)).toBe(15);
    expect(summary.states.map((s) => s.state)).not.toContain('Error'); // not left yet
  });

  it('counts forced and rejected moves, listing the latest up to listLimit', () => {
    const run = scriptedMachine();
    run.play([['WaitingForUserInput', 'start', 1], ...TOOL_TURN.slice(0, 5)]);
    for (let i = 0; i < 3; i++) expect(() => run.machine.transition('Cancelled', `stop ${i}`)).toThrow();
    run.play([
      ['Cancelled', 'user pressed Ctrl-C', 100, { forced: true }],
      ['WaitingForUserInput', 'next', 1],
      ['Error', 'hard stop', 1, { forced: true }],
    ]);
    const rejected = [0, 1, 2].map((i): HistoryEntry => ({
      kind: 'rejected',
      line: 0,
      rejected: {
        type: 'rejected',
        from: 'RunningTool',
        to: 'Cancelled',
        allowed: ['CheckingGitCommits', 'Error'],
        description: `stop ${i}`,
        at: T0,
        seq: 6,
      },
    }));
    const summary = summarizeHistory([...run.machine.history(), ...rejected], { listLimit: 1 });
    expect(summary.forced.count).toBe(2);
    expect(summary.forced.list).toEqual([
      expect.objectContaining({ from: 'WaitingForUserInput', to: 'Error', description: 'hard stop', forced: true }),
    ]);
    expect(summary.rejected).toEqual({ count: 3, list: [expect.objectContaining({ description: 'stop 2' })] });
    expect(summary.turns.list).toHaveLength(1);
    expect(summary.turns.count).toBe(2);
    expect(summary.turns.outcomes).toEqual({ Cancelled: 1, Error: 1 });
    expect(summary.failure).toMatchObject({ state: 'Error', forced: true, description: 'hard stop' });
  });

  it('marks a history that ends inside a turn as incomplete, with the open turn', () => {
    const run = scriptedMachine();
    run.play([['WaitingForUserInput', 'start', 1], ...TOOL_TURN.slice(0, 5)]);
    const summary = summarizeHistory(run.machine.history());
    expect(summary.status).toBe('incomplete');
    expect(summary.finalState).toBe('RunningTool');
    expect(summary.failure).toBeNull();
    expect(summary.turns.list).toEqual([
      expect.objectContaining({ turn: 1, end: 'open', outcome: null, moves: 5, firstSeq: 2, lastSeq: 6 }),
    ]);
  });

  it('keeps the last failure visible when a new turn started after it, and clears it once a turn ends well', () => {
    const run = scriptedMachine();
    run.play([
      ['WaitingForUserInput', 'start', 1],
      ...FAILING_TURN,
      ['WaitingForUserInput', 'retry', 1],
      ['SendingToLLM', 'ask again', 1],
    ]);
    const midway = summarizeHistory(run.machine.history());
    expect(midway.status).toBe('incomplete');
    expect(midway.failure).toMatchObject({ turn: 1, state: 'Error' });
    run.play([
      ['ProcessingLLMResponse', 'reply', 1],
      ['EndOfTurn', 'done', 1],
    ]);
    const after = summarizeHistory(run.machine.history());
    expect(after.status).toBe('ok');
    expect(after.failure).toBeNull();
  });

  it('ends the open turn at a reset and counts resets', () => {
    const items: HistoryEntry[] = [];
    let t = T0;
    const machine = new StateMachine({
      clock: () => ++t,
      logger: false,
      sink: {
        write: (record) => void items.push({ kind: 'record', line: items.length + 1, record }),
        reset: (info) => void items.push({ kind: 'reset', line: items.length + 1, reset: { type: 'reset', ...info } }),
      },
    });
    machine.transition('WaitingForUserInput', 'start');
    machine.transition('SendingToLLM', 'ask');
    machine.transition('Error', 'failed');
    machine.transition('WaitingForUserInput', 'next');
    machine.transition('SendingToLLM', 'ask');
    machine.reset();
    const summary = summarizeHistory(items);
    expect(summary.resets).toBe(1);
    expect(summary.status).toBe('ok');
    expect(summary.failure).toBeNull();
    expect(summary.turns.list.map((turn) => [turn.turn, turn.end, turn.outcome])).toEqual([
      [1, 'terminal', 'Error'],
      [2, 'reset', null],
    ]);
  });

  it('notes what a turn stood for only where its record says another outcome than its state', () => {
    const rec = (seq: number, from: string, to: string, data?: unknown): TransitionRecord<string> => ({
      seq,
      from,
      to,
      description: '',
      at: T0 + seq,
      durationMs: 1,
      forced: false,
      ...(data === undefined ? {} : { data }),
    });
    const summary = summarizeHistory([
      rec(1, 'Ready', 'WaitingForUserInput'),
      rec(2, 'WaitingForUserInput', 'SendingToLLM'),
      rec(3, 'SendingToLLM', 'ProcessingLLMResponse'),
      rec(4, 'ProcessingLLMResponse', 'EndOfTurn', { outcome: 'end_of_turn', usage: { costUsd: 0.1, llmCalls: 1 } }),
      rec(5, 'EndOfTurn', 'WaitingForUserInput'),
      rec(6, 'WaitingForUserInput', 'Error', { outcome: 'budget_exceeded', limit: 'maxCostUsd' }),
      rec(7, 'Error', 'WaitingForUserInput'),
      rec(8, 'WaitingForUserInput', 'SendingToLLM'),
      rec(9, 'SendingToLLM', 'ProcessingLLMResponse'),
      rec(10, 'ProcessingLLMResponse', 'ToolUseRequested'),
      rec(11, 'ToolUseRequested', 'CheckingForCancellation'),
      rec(12, 'CheckingForCancellation', 'RunningTool'),
      rec(13, 'RunningTool', 'CheckingGitCommits'),
      rec(14, 'CheckingGitCommits', 'CheckingBudget'),
      rec(15, 'CheckingBudget', 'BudgetExceeded', { outcome: 'budget_exceeded', limit: 'maxWallMs' }),
      rec(16, 'BudgetExceeded', 'WaitingForUserInput'),
      rec(17, 'WaitingForUserInput', 'Error', { outcome: 'a loop of its own' }),
    ]);
    expect(summary.turns.list.map((t) => [t.outcome, t.standsFor])).toEqual([
      ['EndOfTurn', undefined],
      ['Error', 'budget_exceeded'],
      ['BudgetExceeded', undefined],
      ['Error', undefined],
    ]);
  });

  it('says empty for no records', () => {
    expect(summarizeHistory([])).toMatchObject({
      status: 'empty',
      records: 0,
      finalState: null,
      startedAt: null,
      elapsedMs: 0,
      failure: null,
      states: [],
      lastMoves: [],
    });
  });

  it('uses the table in the meta line: a custom error state ends a turn badly', () => {
    const table = extendTable(DEFAULT_TABLE, {
      states: [
        { name: 'Stuck', description: 'gave up', next: ['WaitingForUserInput'], isTerminal: true, isError: true },
      ],
      edges: [['SendingToLLM', 'Stuck']],
    });
    const machine = new StateMachine({ table, logger: false, clock: () => T0 });
    machine.transition('WaitingForUserInput', 'start');
    machine.transition('SendingToLLM', 'ask');
    machine.transition('Stuck', 'no progress');
    const meta: HistoryEntry = {
      kind: 'meta',
      line: 1,
      table,
      meta: { type: 'meta', version: '0.1.0', runId: 'r', startedAt: T0, table: toHistoryTableInfo(table) },
    };
    const summary = summarizeHistory([meta, ...machine.history()]);
    expect(summary.meta?.runId).toBe('r');
    expect(summary.status).toBe('failed');
    expect(summary.failure).toMatchObject({ state: 'Stuck', description: 'no progress' });
    expect(summarizeHistory(machine.history()).status).toBe('incomplete'); // to the default table, Stuck ends no turn
  });

  it('names a bad argument and its value instead of failing inside', () => {
    expect(() => summarizeHistory(42 as never)).toThrow(
      'Expected `items` to be an iterable of transition records or history entries, got `42` (number)',
    );
    expect(() => summarizeHistory('Ready' as never)).toThrow(/^Expected `items` to be an iterable/);
    expect(() => summarizeHistory([null] as never)).toThrow(
      'Expected `items[0]` to be a transition record or history entry, got `null`',
    );
    expect(() => summarizeHistory([{ from: 'Ready' }] as never)).toThrow(
      'Expected `items[0].to` to be a state name, got `undefined`',
    );
    expect(() =>
      summarizeHistory([{ seq: 1, from: 'Ready', to: 'WaitingForUserInput', at: '1', durationMs: 0 }] as never),
    ).toThrow('Expected `items[0].at` to be a number, got `1` (string)');
    expect(() => summarizeHistory([], null as never)).toThrow('Expected `options` to be an object, got `null`');
    expect(() => summarizeHistory([], { table: { initial: 'Ready' } } as never)).toThrow(
      /^Expected `options.table` to be a transition table \{ initial, states \}, got/,
    );
    expect(() => new HistorySummarizer().add([] as never)).toThrow(
      'Expected `item` to be a transition record or history entry, got `[]` (array)',
    );
  });

  it('rejects options that are not positive integers, by name', () => {
    expect(() => summarizeHistory([], { lastMoves: 0 })).toThrow(
      'Expected `lastMoves` to be a positive integer, got `0` (number)',
    );
    expect(() => summarizeHistory([], { listLimit: 1.5 })).toThrow(/`listLimit`/);
    expect(() => summarizeHistory([], { exactSamples: -1 })).toThrow(/`exactSamples`/);
  });
});

describe('HistorySummarizer', () => {
  const visits = (durations: number[]): TransitionRecord[] => {
    let at = T0;
    return durations.map((durationMs, i) => {
      at += durationMs;
      const from = i % 2 === 0 ? 'EndOfTurn' : 'WaitingForUserInput';
      const to = i % 2 === 0 ? 'WaitingForUserInput' : 'EndOfTurn';
      return { seq: i + 1, from, to, description: '', at, durationMs, forced: true };
    });
  };

  it('.result() gives the exact median while a state has at most exactSamples visits', () => {
    const summarizer = new HistorySummarizer({ exactSamples: 10 });
    for (const r of visits([5, 0, 1, 0, 9, 0, 3, 0])) summarizer.add(r); // EndOfTurn: 5, 1, 9, 3
    expect(summarizer.result().states.find((s) => s.state === 'EndOfTurn')).toMatchObject({
      visits: 4,
      medianMs: 4,
      maxMs: 9,
      totalMs: 18,
      medianExact: true,
    });
    summarizer.add({
      seq: 9,
      from: 'EndOfTurn',
      to: 'WaitingForUserInput',
      description: '',
      at: T0 + 100,
      durationMs: 7,
      forced: true,
    });
    expect(summarizer.result().states.find((s) => s.state === 'EndOfTurn')).toMatchObject({
      visits: 5,
      medianMs: 5,
      medianExact: true,
    });
  });

  it('.result() gives a median within 1% from a bounded histogram past exactSamples', () => {
    const durations = Array.from({ length: 2001 }, (_, i) => 1000 + ((i * 7919) % 2001)); // 1000..3000, shuffled
    const summarizer = new HistorySummarizer({ exactSamples: 100 });
    let at = T0;
    durations.forEach((durationMs, i) => {
      at += durationMs;
      summarizer.add({
        seq: i + 1,
        from: 'RunningTool',
        to: 'RunningTool',
        description: '',
        at,
        durationMs,
        forced: true,
      });
    });
    const stats = summarizer.result().states[0]!;
    expect(stats).toMatchObject({ state: 'RunningTool', visits: 2001, maxMs: 3000, medianExact: false });
    expect(Math.abs(stats.medianMs - 2000) / 2000).toBeLessThan(0.01);
    expect(stats.totalMs).toBe(durations.reduce((a, b) => a + b, 0));
  });

  it(".result() orders the histogram's buckets by duration, zero and extreme durations included", () => {
    // 0 and the extremes fall outside the histogram's array of buckets; the median is found among all of them.
    const median = (durations: number[]): number => {
      const summarizer = new HistorySummarizer({ exactSamples: 1 });
      durations.forEach((durationMs, i) =>
        summarizer.add({
          seq: i + 1,
          from: 'RunningTool',
          to: 'RunningTool',
          description: '',
          at: T0 + i,
          durationMs,
          forced: true,
        }),
      );
      const stats = summarizer.result().states[0]!;
      expect(stats.medianExact).toBe(false);
      return stats.medianMs;
    };
    expect(median([0, 0, 0, 5, 1e20])).toBe(0);
    expect(median([1e-12, 1e-12, 1e-12, 5, 1e20])).toBeCloseTo(1e-12, 14);
    expect(median([1e-12, 5, 5, 5, 1e20])).toBeCloseTo(5, 1);
    expect(median([1e-12, 5, 1e20, 1e20, 1e20]) / 1e20).toBeCloseTo(1, 1);
    expect(median([0, 1e-12, 3, 1e15, 1e20]) / 3).toBeCloseTo(1, 1);
  });

  it('.result() puts every whole millisecond from 1 to 2,000 in the bucket that holds it', () => {
    for (let ms = 1; ms <= 2000; ms++) {
      const summarizer = new HistorySummarizer({ exactSamples: 1 });
      [ms, ms, 2 * ms].forEach((durationMs, i) =>
        summarizer.add({
          seq: i + 1,
          from: 'RunningTool',
          to: 'RunningTool',
          description: '',
          at: T0 + i,
          durationMs,
          forced: true,
        }),
      );
      const stats = summarizer.result().states[0]!;
      // The middle of a 1% bucket is within 0.5% of whatever it holds.
      expect(Math.abs(stats.medianMs - ms) / ms).toBeLessThanOrEqual(0.005);
    }
  });

  it('.add() keeps memory bounded: lists hold at most listLimit, last moves at most lastMoves', () => {
    const summarizer = new HistorySummarizer({ lastMoves: 2, listLimit: 3 });
    for (const r of visits(Array.from({ length: 100 }, () => 1))) summarizer.add(r);
    const summary = summarizer.result();
    expect(summary.lastMoves.map((r) => r.seq)).toEqual([99, 100]);
    expect(summary.forced).toMatchObject({ count: 100 });
    expect(summary.forced.list).toHaveLength(3);
    expect(summary.turns.list).toHaveLength(3);
    expect(summary.turns.count).toBe(50);
  });
});

describe('summarizeHistory() properties', () => {
  it('accounts for every move and every millisecond of any run', () => {
    fc.assert(
      fc.property(fc.array(fc.record({ pick: fc.nat(), ms: fc.nat({ max: 10_000 }) }), { maxLength: 100 }), (moves) => {
        let t = T0;
        const machine = new StateMachine({ clock: () => t, logger: false, maxHistorySize: Infinity });
        for (const { pick, ms } of moves) {
          const allowed = machine.allowedFrom();
          t += ms;
          machine.transition(allowed[pick % allowed.length]!, 'move');
        }
        const summary = summarizeHistory(machine.history());
        expect(summary.states.reduce((n, s) => n + s.visits, 0)).toBe(moves.length);
        expect(summary.states.reduce((n, s) => n + s.totalMs, 0)).toBe(moves.reduce((n, m) => n + m.ms, 0));
        expect(summary.elapsedMs).toBe(t - T0);
        const finished = Object.values(summary.turns.outcomes).reduce((a, b) => a + b, 0);
        expect(summary.turns.count - finished).toBe(summary.status === 'incomplete' ? 1 : 0);
        expect(summary.status === 'failed').toBe(summary.failure !== null && summary.status !== 'incomplete');
      }),
    );
  });
});
