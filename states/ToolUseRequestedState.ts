import { AgentState } from './AgentState';
import { State, type StateName } from './StateName';

/** LLM has requested to use a tool. */
export class ToolUseRequestedState extends AgentState<StateName> {
  readonly name = State.ToolUseRequested;
  readonly description = 'LLM has requested to use a tool';
  readonly next = [State.CheckingForCancellation] as const;
  override readonly activity = 'tool' as const;
}
