import { AgentWithStateMachine } from '../agent/AgentWithStateMachine';
import { assertBudgetLimits, type BudgetLimits } from '../agent/BudgetLimits';
import type { TurnStop } from '../agent/TurnOutcome';
import type { UsageTotals } from '../agent/UsageTotals';
import type { JournalLineRead } from '../history/HistoryEntry';
import { InvalidArgumentError } from '../machine/InvalidArgumentError';
import type { TransitionRecord } from '../machine/TransitionRecord';
import { MoveComparison } from './MoveComparison';
import { noLLMCall, replayFeedLoop } from './replayLoop';
import { ReplayFeed } from './ReplayFeed';

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
  assertReplayOptions(options);
  const moves = new MoveComparison<ReplayedMove>();
  const feed = ReplayFeed.ofArrays(history, (r) => moves.addRecorded(move(r)));
  if (feed.llmLines === 0) throw noLLMCall(history.journal);
  return replayFromFeed(feed, moves, options);
}

/** Checks `replayRun`'s options: limits that can be replayed. */
export function assertReplayOptions(options: ReplayRunOptions): void {
  const { budget } = options;
  assertBudgetLimits(budget, 'options.budget');
  if (budget?.maxWallMs !== undefined)
    throw new InvalidArgumentError(
      'options.budget.maxWallMs',
      'left out: a replay takes no wall time, so a wall-time limit cannot be replayed',
      budget.maxWallMs,
    );
}

/**
 * Re-drives the run a feed holds, comparing its moves with the recorded ones (which the feed
 * hands to `moves` as it reads them) as both come in: the file is read as far as the replay has
 * got, and only what one side is ahead by is held. When the replay stops, the rest of the file
 * is read to count its moves. Resolves to the report `replayRun` gives.
 */
export async function replayFromFeed(
  feed: ReplayFeed,
  moves: MoveComparison<ReplayedMove>,
  options: ReplayRunOptions,
): Promise<ReplayReport> {
  const { budget } = options;
  const replay = replayFeedLoop(feed);
  let tick = feed.firstAt ?? 0;
  const agent = new AgentWithStateMachine(replay.loop, {
    logger: false,
    retry: replay.retry,
    pricing: replay.pricing,
    onUnknownCost: 'ignore',
    sleep: async () => undefined,
    // Time stands still in a replay; each reading one ms on, so that times keep their order.
    clock: () => tick++,
    ...(budget === undefined ? {} : { budget }),
  });
  // Compared as they are made, not kept: the machine's own history is bounded.
  for (const r of agent.machine.history()) moves.addReplayed(move(r));
  agent.machine.onTransition((r) => moves.addReplayed(move(r)));
  const outcomes: TurnStop[] = [];
  for (let input = await feed.nextInput(); input !== undefined; input = await feed.nextInput()) {
    const result = await agent.runTurn(input);
    outcomes.push(result.outcome);
    if (replay.state.diverged !== undefined || result.outcome === 'budget_exceeded') break;
  }
  await feed.drain();
  const difference = moves.difference();
  const report: ReplayReport = {
    reproduced: difference === undefined,
    recordedMoves: moves.recordedMoves,
    replayedMoves: moves.replayedMoves,
    outcomes,
    usage: agent.usage,
    llmCalls: replay.state.llmCalls,
  };
  if (difference !== undefined) report.firstDifference = difference;
  if (replay.state.diverged !== undefined) report.diverged = replay.state.diverged.message;
  if (budget !== undefined && outcomes.at(-1) === 'budget_exceeded') {
    const last = moves.lastReplayed!;
    report.stoppedBy = { move: last, message: last.description };
  }
  return report;
}

/** A record as a replay compares it. */
export function move(r: TransitionRecord<string>): ReplayedMove {
  return { seq: r.seq, from: r.from, to: r.to, forced: r.forced, description: r.description };
}
