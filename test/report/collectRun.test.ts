import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { loadHistory } from '../../lib/history/loadHistory';
import { summarizeHistory } from '../../lib/history/summarizeHistory';
import { extendTable } from '../../lib/machine/extendTable';
import { DEFAULT_TABLE } from '../../lib/machine/transitions';
import { StateMachine } from '../../lib/machine/StateMachine';
import { runFacts } from '../../lib/history/runFacts';
import { collectRun } from '../../lib/report/collectRun';
import { failedRun, rec, scriptedMachine, T0, TOOL_TURN } from '../fixtures/agentRun';
import {
  NEW_BUDGET_RUN,
  OLD_BUDGET_RUN,
  OLD_CUSTOM_TABLE_RUN,
  OLD_NO_META_RUN,
  writeHistoryFile,
} from '../fixtures/historyFiles';
import { writeHostileRun } from '../fixtures/reportRuns';

describe('collectRun', () => {
  it('collectRun() gives the summary summarizeHistory gives, with the moves and rejected moves', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sm-collect-'));
    try {
      const loaded = await loadHistory(writeHostileRun(dir));
      const facts = collectRun(loaded.entries);
      expect(facts.summary).toEqual(summarizeHistory(loaded.entries));
      expect(facts.records).toEqual(loaded.records);
      expect(facts.rejected).toEqual(loaded.rejected);
      expect(facts.meta).toEqual(loaded.meta);
      expect(facts.outcome).toBe('error');
      expect([...facts.retried]).toEqual([
        loaded.records.find((r) => r.description === 'reply received after a retry')!.seq,
      ]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('collectRun() names the outcome as runBatch would', () => {
    const ok = scriptedMachine();
    ok.play([['WaitingForUserInput', 'start', 1], ...TOOL_TURN]);
    expect(collectRun(ok.machine.history()).outcome).toBe('end_of_turn');
    expect(collectRun(failedRun().history()).outcome).toBe('error');
    expect(collectRun([]).outcome).toBe('empty');
    expect(
      collectRun([rec(1, 'Ready', 'WaitingForUserInput'), rec(2, 'WaitingForUserInput', 'SendingToLLM')]).outcome,
    ).toBe('incomplete');
    const spent = [
      rec(1, 'Ready', 'WaitingForUserInput'),
      rec(2, 'WaitingForUserInput', 'Error', { outcome: 'budget_exceeded', limit: 'maxCostUsd' }),
    ];
    expect(collectRun(spent).outcome).toBe('budget_exceeded');
    const cancelled = [
      rec(1, 'Ready', 'WaitingForUserInput'),
      rec(2, 'WaitingForUserInput', 'SendingToLLM'),
      rec(3, 'SendingToLLM', 'ProcessingLLMResponse'),
      rec(4, 'ProcessingLLMResponse', 'ToolUseRequested'),
      rec(5, 'ToolUseRequested', 'CheckingForCancellation'),
      rec(6, 'CheckingForCancellation', 'Cancelled'),
    ];
    expect(collectRun(cancelled).outcome).toBe('cancelled');
  });

  it('collectRun() reads running totals and per-response usage, skipping what is not a number', () => {
    const running = collectRun([
      rec(1, 'Ready', 'WaitingForUserInput'),
      rec(2, 'WaitingForUserInput', 'SendingToLLM'),
      rec(3, 'SendingToLLM', 'ProcessingLLMResponse', {
        usage: { inputTokens: 100, outputTokens: 10, cachedInputTokens: 40, costUsd: 0.01, llmCalls: 1, toolCalls: 0 },
      }),
      rec(4, 'ProcessingLLMResponse', 'ToolUseRequested', { usage: 'lots' }),
      rec(5, 'ToolUseRequested', 'CheckingForCancellation', { usage: { costUsd: 'NaN' } }),
      rec(6, 'CheckingForCancellation', 'RunningTool', {
        usage: { inputTokens: 100, outputTokens: 10, costUsd: 0.01, llmCalls: 1, toolCalls: 0 },
      }),
      rec(7, 'RunningTool', 'CheckingGitCommits', {
        usage: { inputTokens: 300, outputTokens: 30, costUsd: 0.03, llmCalls: 2, toolCalls: 1 },
      }),
    ]);
    expect(running.usage).toEqual([
      {
        at: T0 + 30,
        costUsd: 0.01,
        inputTokens: 100,
        outputTokens: 10,
        cachedInputTokens: 40,
        llmCalls: 1,
        toolCalls: 0,
      },
      {
        at: T0 + 70,
        costUsd: 0.03,
        inputTokens: 300,
        outputTokens: 30,
        cachedInputTokens: 40,
        llmCalls: 2,
        toolCalls: 1,
      },
    ]);
    const perResponse = collectRun([
      rec(1, 'Ready', 'WaitingForUserInput', { usage: { inputTokens: 5, costUsd: 0.5 } }),
      rec(2, 'WaitingForUserInput', 'SendingToLLM', { usage: { outputTokens: 7, costUsd: 0.25 } }),
    ]);
    expect(perResponse.usage.at(-1)).toEqual({
      at: T0 + 20,
      costUsd: 0.75,
      inputTokens: 5,
      outputTokens: 7,
      cachedInputTokens: 0,
      llmCalls: 2,
      toolCalls: 0,
    });
    expect(collectRun(failedRun().history()).usage).toEqual([]);
  });

  it('collectRun() orders states as the run’s table does and gives custom states a kind from their flags, else a colour of their own', () => {
    const table = extendTable(DEFAULT_TABLE, {
      states: [{ name: 'Compacting', description: 'shrinking the context', next: ['SendingToLLM', 'Error'] }],
      edges: [['WaitingForUserInput', 'Compacting']],
    });
    const machine = new StateMachine({ table, clock: () => T0, logger: false });
    machine.transition('WaitingForUserInput', 'start');
    machine.transition('Compacting', 'too long');
    machine.transition('SendingToLLM', 'compacted');
    const facts = collectRun(machine.history());
    // Without a meta line the default table orders the states; the custom one comes after.
    expect(facts.order.slice(-1)).toEqual(['Compacting']);
    expect(facts.kinds['Compacting']).toMatch(/^other-\d$/);
    expect(facts.kinds).toMatchObject({
      SendingToLLM: 'llm',
      RunningTool: 'tool',
      CheckingBudget: 'check',
      EndOfTurn: 'end',
      Error: 'error',
      Cancelled: 'error',
      Ready: 'idle',
    });
  });

  it('collectRun() takes outcome, usage and retries from runFacts, for old files and new', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sm-collect-'));
    try {
      for (const [name, text] of Object.entries({
        OLD_BUDGET_RUN,
        NEW_BUDGET_RUN,
        OLD_CUSTOM_TABLE_RUN,
        OLD_NO_META_RUN,
      })) {
        const { entries } = await loadHistory(writeHistoryFile(dir, `${name}.jsonl`, text));
        const facts = runFacts(entries);
        const collected = collectRun(entries);
        expect({
          outcome: collected.outcome,
          usage: collected.usage,
          finalUsage: collected.finalUsage,
          retried: [...collected.retried],
        }).toEqual({
          outcome: facts.outcome,
          usage: facts.usage,
          finalUsage: facts.finalUsage,
          retried: facts.retried,
        });
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('collectRun() names a bad item', () => {
    expect(() => collectRun([rec(1, 'Ready', 'WaitingForUserInput'), { nope: true } as never])).toThrow(/items\[1\]/);
  });
});
