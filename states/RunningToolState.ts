import { AgentState } from './AgentState';
import { State, type StateName } from './StateName';

/** Agent is executing the requested tool. */
export class RunningToolState extends AgentState<StateName> {
  readonly name = State.RunningTool;
  readonly description = 'Agent is executing the requested tool';
  readonly next = [State.CheckingGitCommits, State.Error] as const;
  override readonly activity = 'tool_run' as const;
}
