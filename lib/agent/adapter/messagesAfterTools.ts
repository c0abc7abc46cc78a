import { State } from '../../../states/StateName';
import { messageOf } from '../../internal/messageOf';
import type { Settled } from '../../internal/settleWithGrace';
import { plural } from '../../internal/text';
import type { Budget } from '../money/Budget';
import { stringListProblem } from '../turn/checkAgentOutput';
import { optionalList } from './optionalList';
import type { ToolSummary } from '../calls/runTools';
import { OperationError } from '../TurnError';
import type { TurnMoves } from './TurnMoves';
import type { TurnResult } from '../TurnResult';
import type { TurnScope } from '../turn/TurnScope';
import { budgetError, limitData } from '../money/spentRecord';
import { budgetHasRoom, NO_NEW_COMMITS, toolsFinished } from '../turn/turnEvents';

/** What an agent without `gatherAdditionalMessages` gathers; only ever read. */
const NOTHING_GATHERED: Settled<string[]> = { kind: 'value', value: Object.freeze([]) as unknown as string[] };

/**
 * The rest of a tool round once its tools ran: CheckingGitCommits, the formatters when there
 * are new commits, CheckingBudget and GatheringAdditionalMessages. Returns the messages to send
 * with the tool results (the formatters' after the gathered ones), or the turn's result when
 * one of these steps ended it. `own` is the agent's own budget: records carry its usage.
 */
export async function messagesAfterTools(
  scope: TurnScope,
  moves: TurnMoves,
  own: Budget,
  summary: ToolSummary[],
): Promise<string[] | TurnResult> {
  const { agent } = scope.settings;
  const { meter, signal } = scope;
  moves.move(State.CheckingGitCommits, toolsFinished(summary));

  const formatterMessages: string[] = [];
  // An agent without the operation has no commits to check.
  const commits =
    agent.checkGitCommits == null
      ? { kind: 'list' as const, list: [] }
      : await optionalList(scope, 'checkGitCommits', (ctx) => agent.checkGitCommits?.(ctx));
  if (commits.kind === 'violation') return moves.violation('checkGitCommits', commits.problem, commits.value);
  if (signal.aborted) return moves.cancel(State.CheckingGitCommits);
  if (commits.list.length > 0) {
    moves.move(State.RunningAutoformatters, {
      description: `${plural(commits.list.length, 'new commit')}: running formatters`,
      data: { commits: commits.list },
    });
    const formatted = await optionalList(
      scope,
      'runAutoformatters',
      (ctx) => agent.runAutoformatters?.(commits.list, ctx),
      true,
    );
    if (formatted.kind === 'violation') return moves.violation('runAutoformatters', formatted.problem, formatted.value);
    if (signal.aborted) return moves.cancel(State.RunningAutoformatters);
    formatterMessages.push(...formatted.list);
    const data =
      formatted.failure === undefined
        ? { messages: formatted.list.length }
        : { messages: formatted.list.length, formatterError: formatted.failure };
    moves.move(State.CheckingBudget, { description: 'formatters done', data });
  } else {
    moves.move(
      State.CheckingBudget,
      commits.failure === undefined
        ? NO_NEW_COMMITS
        : { description: NO_NEW_COMMITS, data: { gitError: commits.failure } },
    );
  }

  const spent = scope.settings.recording?.serving === true ? undefined : meter.spent();
  if (spent !== undefined)
    return moves.end(State.BudgetExceeded, spent.message, limitData(spent), 'budget_exceeded', {
      error: budgetError(spent),
    });
  if (signal.aborted) return moves.cancel(State.CheckingBudget);
  moves.move(State.GatheringAdditionalMessages, budgetHasRoom(own.usage));

  const gathered =
    agent.gatherAdditionalMessages == null
      ? NOTHING_GATHERED
      : await scope.settle((ctx) => agent.gatherAdditionalMessages?.(ctx) ?? Promise.resolve([]));
  if (gathered.kind === 'abandoned' || signal.aborted) return moves.cancel(State.GatheringAdditionalMessages);
  if (gathered.kind === 'threw')
    return moves.failed(new OperationError('gatherAdditionalMessages', gathered.error), {
      error: messageOf(gathered.error),
    });
  const problem = stringListProblem(gathered.value);
  if (problem !== undefined) return moves.violation('gatherAdditionalMessages', problem, gathered.value);
  // formatterMessages is this round's own array: it can be sent as it is when nothing was gathered.
  return gathered === NOTHING_GATHERED ? formatterMessages : [...(gathered.value as string[]), ...formatterMessages];
}
