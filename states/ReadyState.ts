import { AgentState } from './AgentState';
import { State, type StateName } from './StateName';

/** Initial state when the agent is initialized and ready to operate. */
export class ReadyState extends AgentState<StateName> {
  readonly name = State.Ready;
  readonly description = 'Initial state when the agent is initialized and ready to operate';
  readonly next = [State.WaitingForUserInput] as const;
  override readonly activity = 'idle' as const;
}
