// What the framework mirrors' tests check alike: the states of a tool round trip, and the
// end of a strict-capped batch of framework runs (cap never passed, every call counted,
// every file valid, a refused run's record naming its hold).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { loadHistory, validateHistory, type BatchReport, type StateName } from '../../lib/index';

/** A tool round trip, from the turn's start to its end: the moves the adapter makes. */
export const TOOL_ROUND_TRIP: readonly StateName[] = [
  'WaitingForUserInput',
  'SendingToLLM',
  'ProcessingLLMResponse',
  'ToolUseRequested',
  'CheckingForCancellation',
  'RunningTool',
  'CheckingGitCommits',
  'CheckingBudget',
  'GatheringAdditionalMessages',
  'SendingToolResults',
  'ProcessingLLMResponse',
  'EndOfTurn',
];

/**
 * A batch under a strict `total.maxCostUsd` of `cap`, whose models answered `callsMade`
 * requests at `costPerCall` each: some runs ended, some were stopped by the budget, the cap
 * was never passed, every call was counted and charged, every history file in `dir`
 * validates with no rejected move, and a stopped run's last record names the cap and its hold.
 */
export async function expectStrictBatchWithinCap(
  report: BatchReport,
  dir: string,
  expected: { cap: number; callsMade: number; costPerCall: number },
): Promise<void> {
  const { cap, callsMade, costPerCall } = expected;
  expect(report.totals.outcomes.end_of_turn).toBeGreaterThan(0);
  expect(report.totals.outcomes.budget_exceeded).toBeGreaterThan(0);
  // Each call held its worst case before it started: the cap is never passed.
  expect(report.totals.costUsd).toBeLessThanOrEqual(cap);
  expect(report.totals.llmCalls).toBe(callsMade);
  expect(report.totals.costUsd).toBeCloseTo(callsMade * costPerCall, 10);
  for (const file of fs.readdirSync(dir).filter((f) => f.endsWith('.jsonl'))) {
    const loaded = await loadHistory(path.join(dir, file));
    expect({ file, issues: validateHistory(loaded.entries).issues, rejected: loaded.rejected }).toEqual({
      file,
      issues: [],
      rejected: [],
    });
  }
  const refused = report.runs.find((r) => r.outcome === 'budget_exceeded' && r.historyFile !== undefined)!;
  const last = (await loadHistory(refused.historyFile!)).records.at(-1)!;
  expect(last.data).toMatchObject({ limit: 'maxCostUsd', max: cap, outcome: 'budget_exceeded' });
  expect((last.data as { hold?: number }).hold).toBeGreaterThan(0);
}
