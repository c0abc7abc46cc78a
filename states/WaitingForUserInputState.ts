import { AgentState } from './AgentState';
import { State, type StateName } from './StateName';

/** Agent is waiting for a user message to start a turn. */
export class WaitingForUserInputState extends AgentState<StateName> {
  readonly name = State.WaitingForUserInput;
  readonly description = 'Agent is waiting for a user message to start a turn';
  readonly next = [State.SendingToLLM, State.Error] as const;
  override readonly activity = 'idle' as const;
}
