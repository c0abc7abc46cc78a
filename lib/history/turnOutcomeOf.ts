import { dataField } from '../internal/dataField';
import { TURN_OUTCOMES, type TurnOutcome } from '../internal/turnOutcomes';
import { State } from '../../states/StateName';

// A terminal record's `data.outcome` names one of the adapter's `TurnOutcome`s.
const RECORDED: ReadonlySet<string> = new Set<string>(TURN_OUTCOMES);

// Files written before terminal records carried `outcome` say it only by the state reached. These
// are the default table's terminal states, read as the adapter meant them; it is the old files'
// vocabulary, not a rule about tables, so a custom terminal state simply names itself.
const BY_STATE: ReadonlyMap<string, TurnOutcome> = new Map<string, TurnOutcome>([
  [State.EndOfTurn, 'end_of_turn'],
  [State.Cancelled, 'cancelled'],
  [State.BudgetExceeded, 'budget_exceeded'],
  [State.Error, 'error'],
]);

/** How a turn ended, as a move into a terminal state tells it. */
export interface MoveOutcome {
  /** A `TurnOutcome`, or the name of a custom terminal state that records none. */
  readonly outcome: string;
  /** True when the record's `data.outcome` said it; false when it comes from the state alone. */
  readonly recorded: boolean;
}

/**
 * How a turn that ended with a move into terminal state `to`, carrying `data`, ended: the
 * record's `data.outcome` when it names one of the outcomes (the adapter writes it on every such
 * move, and already did where the state cannot say it: a turn on a spent budget moves to Error),
 * else what the state says by itself. Pure.
 */
export function turnOutcomeOf(to: string, data: unknown): MoveOutcome {
  const said = dataField(data, 'outcome');
  if (typeof said === 'string' && RECORDED.has(said)) return { outcome: said, recorded: true };
  return { outcome: stateOutcome(to), recorded: false };
}

/** What reaching terminal state `to` says by itself: the default table's outcome for it, else its own name. */
export function stateOutcome(to: string): string {
  return BY_STATE.get(to) ?? to;
}
