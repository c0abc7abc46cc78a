import { AgentState } from './AgentState';
import { State, type StateName } from './StateName';

/** Agent is sending message(s) to the LLM. */
export class SendingToLLMState extends AgentState<StateName> {
  readonly name = State.SendingToLLM;
  readonly description = 'Agent is sending message(s) to the LLM';
  readonly next = [State.ProcessingLLMResponse, State.Error] as const;
  override readonly activity = 'llm_request' as const;
}
