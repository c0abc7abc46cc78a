import { AgentState } from './AgentState';
import { State, type StateName } from './StateName';

/** Operation was cancelled by the user. */
export class CancelledState extends AgentState<StateName> {
  readonly name = State.Cancelled;
  readonly description = 'Operation was cancelled by the user';
  readonly next = [State.WaitingForUserInput] as const;
  override readonly isTerminal = true;
  override readonly isError = true;
}
