import { AgentState } from './AgentState';
import { State, type StateName } from './StateName';

/** Agent runs code formatters on new commits. */
export class RunningAutoformattersState extends AgentState<StateName> {
  readonly name = State.RunningAutoformatters;
  readonly description = 'Agent runs code formatters on new commits';
  readonly next = [State.CheckingBudget] as const;
  override readonly activity = 'tool' as const;
}
