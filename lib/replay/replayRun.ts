import { AgentWithStateMachine } from '../agent/AgentWithStateMachine';
import { assertBudgetLimits, type BudgetLimits } from '../agent/BudgetLimits';
import type { TurnStop } from '../agent/TurnOutcome';
import type { UsageTotals } from '../agent/UsageTotals';
import type { JournalLineRead } from '../history/HistoryEntry';
import { InvalidArgumentError } from '../machine/InvalidArgumentError';
import type { TransitionRecord } from '../machine/TransitionRecord';
import { replayLoop } from './replayLoop';

/** A move, as a replay compares it: where from, where to, and whether it was forced. */
export interface ReplayedMove {
  seq: number;
  from: string;
  to: string;
  forced: boolean;
  description: string;
}

/** What `replayRun` found. */
export interface ReplayReport {
  /** The replay made the recorded moves, in order, and no other. */
  reproduced: boolean;
  /** Moves in the file, and moves the replay made. */
  recordedMoves: number;
  replayedMoves: number;
  /** The first place where the two differ (index 0-based into the moves; one side is absent when the other ran out). */
  firstDifference?: { index: number; recorded?: ReplayedMove; replayed?: ReplayedMove };
  /** Why the replay stopped following the journal, when it did: `diverged at LLM call N: …`. */
  diverged?: string;
  /** How each replayed turn ended. */
  outcomes: TurnStop[];
  /** With `budget`: the move where the limits stopped the replay, and why. */
  stoppedBy?: { move: ReplayedMove; message: string };
  /** What the replay spent, from the recorded usage and costs. */
  usage: UsageTotals;
  /** LLM attempts answered from the journal. */
  llmCalls: number;
}

/** Options of `replayRun(history, options)`. */
export interface ReplayRunOptions {
  /** Limits to replay under: where would the run have stopped? Wall time is not replayed (the replay takes none). */
  budget?: BudgetLimits;
}

/**
 * Re-drives a recorded run from its journal through a new `AgentWithStateMachine`, with no
 * network and no tools (`replayLoop`), and compares the moves it makes with the file's. Under
 * other limits (`budget`), it shows where the run would have stopped. Needs a file written
 * with `journal: true`.
 */
export async function replayRun(
  history: { records: readonly TransitionRecord<string>[]; journal: readonly JournalLineRead[] },
  options: ReplayRunOptions = {},
): Promise<ReplayReport> {
  if (
    typeof history !== 'object' ||
    history === null ||
    !Array.isArray(history.records) ||
    !Array.isArray(history.journal)
  ) {
    throw new InvalidArgumentError('history', 'a loaded history { records, journal } (loadHistory(file))', history);
  }
  const { budget } = options;
  assertBudgetLimits(budget, 'options.budget');
  if (budget?.maxWallMs !== undefined)
    throw new InvalidArgumentError(
      'options.budget.maxWallMs',
      'left out: a replay takes no wall time, so a wall-time limit cannot be replayed',
      budget.maxWallMs,
    );
  const replay = replayLoop(history.journal);
  let tick = history.records[0]?.at ?? 0;
  const agent = new AgentWithStateMachine(replay.loop, {
    logger: false,
    maxHistorySize: Infinity,
    retry: replay.retry,
    pricing: replay.pricing,
    onUnknownCost: 'ignore',
    sleep: async () => undefined,
    // Time stands still in a replay; each reading one ms on, so that times keep their order.
    clock: () => tick++,
    ...(budget === undefined ? {} : { budget }),
  });
  const outcomes: TurnStop[] = [];
  for (const input of replay.inputs) {
    const result = await agent.runTurn(input);
    outcomes.push(result.outcome);
    if (replay.diverged !== undefined || result.outcome === 'budget_exceeded') break;
  }
  const recorded = history.records.map(move);
  const replayed = agent.machine.history().map(move);
  let index = 0;
  while (index < recorded.length && index < replayed.length && same(recorded[index]!, replayed[index]!)) index++;
  const reproduced = index === recorded.length && index === replayed.length;
  const report: ReplayReport = {
    reproduced,
    recordedMoves: recorded.length,
    replayedMoves: replayed.length,
    outcomes,
    usage: agent.usage,
    llmCalls: replay.llmCalls,
  };
  if (!reproduced) {
    const difference: NonNullable<ReplayReport['firstDifference']> = { index };
    if (recorded[index] !== undefined) difference.recorded = recorded[index];
    if (replayed[index] !== undefined) difference.replayed = replayed[index];
    report.firstDifference = difference;
  }
  if (replay.diverged !== undefined) report.diverged = replay.diverged.message;
  if (budget !== undefined && outcomes.at(-1) === 'budget_exceeded') {
    const last = replayed.at(-1)!;
    report.stoppedBy = { move: last, message: last.description };
  }
  return report;
}

function move(r: TransitionRecord<string>): ReplayedMove {
  return { seq: r.seq, from: r.from, to: r.to, forced: r.forced, description: r.description };
}

/** The same move: the same states and forcing. Descriptions may carry times and are not compared. */
function same(a: ReplayedMove, b: ReplayedMove): boolean {
  return a.from === b.from && a.to === b.to && a.forced === b.forced;
}
