import { formatSummary } from '../../lib/history/formatSummary';
import { AgentWithStateMachine, createScriptedAgent } from '../../lib/index';
import type { HistoryEntry } from '../../lib/history/HistoryEntry';
import { toHistoryTableInfo } from '../../lib/history/HistoryTableInfo';
import { summarizeHistory } from '../../lib/history/summarizeHistory';
import { DEFAULT_TABLE } from '../../lib/machine/transitions';
import { failedRun, scriptedMachine, T0, TOOL_TURN } from '../fixtures/agentRun';

const meta: HistoryEntry = {
  kind: 'meta',
  line: 1,
  table: DEFAULT_TABLE,
  meta: { type: 'meta', version: '0.1.0', runId: 'task-42', startedAt: T0, table: toHistoryTableInfo(DEFAULT_TABLE) },
};

describe('formatSummary()', () => {
  it('puts the failure first: where, why, the data, the moves up to it; then path, time, forced, rejected, final state', () => {
    const records = failedRun()
      .history()
      .map((record, i): HistoryEntry => ({ kind: 'record', line: i + 2, record }));
    const rejected: HistoryEntry = {
      kind: 'rejected',
      line: 17,
      rejected: {
        type: 'rejected',
        from: 'SendingToLLM',
        to: 'BudgetExceeded',
        allowed: ['ProcessingLLMResponse', 'Error'],
        description: 'over budget',
        at: T0 + 40000,
        seq: 14,
      },
    };
    const text = formatSummary(summarizeHistory([meta, ...records, rejected], { lastMoves: 4 }), { file: 'run.jsonl' });
    expect(text).toMatchInlineSnapshot(`
"Run task-42 (agent-state-machine 0.1.0) — run.jsonl
started 2025-01-01 12:00:00.000 +00:00, 15 moves in 2 turns over 1 minute

FAILED: the run ended in Error at seq 15, line 16 (turn 2, 12:01:00.114)
  where: SendingToLLM → Error, after 30.0 s in SendingToLLM
  why:   LLM request failed
  data:  {"status":529,"message":"overloaded"}
  The moves up to it:
  seq  time          move                                in from  description
   12  12:00:21.113  ProcessingLLMResponse → EndOfTurn   30 ms    answered
   13  12:00:21.114  EndOfTurn → WaitingForUserInput     1 ms     turn over
   14  12:00:30.114  WaitingForUserInput → SendingToLLM  9.0 s    user: deploy
   15  12:01:00.114  SendingToLLM → Error                30.0 s   LLM request failed  {"status":529,"message":"overloaded"}

Path: 2 turns — 1 EndOfTurn, 1 Error
  turn  seq    duration  moves  outcome    last move
     1  2–12   19.1 s       11  EndOfTurn  answered
     2  14–15  30.0 s        2  Error      LLM request failed

Time per state (1 minute in all):
  state                        visits   total  share  median     max
  SendingToLLM                      2  33.0 s    55%  16.5 s  30.0 s
  RunningTool                       1  12.0 s    20%  12.0 s  12.0 s
  WaitingForUserInput               2  11.0 s    18%   5.5 s   9.0 s
  SendingToolResults                1   4.0 s     7%   4.0 s   4.0 s
  ProcessingLLMResponse             2   80 ms    <1%   40 ms   50 ms
  CheckingGitCommits                1   20 ms    <1%   20 ms   20 ms
  Ready                             1    5 ms    <1%    5 ms    5 ms
  CheckingBudget                    1    3 ms    <1%    3 ms    3 ms
  CheckingForCancellation           1    2 ms    <1%    2 ms    2 ms
  GatheringAdditionalMessages       1    2 ms    <1%    2 ms    2 ms
  EndOfTurn                         1    1 ms    <1%    1 ms    1 ms
  ToolUseRequested                  1    1 ms    <1%    1 ms    1 ms

Forced moves: none
Rejected moves: 1
  after seq 14  12:00:40.000  SendingToLLM → BudgetExceeded  "over budget"  (allowed: ProcessingLLMResponse, Error)
Final state: Error (since seq 15, 12:01:00.114)"
`);
  });

  it('shows a turn that started on a spent budget as budget_exceeded, not as a plain Error', async () => {
    const adapter = new AgentWithStateMachine(
      createScriptedAgent({ replies: [{ text: 'a', usage: { costUsd: 1 } }] }),
      { logger: false, maxHistorySize: Infinity, budget: { maxCostUsd: 0.5, strict: false } },
    );
    await adapter.runTurn('1');
    await adapter.runTurn('2');
    const summary = summarizeHistory(adapter.machine.history());
    expect(summary.turns.list.map((t) => t.standsFor)).toEqual([undefined, 'budget_exceeded']);
    const text = formatSummary(summary);
    expect(text).toMatch(/FAILED: the run ended in Error \(budget_exceeded\) at seq \d+/);
    expect(text).toMatch(
      /Error \(budget_exceeded\)\s+budget exceeded: \$1\.0000 of \$0\.5000 after 1 LLM call; no LLM call made/,
    );
  });

  it('says when the history stops inside a turn, and lists the last moves', () => {
    const run = scriptedMachine();
    run.play([['WaitingForUserInput', 'start', 1], ...TOOL_TURN.slice(0, 5)]);
    const text = formatSummary(summarizeHistory(run.machine.history(), { lastMoves: 2 }));
    expect(text).toMatchInlineSnapshot(`
"Run
started 2025-01-01 12:00:00.000 +00:00, 6 moves in 1 turn over 5.1 s

INCOMPLETE, ended without a terminal move (interrupted?): the history ends inside turn 1, in RunningTool since 12:00:05.054 (seq 6).
  The run was killed, crashed, or is still going. Its last moves:
  seq  time          move                                        in from  description
    5  12:00:05.052  ToolUseRequested → CheckingForCancellation  1 ms     not cancelled
    6  12:00:05.054  CheckingForCancellation → RunningTool       2 ms     bash npm test

Path: 1 turn — 1 unfinished
  turn  seq  duration  moves  outcome       last move
     1  2–6  3.1 s         5  (unfinished)  bash npm test

Time per state (5.1 s in all):
  state                    visits  total  share  median    max
  SendingToLLM                  1  3.0 s    59%   3.0 s  3.0 s
  WaitingForUserInput           1  2.0 s    40%   2.0 s  2.0 s
  ProcessingLLMResponse         1  50 ms    <1%   50 ms  50 ms
  CheckingForCancellation       1   2 ms    <1%    2 ms   2 ms
  Ready                         1   1 ms    <1%    1 ms   1 ms
  ToolUseRequested              1   1 ms    <1%    1 ms   1 ms

Forced moves: none
Rejected moves: none
Final state: RunningTool (since seq 6, 12:00:05.054)"
`);
  });

  it('says OK when the last turn ended well, and lists only the latest turns', () => {
    const run = scriptedMachine();
    run.play([['WaitingForUserInput', 'start', 1], ...TOOL_TURN, ...TOOL_TURN, ...TOOL_TURN]);
    const text = formatSummary(summarizeHistory(run.machine.history()), { turns: 1 });
    expect(text.split('\n').slice(0, 9).join('\n')).toMatchInlineSnapshot(`
"Run
started 2025-01-01 12:00:00.000 +00:00, 37 moves in 3 turns over 1 minute 3 seconds

OK: the last turn (3) ended in EndOfTurn.

Path: 3 turns — 3 EndOfTurn
  (2 earlier turns not shown)
  turn  seq    duration  moves  outcome    last move
     3  26–36  19.1 s       11  EndOfTurn  answered"
`);
  });

  it('names a value that is not a summary, and bad options', () => {
    expect(() => formatSummary(null as never)).toThrow(
      'Expected `summary` to be a HistorySummary from summarizeHistory(), got `null`',
    );
    expect(() => formatSummary({ status: 'ok' } as never)).toThrow(
      'Expected `summary` to be a HistorySummary from summarizeHistory(), got `{"status":"ok"}` (object)',
    );
    expect(() => formatSummary(summarizeHistory([]), null as never)).toThrow(
      'Expected `options` to be an object, got `null`',
    );
  });

  it('says so when nothing was recorded', () => {
    expect(formatSummary(summarizeHistory([]), { file: 'empty.jsonl' })).toBe(
      'Run — empty.jsonl\nNo transitions recorded.',
    );
  });
});
