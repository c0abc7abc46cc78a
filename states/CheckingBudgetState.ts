import { AgentState } from './AgentState';
import { State, type StateName } from './StateName';

/** Agent verifies if budget limits are exceeded. */
export class CheckingBudgetState extends AgentState<StateName> {
  readonly name = State.CheckingBudget;
  readonly description = 'Agent verifies if budget limits are exceeded';
  readonly next = [State.GatheringAdditionalMessages, State.BudgetExceeded] as const;
  override readonly activity = 'check' as const;
}
