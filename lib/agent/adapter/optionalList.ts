import { messageOf } from '../../internal/messageOf';
import { safeLog } from '../AgentLogger';
import type { OperationContext } from '../AgentLoop';
import { stringListProblem } from '../turn/checkAgentOutput';
import type { TurnScope } from '../turn/TurnScope';

/** What an optional list operation gave: its strings (and why it gave none, if it threw), or a value that breaks the contract. */
export type OptionalList =
  { kind: 'list'; list: string[]; failure?: string } | { kind: 'violation'; problem: string; value: unknown };

/**
 * Runs an optional operation returning strings (git commits, formatter messages). A throw is
 * not fatal — CheckingGitCommits and RunningAutoformatters have no way to Error in the table —
 * so it is returned as `failure` (the next record's data keeps it) and logged; a malformed value
 * is a contract violation. `allowVoid` takes undefined as an empty list.
 */
export async function optionalList(
  scope: TurnScope,
  operation: string,
  invoke: (ctx: OperationContext) => Promise<string[] | void> | undefined,
  allowVoid = false,
): Promise<OptionalList> {
  const settled = await scope.settle((ctx) => invoke(ctx) ?? Promise.resolve([]));
  if (settled.kind === 'abandoned') return { kind: 'list', list: [] };
  if (settled.kind === 'threw') {
    const failure = messageOf(settled.error);
    safeLog(scope.settings.logger, 'warn', `${operation} failed: ${failure}; going on without it`, {
      turn: scope.turn,
    });
    return { kind: 'list', list: [], failure };
  }
  const problem = stringListProblem(settled.value, allowVoid);
  if (problem !== undefined) return { kind: 'violation', problem, value: settled.value };
  return { kind: 'list', list: (settled.value ?? []) as string[] };
}
