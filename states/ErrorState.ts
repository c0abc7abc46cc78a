import { AgentState } from './AgentState';
import { State, type StateName } from './StateName';

/** An error occurred during processing. */
export class ErrorState extends AgentState<StateName> {
  readonly name = State.Error;
  readonly description = 'An error occurred during processing';
  readonly next = [State.WaitingForUserInput] as const;
  override readonly isTerminal = true;
  override readonly isError = true;
}
