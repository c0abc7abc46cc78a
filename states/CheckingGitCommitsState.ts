import { AgentState } from './AgentState';
import { State, type StateName } from './StateName';

/** Agent checks for new git commits after tool execution. */
export class CheckingGitCommitsState extends AgentState<StateName> {
  readonly name = State.CheckingGitCommits;
  readonly description = 'Agent checks for new git commits after tool execution';
  readonly next = [State.RunningAutoformatters, State.CheckingBudget] as const;
  override readonly activity = 'check' as const;
}
