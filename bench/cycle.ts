// The workload every candidate runs: the original's tool-use turn, 13 moves that end where
// they start, so the cycle repeats forever. Descriptions are shared constant strings, as a
// real loop's would be.
import { State, type StateName } from '../states/StateName';
import { TRANSITIONS } from '../lib/machine/transitions';

export interface Move {
  readonly from: StateName;
  readonly to: StateName;
  readonly description: string;
}

const S = State;

/** Ready → WaitingForUserInput, once, before the cycle starts. */
export const START: Move = { from: S.Ready, to: S.WaitingForUserInput, description: 'machine started' };

/** The tool-use turn: WaitingForUserInput → … → EndOfTurn → WaitingForUserInput. */
export const CYCLE: readonly Move[] = Object.freeze(
  (
    [
      [S.WaitingForUserInput, S.SendingToLLM, 'user message received'],
      [S.SendingToLLM, S.ProcessingLLMResponse, 'LLM replied'],
      [S.ProcessingLLMResponse, S.ToolUseRequested, 'LLM asked for a tool'],
      [S.ToolUseRequested, S.CheckingForCancellation, 'checking for cancellation'],
      [S.CheckingForCancellation, S.RunningTool, 'not cancelled; running the tool'],
      [S.RunningTool, S.CheckingGitCommits, 'tool finished'],
      [S.CheckingGitCommits, S.RunningAutoformatters, 'new commits found'],
      [S.RunningAutoformatters, S.CheckingBudget, 'formatters done'],
      [S.CheckingBudget, S.GatheringAdditionalMessages, 'within budget'],
      [S.GatheringAdditionalMessages, S.SendingToolResults, 'messages gathered'],
      [S.SendingToolResults, S.ProcessingLLMResponse, 'tool results sent'],
      [S.ProcessingLLMResponse, S.EndOfTurn, 'LLM ended its turn'],
      [S.EndOfTurn, S.WaitingForUserInput, 'waiting for the user'],
    ] as const
  ).map(([from, to, description]) => Object.freeze({ from, to, description })),
);

export const MOVES_PER_CYCLE = CYCLE.length;

/** The 26 edges of the sixteen-state table, as [from, to] pairs, from the library's own data. */
export const EDGES: readonly (readonly [StateName, StateName])[] = Object.freeze(
  (Object.keys(TRANSITIONS) as StateName[]).flatMap((from) => TRANSITIONS[from].map((to) => [from, to] as const)),
);

/** Checks that the cycle is closed and legal, so no candidate is timed on a broken workload. */
export function assertCycle(): void {
  const edgeSet = new Set(EDGES.map(([f, t]) => `${f}→${t}`));
  if (EDGES.length !== 26) throw new Error(`expected 26 edges, the table has ${EDGES.length}`);
  let at: StateName = START.to;
  for (const move of CYCLE) {
    if (move.from !== at) throw new Error(`cycle broken at ${move.from} (machine would be in ${at})`);
    if (!edgeSet.has(`${move.from}→${move.to}`))
      throw new Error(`cycle move ${move.from}→${move.to} is not in the table`);
    at = move.to;
  }
  if (at !== START.to || MOVES_PER_CYCLE !== 13) throw new Error('the cycle must be 13 moves ending where it starts');
}
