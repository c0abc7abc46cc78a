import type { TransitionTable } from './TransitionTable';

/** Pure check: whether `table` allows `from` → `to`. Unknown names are simply not allowed. */
export function canTransition(table: TransitionTable, from: string, to: string): boolean {
  const spec = Object.prototype.hasOwnProperty.call(table.states, from) ? table.states[from] : undefined;
  return spec !== undefined && spec.next.includes(to);
}
