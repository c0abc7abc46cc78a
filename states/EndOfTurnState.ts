import { AgentState } from './AgentState';
import { State, type StateName } from './StateName';

/** Processing completed without tool use, turn ends. */
export class EndOfTurnState extends AgentState<StateName> {
  readonly name = State.EndOfTurn;
  readonly description = 'Processing completed without tool use, turn ends';
  readonly next = [State.WaitingForUserInput] as const;
  override readonly isTerminal = true;
}
