import { AgentState } from './AgentState';
import { State, type StateName } from './StateName';

/** Agent collects user messages that arrived during tool execution. */
export class GatheringAdditionalMessagesState extends AgentState<StateName> {
  readonly name = State.GatheringAdditionalMessages;
  readonly description = 'Agent collects user messages that arrived during tool execution';
  readonly next = [State.SendingToolResults, State.Error] as const;
  override readonly activity = 'check' as const;
}
