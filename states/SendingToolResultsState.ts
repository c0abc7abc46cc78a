import { AgentState } from './AgentState';
import { State, type StateName } from './StateName';

/** Agent sends tool results back to the LLM. */
export class SendingToolResultsState extends AgentState<StateName> {
  readonly name = State.SendingToolResults;
  readonly description = 'Agent sends tool results back to the LLM';
  readonly next = [State.ProcessingLLMResponse, State.Error] as const;
  override readonly activity = 'llm_request' as const;
}
