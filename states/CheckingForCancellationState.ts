import { AgentState } from './AgentState';
import { State, type StateName } from './StateName';

/** Agent checks if user requested cancellation. */
export class CheckingForCancellationState extends AgentState<StateName> {
  readonly name = State.CheckingForCancellation;
  readonly description = 'Agent checks if user requested cancellation';
  readonly next = [State.RunningTool, State.Cancelled] as const;
  override readonly activity = 'check' as const;
}
