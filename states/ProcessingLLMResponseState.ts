import { AgentState } from './AgentState';
import { State, type StateName } from './StateName';

/** Agent is processing a response from the LLM. */
export class ProcessingLLMResponseState extends AgentState<StateName> {
  readonly name = State.ProcessingLLMResponse;
  readonly description = 'Agent is processing a response from the LLM';
  readonly next = [State.EndOfTurn, State.ToolUseRequested, State.Error] as const;
  override readonly activity = 'llm_response' as const;
}
