import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { AgentWithStateMachine } from '../../lib/agent/AgentWithStateMachine';
import { createScriptedAgent } from '../../lib/agent/createScriptedAgent';
import type { HistoryItem } from '../../lib/history/HistoryEntry';
import { loadHistory } from '../../lib/history/loadHistory';
import { RunFactsCollector, runFacts, type RunFacts } from '../../lib/history/runFacts';
import { summarizeHistory } from '../../lib/history/summarizeHistory';
import { extendTable } from '../../lib/machine/extendTable';
import { InvalidArgumentError } from '../../lib/machine/InvalidArgumentError';
import { StateMachine } from '../../lib/machine/StateMachine';
import { DEFAULT_TABLE } from '../../lib/machine/transitions';
import { failedRun, rec, scriptedMachine, T0, TOOL_TURN } from '../fixtures/agentRun';
import {
  NEW_BUDGET_RUN,
  OLD_BUDGET_RUN,
  OLD_CUSTOM_TABLE_RUN,
  OLD_NO_META_RUN,
  writeHistoryFile,
} from '../fixtures/historyFiles';

const usage = (
  inputTokens: number,
  outputTokens: number,
  costUsd: number,
  llmCalls: number,
  toolCalls: number,
  wallMs = 0,
) => ({ inputTokens, outputTokens, costUsd, toolCalls, llmCalls, wallMs });

let dir: string;
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sm-facts-'));
});
afterAll(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

async function factsOfFile(name: string, text: string): Promise<RunFacts> {
  return runFacts((await loadHistory(writeHistoryFile(dir, name, text))).entries);
}

describe('runFacts()', () => {
  it('runFacts() reads a file written before terminal records carried outcome and usage', async () => {
    const facts = await factsOfFile('old-budget.jsonl', OLD_BUDGET_RUN);
    const spent = {
      costUsd: 0.6,
      inputTokens: 2600,
      outputTokens: 420,
      cachedInputTokens: 0,
      llmCalls: 2,
      toolCalls: 1,
    };
    expect(facts).toEqual({
      outcome: 'budget_exceeded',
      turns: [
        {
          turn: 1,
          firstSeq: 2,
          lastSeq: 12,
          end: 'terminal',
          state: 'EndOfTurn',
          outcome: 'end_of_turn',
          recorded: false,
          usage: spent,
        },
        {
          turn: 2,
          firstSeq: 14,
          lastSeq: 14,
          end: 'terminal',
          state: 'Error',
          outcome: 'budget_exceeded',
          recorded: true,
          usage: spent,
        },
      ],
      failingMove: {
        turn: 2,
        seq: 14,
        line: 15,
        from: 'WaitingForUserInput',
        to: 'Error',
        at: 1735732809001,
        durationMs: 1,
        description: 'budget exceeded: $0.60 of $0.50 after 2 LLM calls; no LLM call made',
        data: { outcome: 'budget_exceeded', limit: 'maxCostUsd', used: 0.6, max: 0.5 },
        forced: false,
        outcome: 'budget_exceeded',
      },
      usage: [
        {
          at: 1735732801502,
          costUsd: 0.4,
          inputTokens: 1200,
          outputTokens: 300,
          cachedInputTokens: 0,
          llmCalls: 1,
          toolCalls: 0,
        },
        { at: 1735732802398, ...spent },
      ],
      finalUsage: spent,
      retried: [3],
      spend: {
        costUsd: 0.6,
        uncertainUsd: 0,
        releasedUsd: 0,
        uncertain: [],
        openReservations: 0,
        unpricedReservations: 0,
        unpricedCalls: 0,
        unpriced: [],
        ledger: false,
      },
    });
  });

  it('runFacts() gives a file whose terminal records carry outcome and usage the same facts, read rather than derived', async () => {
    const old = await factsOfFile('old-budget.jsonl', OLD_BUDGET_RUN);
    const fresh = await factsOfFile('new-budget.jsonl', NEW_BUDGET_RUN);
    expect(fresh.turns.map((t) => t.recorded)).toEqual([true, true]);
    const { data: freshData, ...freshFailing } = fresh.failingMove!;
    const { data: oldData, ...oldFailing } = old.failingMove!;
    expect(freshFailing).toEqual(oldFailing);
    expect(freshData).toEqual({ ...(oldData as object), usage: usage(2600, 420, 0.6, 2, 1, 2398) });
    expect({ ...fresh, failingMove: null, turns: fresh.turns.map((t) => ({ ...t, recorded: false })) }).toEqual({
      ...old,
      failingMove: null,
      turns: old.turns.map((t) => ({ ...t, recorded: false })),
    });
  });

  it('runFacts() reads a custom table from the meta line: its terminal and error flags, its states named as outcomes', async () => {
    const facts = await factsOfFile('old-custom.jsonl', OLD_CUSTOM_TABLE_RUN);
    expect(facts.outcome).toBe('Crashed');
    expect(facts.turns.map(({ firstSeq, lastSeq, state, outcome }) => ({ firstSeq, lastSeq, state, outcome }))).toEqual(
      [
        { firstSeq: 2, lastSeq: 3, state: 'Done', outcome: 'Done' },
        { firstSeq: 5, lastSeq: 6, state: 'Crashed', outcome: 'Crashed' },
      ],
    );
    expect(facts.failingMove).toMatchObject({
      seq: 6,
      from: 'Working',
      to: 'Crashed',
      description: 'disk full',
      data: { errno: 28 },
      outcome: 'Crashed',
    });
    // One response's usage per record, added up.
    expect(facts.usage).toEqual([
      {
        at: 1735732800020,
        costUsd: 0.01,
        inputTokens: 10,
        outputTokens: 5,
        cachedInputTokens: 0,
        llmCalls: 1,
        toolCalls: 0,
      },
      {
        at: 1735732800050,
        costUsd: 0.03,
        inputTokens: 30,
        outputTokens: 10,
        cachedInputTokens: 0,
        llmCalls: 2,
        toolCalls: 0,
      },
    ]);
  });

  it('runFacts() reads a file with no meta line by the sixteen-state table', async () => {
    const facts = await factsOfFile('old-no-meta.jsonl', OLD_NO_META_RUN);
    expect(facts.outcome).toBe('cancelled');
    expect(facts.failingMove).toMatchObject({
      seq: 6,
      from: 'CheckingForCancellation',
      to: 'Cancelled',
      outcome: 'cancelled',
    });
    expect(facts.finalUsage).toEqual({
      costUsd: 0.001,
      inputTokens: 100,
      outputTokens: 20,
      cachedInputTokens: 0,
      llmCalls: 1,
      toolCalls: 0,
    });
  });

  it('runFacts() counts a move as retried only when its LLM call took more than one attempt', () => {
    const failure = (attempt: number) => ({ attempt, error: 'overloaded' });
    const facts = runFacts([
      rec(1, 'Ready', 'WaitingForUserInput'),
      rec(2, 'WaitingForUserInput', 'SendingToLLM'),
      // One attempt, answered.
      rec(3, 'SendingToLLM', 'ProcessingLLMResponse', { attempts: 1 }),
      rec(4, 'ProcessingLLMResponse', 'SendingToLLM'),
      // The second attempt answered, after the first failed.
      rec(5, 'SendingToLLM', 'ProcessingLLMResponse', { attempts: 2, failures: [failure(1)] }),
      rec(6, 'ProcessingLLMResponse', 'SendingToLLM'),
      // One attempt, failed: the failure is listed, yet nothing was retried.
      rec(7, 'SendingToLLM', 'Error', { operation: 'sendToolResults', failures: [failure(1)] }),
      rec(8, 'Error', 'WaitingForUserInput'),
      rec(9, 'WaitingForUserInput', 'SendingToLLM'),
      // Two attempts, both failed.
      rec(10, 'SendingToLLM', 'Error', { operation: 'sendUserMessage', failures: [failure(1), failure(2)] }),
      rec(11, 'Error', 'WaitingForUserInput'),
      rec(12, 'WaitingForUserInput', 'SendingToLLM'),
      // A budget stop after one failed attempt: no second attempt was made.
      rec(13, 'SendingToLLM', 'BudgetExceeded', { limit: 'maxCostUsd', failures: [failure(1)] }),
    ]);
    expect(facts.retried).toEqual([5, 10]);
  });

  it('runFacts() prefers the usage a terminal record carries when it knows more than the records before it', () => {
    // The tool was charged, then failed: only the record that ends the turn can say so.
    const facts = runFacts([
      rec(1, 'Ready', 'WaitingForUserInput'),
      rec(2, 'WaitingForUserInput', 'SendingToLLM'),
      rec(3, 'SendingToLLM', 'ProcessingLLMResponse', { attempts: 1, usage: usage(100, 10, 0.01, 1, 0) }),
      rec(4, 'ProcessingLLMResponse', 'ToolUseRequested'),
      rec(5, 'ToolUseRequested', 'CheckingForCancellation'),
      rec(6, 'CheckingForCancellation', 'RunningTool'),
      rec(7, 'RunningTool', 'Error', {
        operation: 'runTool',
        outcome: 'error',
        usage: usage(100, 10, 0.01, 1, 1, 900),
      }),
    ]);
    expect(facts.finalUsage).toEqual({
      costUsd: 0.01,
      inputTokens: 100,
      outputTokens: 10,
      cachedInputTokens: 0,
      llmCalls: 1,
      toolCalls: 1,
    });
    expect(facts.turns[0]).toMatchObject({ outcome: 'error', recorded: true, usage: { toolCalls: 1 } });
    // Cost and tokens did not move: no new point on the charts.
    expect(facts.usage).toHaveLength(1);
  });

  it('runFacts() prefers a recorded outcome, and ignores an `outcome` that is not one (a loop’s own data)', () => {
    const table = extendTable(DEFAULT_TABLE, {
      states: [
        {
          name: 'Paused',
          description: 'waits for a person',
          next: ['WaitingForUserInput'],
          isTerminal: true,
          isError: true,
        },
      ],
      edges: [['CheckingForCancellation', 'Paused']],
    });
    const paused = runFacts(
      [
        rec(1, 'Ready', 'WaitingForUserInput'),
        rec(2, 'WaitingForUserInput', 'SendingToLLM'),
        rec(3, 'SendingToLLM', 'ProcessingLLMResponse'),
        rec(4, 'ProcessingLLMResponse', 'ToolUseRequested'),
        rec(5, 'ToolUseRequested', 'CheckingForCancellation'),
        rec(6, 'CheckingForCancellation', 'Paused', { outcome: 'cancelled' }),
      ],
      { table },
    );
    expect(paused.outcome).toBe('cancelled');
    expect(paused.failingMove).toMatchObject({ to: 'Paused', outcome: 'cancelled' });
    const own = runFacts([
      rec(1, 'Ready', 'WaitingForUserInput'),
      rec(2, 'WaitingForUserInput', 'SendingToLLM'),
      rec(3, 'SendingToLLM', 'ProcessingLLMResponse'),
      rec(4, 'ProcessingLLMResponse', 'EndOfTurn', { outcome: 'great success' }),
    ]);
    expect(own.turns[0]).toMatchObject({ outcome: 'end_of_turn', recorded: false });
  });

  it('runFacts() names empty, incomplete and reset runs as collectRun always has', () => {
    expect(runFacts([]).outcome).toBe('empty');
    expect(runFacts([]).finalUsage).toBeNull();
    const open = runFacts([rec(1, 'Ready', 'WaitingForUserInput'), rec(2, 'WaitingForUserInput', 'SendingToLLM')]);
    expect(open.outcome).toBe('incomplete');
    expect(open.turns).toEqual([
      {
        turn: 1,
        firstSeq: 2,
        lastSeq: 2,
        end: 'open',
        state: null,
        outcome: 'incomplete',
        recorded: false,
        usage: null,
      },
    ]);
    // Only the move into the idle state: records, but no turn.
    expect(runFacts([rec(1, 'Ready', 'WaitingForUserInput')]).outcome).toBe('ok');
    // A failed turn, a reset, a turn cut short by another reset: the failure is forgotten, the open turn ends as reset.
    const reset = (seq: number, from: string): HistoryItem => ({
      kind: 'reset',
      line: 0,
      reset: { type: 'reset', from, at: T0, seq },
    });
    const collector = new RunFactsCollector();
    const ended = [
      ...failedRun().history(),
      reset(15, 'Error'),
      rec(16, 'Ready', 'WaitingForUserInput'),
      rec(17, 'WaitingForUserInput', 'SendingToLLM'),
      reset(17, 'SendingToLLM'),
    ].map((item) => collector.add(item)?.end);
    expect(ended.filter((end) => end !== undefined)).toEqual(['terminal', 'terminal', 'reset']);
    expect(collector.result()).toMatchObject({ outcome: 'ok', failingMove: null });
  });

  it('runFacts() agrees with summarizeHistory on the turns, the failure and whether the run ended', () => {
    for (const history of [
      failedRun().history(),
      (() => {
        const run = scriptedMachine();
        run.play([['WaitingForUserInput', 'start', 1], ...TOOL_TURN, ...TOOL_TURN.slice(0, 4)]);
        return run.machine.history();
      })(),
    ]) {
      const facts = runFacts(history);
      const summary = summarizeHistory(history);
      expect(facts.turns.map((t) => [t.turn, t.firstSeq, t.lastSeq, t.end, t.state])).toEqual(
        summary.turns.list.map((t) => [t.turn, t.firstSeq, t.lastSeq, t.end, t.outcome]),
      );
      expect(facts.failingMove?.seq).toBe(summary.failure?.seq);
    }
  });

  it('RunFactsCollector.add() returns the turn each move ends, and .usage the usage so far', () => {
    const collector = new RunFactsCollector();
    expect(collector.usage).toBeNull();
    expect(collector.add(rec(1, 'Ready', 'WaitingForUserInput'))).toBeUndefined();
    expect(collector.add(rec(2, 'WaitingForUserInput', 'SendingToLLM'))).toBeUndefined();
    expect(
      collector.add(rec(3, 'SendingToLLM', 'ProcessingLLMResponse', { usage: usage(5, 1, 0.5, 1, 0) })),
    ).toBeUndefined();
    expect(collector.usage).toEqual({
      costUsd: 0.5,
      inputTokens: 5,
      outputTokens: 1,
      cachedInputTokens: 0,
      llmCalls: 1,
      toolCalls: 0,
    });
    expect(collector.add(rec(4, 'ProcessingLLMResponse', 'EndOfTurn'))).toEqual({
      turn: 1,
      firstSeq: 2,
      lastSeq: 4,
      end: 'terminal',
      state: 'EndOfTurn',
      outcome: 'end_of_turn',
      recorded: false,
      usage: collector.usage,
    });
  });

  it('runFacts() works on a live machine of an extended table', () => {
    const table = extendTable(DEFAULT_TABLE, {
      states: [{ name: 'Compacting', description: 'shrinking the context', next: ['SendingToLLM', 'Error'] }],
      edges: [['WaitingForUserInput', 'Compacting']],
    });
    const machine = new StateMachine({ table, clock: () => T0, logger: false });
    machine.transition('WaitingForUserInput', 'start');
    machine.transition('Compacting', 'too long');
    machine.transition('Error', { description: 'compaction failed', data: { why: 'model refused' } });
    expect(runFacts(machine.history(), { table })).toMatchObject({
      outcome: 'error',
      failingMove: { from: 'Compacting', to: 'Error', data: { why: 'model refused' } },
    });
  });

  it('runFacts() reads what the adapter writes: a turn on a spent budget is budget_exceeded, its usage the totals', async () => {
    const adapter = new AgentWithStateMachine(
      createScriptedAgent({ replies: [{ text: 'a', usage: { inputTokens: 3, outputTokens: 2, costUsd: 1 } }] }),
      { logger: false, maxHistorySize: Infinity, budget: { maxCostUsd: 0.5, strict: false } },
    );
    await adapter.runTurn('1');
    await adapter.runTurn('2');
    const facts = runFacts(adapter.machine.history());
    expect(facts.turns.map((t) => t.outcome)).toEqual(['end_of_turn', 'budget_exceeded']);
    expect(facts.outcome).toBe('budget_exceeded');
    expect(facts.finalUsage).toMatchObject({ costUsd: 1, inputTokens: 3, outputTokens: 2, llmCalls: 1 });
  });

  it('runFacts() names bad input', () => {
    expect(() => runFacts('Ready' as never)).toThrow(InvalidArgumentError);
    expect(() => runFacts([rec(1, 'Ready', 'WaitingForUserInput'), { nope: true } as never])).toThrow(/items\[1\]/);
    expect(() => runFacts([], { table: { initial: 'Ready' } as never })).toThrow(/options\.table/);
    expect(() => new RunFactsCollector(null as never)).toThrow(/options/);
  });
});
