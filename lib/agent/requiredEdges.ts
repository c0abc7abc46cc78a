import type { TableIssue } from '../machine/checkTable';
import { InvalidTableError } from '../machine/InvalidTableError';
import { isDeeplyFrozen } from '../machine/isDeeplyFrozen';
import { tableEdges, type TransitionTable } from '../machine/TransitionTable';
import { DEFAULT_TABLE } from '../machine/transitions';
import { approvalEdges, compactionEdges, ExtensionState, stallEdges, wrapUpEdges } from './extensionStates';

/** Which extensions the adapter's options switch on. */
export interface ExtensionUse {
  approval: boolean;
  timeout: boolean;
  compaction?: boolean;
  stall?: boolean;
  wrapUp?: boolean;
}

/**
 * Every edge the adapter may ask for, given its options: the sixteen-state flow's (its legal
 * moves) and those of the extensions in use.
 */
export function requiredEdges(use: ExtensionUse): Array<readonly [string, string]> {
  return [
    ...tableEdges(DEFAULT_TABLE),
    ...(use.approval ? approvalEdges(use.timeout) : []),
    ...(use.compaction === true ? compactionEdges() : []),
    ...(use.stall === true ? stallEdges() : []),
    ...(use.wrapUp === true ? wrapUpEdges() : []),
  ];
}

/**
 * Throws `InvalidTableError` naming each edge of `edges` that `table` lacks (and a timeout
 * state that is not terminal), so a table that cannot carry the adapter's moves fails at
 * construction, not in the middle of a turn.
 */
export function assertTableHasEdges(
  table: TransitionTable<string>,
  edges: ReadonlyArray<readonly [string, string]>,
): void {
  const issues: TableIssue[] = edges
    .filter(([from, to]) => !(table.states[from]?.next ?? []).includes(to))
    .map(([from, to]) => ({
      code: 'missing_edge' as const,
      from,
      to,
      message: `The adapter's options need the edge ${from} → ${to}, which the table lacks`,
    }));
  const timedOut = table.states[ExtensionState.ApprovalTimedOut];
  if (edges.some(([, to]) => to === ExtensionState.ApprovalTimedOut) && timedOut?.isTerminal !== true)
    issues.push({
      code: 'not_terminal',
      state: ExtensionState.ApprovalTimedOut,
      message: `${ExtensionState.ApprovalTimedOut} must be a terminal state: it ends the turn`,
    });
  const stopped = table.states[ExtensionState.StallStopped];
  if (edges.some(([, to]) => to === ExtensionState.StallStopped) && stopped?.isTerminal !== true)
    issues.push({
      code: 'not_terminal',
      state: ExtensionState.StallStopped,
      message: `${ExtensionState.StallStopped} must be a terminal state: it ends the turn`,
    });
  if (issues.length > 0) throw new InvalidTableError(issues);
}

/** The extension uses each frozen table was found to carry. */
const carried = new WeakMap<object, Set<string>>();

/**
 * `assertTableHasEdges(table, requiredEdges(use))`, done once per frozen table and use: an
 * adapter is made per run, nearly always on the same table with the same options.
 */
export function assertTableCarries(table: TransitionTable<string>, use: ExtensionUse): void {
  const key = `${use.approval}/${use.timeout}/${use.compaction === true}/${use.stall === true}/${use.wrapUp === true}`;
  const seen = carried.get(table);
  if (seen?.has(key) === true) return;
  assertTableHasEdges(table, requiredEdges(use));
  if (seen !== undefined) seen.add(key);
  else if (isDeeplyFrozen(table)) carried.set(table, new Set([key]));
}
