import { AgentState } from './AgentState';
import { State, type StateName } from './StateName';

/** Budget limit was reached. */
export class BudgetExceededState extends AgentState<StateName> {
  readonly name = State.BudgetExceeded;
  readonly description = 'Budget limit was reached';
  readonly next = [State.WaitingForUserInput] as const;
  override readonly isTerminal = true;
  override readonly isError = true;
}
