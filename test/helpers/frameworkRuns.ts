// What the framework mirrors' tests check alike: the states of a tool round trip, and the
// end of a capped batch of framework runs: a plain cap passed by at most the calls in flight,
// a strict one never; every call counted, every file valid, a refused run's record naming its hold.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { buildHtmlReport } from '../../lib/subpaths/report';
import { loadHistory, validateHistory } from '../../lib/subpaths/history';
import { type BatchReport, type StateName } from '../../lib/index';

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
  await expectFilesValid(dir);
  const refused = report.runs.find((r) => r.outcome === 'budget_exceeded' && r.historyFile !== undefined)!;
  const last = (await loadHistory(refused.historyFile!)).records.at(-1)!;
  expect(last.data).toMatchObject({ limit: 'maxCostUsd', max: cap, outcome: 'budget_exceeded' });
  expect((last.data as { hold?: number }).hold).toBeGreaterThan(0);
}

/**
 * A batch of `tasks` runs under a plain `total.maxCostUsd` of `cap`, `concurrency` at a time,
 * whose models answered `callsMade` requests at `costPerCall` each: the cap stopped it (some
 * runs ended, some did not, none started a call once it was spent, so it is passed by at most
 * one call per running task); every call was counted and charged; every run that started has
 * its file and every file validates; the batch's page lists every task.
 */
export async function expectBatchStoppedByCap(
  report: BatchReport,
  dir: string,
  expected: { tasks: number; cap: number; concurrency: number; callsMade: number; costPerCall: number },
): Promise<void> {
  const { tasks, cap, concurrency, callsMade, costPerCall } = expected;
  expect(report.totals.outcomes.end_of_turn).toBeGreaterThan(0);
  expect(report.totals.outcomes.end_of_turn).toBeLessThan(tasks);
  expect(report.totals.outcomes.budget_exceeded).toBeGreaterThan(0);
  expect(report.totals.costUsd).toBeGreaterThanOrEqual(cap);
  expect(report.totals.costUsd).toBeLessThan(cap + concurrency * costPerCall);
  expect(report.totals.llmCalls).toBe(callsMade);
  expect(report.totals.costUsd).toBeCloseTo(callsMade * costPerCall, 10);
  // One file per run that started: the ones the cap never let start have none.
  const files = await expectFilesValid(dir);
  expect(files).toBe(report.runs.filter((r) => r.historyFile !== undefined).length);
  expect(files).toBeGreaterThan(0);
  const page = await buildHtmlReport(dir);
  // The page lists every task of the batch, the ones the spent cap never started included.
  expect(page).toMatchObject({ kind: 'batch', runs: tasks, warnings: [] });
  expect(page.html).toContain('budget_exceeded');
}

/** Every history file in `dir` validates, with no rejected move; returns how many there are. */
async function expectFilesValid(dir: string): Promise<number> {
  const files = fs.readdirSync(dir).filter((f) => f.endsWith('.jsonl'));
  for (const file of files) {
    const loaded = await loadHistory(path.join(dir, file));
    expect({ file, issues: validateHistory(loaded.entries).issues, rejected: loaded.rejected }).toEqual({
      file,
      issues: [],
      rejected: [],
    });
  }
  return files.length;
}
