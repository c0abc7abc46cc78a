import type { TableIssue } from '../../machine/checkTable';
import { extendTable, type TableExtension } from '../../machine/extendTable';
import { InvalidTableError } from '../../machine/InvalidTableError';
import { isDeeplyFrozen } from '../../machine/isDeeplyFrozen';
import { tableEdges, type TransitionTable } from '../../machine/TransitionTable';
import { DEFAULT_TABLE } from '../../machine/transitions';
import {
  APPROVAL_EXTENSION,
  approvalEdges,
  COMPACTION_EXTENSION,
  compactionEdges,
  ExtensionState,
  STALL_EXTENSION,
  stallEdges,
  WRAP_UP_EXTENSION,
  wrapUpEdges,
} from '../extensionStates';

/** Which extensions the adapter's options switch on. */
export interface ExtensionUse {
  approval: boolean;
  timeout: boolean;
  compaction?: boolean;
  stall?: boolean;
  /** The option that asks to end within the cap (`budget.wrapUp`, `total.wrapUp`, …), when one does. */
  wrapUp?: string | undefined;
}

/** An extension an option needs: the option as the caller wrote it, the constant to add, and the edges asked of it. */
interface Need {
  option: string;
  name: string;
  extension: TableExtension<string>;
  edges: Array<readonly [string, string]>;
  /** The extension's state that ends a turn, when it has one. */
  terminal?: string;
}

/** The extensions `use` asks for, in the order a table is extended with them. */
function needsOf(use: ExtensionUse): Need[] {
  const needs: Need[] = [];
  if (use.approval)
    needs.push({
      option: use.timeout ? '`approve` with `approvalTimeoutMs`' : '`approve`',
      name: 'APPROVAL_EXTENSION',
      extension: APPROVAL_EXTENSION,
      edges: approvalEdges(use.timeout),
      ...(use.timeout ? { terminal: ExtensionState.ApprovalTimedOut } : {}),
    });
  if (use.compaction === true)
    needs.push({
      option: '`compact`',
      name: 'COMPACTION_EXTENSION',
      extension: COMPACTION_EXTENSION,
      edges: compactionEdges(),
    });
  if (use.stall === true)
    needs.push({
      option: '`stall`',
      name: 'STALL_EXTENSION',
      extension: STALL_EXTENSION,
      edges: stallEdges(),
      terminal: ExtensionState.StallStopped,
    });
  if (use.wrapUp !== undefined)
    needs.push({
      option: `\`${use.wrapUp}\``,
      name: 'WRAP_UP_EXTENSION',
      extension: WRAP_UP_EXTENSION,
      edges: wrapUpEdges(),
    });
  return needs;
}

/**
 * Every edge the adapter may ask for, given its options: the sixteen-state flow's (its legal
 * moves) and those of the extensions in use.
 */
export function requiredEdges(use: ExtensionUse): Array<readonly [string, string]> {
  return [...tableEdges(DEFAULT_TABLE), ...needsOf(use).flatMap((n) => n.edges)];
}

/** The tables this module made from DEFAULT_TABLE for the options, by the extensions they carry. */
const built = new Map<string, TransitionTable<string>>();
const builtTables = new WeakSet<object>();

/**
 * The table an adapter (or a mirror) runs when no `table` is given: DEFAULT_TABLE extended with
 * what its options need (APPROVAL_EXTENSION for `approve`, COMPACTION_EXTENSION for `compact`,
 * STALL_EXTENSION for `stall`, WRAP_UP_EXTENSION for a `wrapUp`), made once per combination.
 */
export function tableForOptions(use: ExtensionUse): TransitionTable<string> {
  const needs = needsOf(use);
  if (needs.length === 0) return DEFAULT_TABLE as TransitionTable<string>;
  const key = needs.map((n) => n.name).join('+');
  let table = built.get(key);
  if (table === undefined) {
    table = needs.reduce((t, n) => extendTable(t, n.extension), DEFAULT_TABLE as TransitionTable<string>);
    built.set(key, table);
    builtTables.add(table);
  }
  return table;
}

/** Whether `table` is one `tableForOptions` gave (or DEFAULT_TABLE): an adapter's own, not one given as `table`. */
export function isOptionsTable(table: TransitionTable<string>): boolean {
  return table === DEFAULT_TABLE || builtTables.has(table);
}

/**
 * Throws `InvalidTableError` when `table` cannot carry the moves `use` asks for: each missing
 * edge and each extension state that should end a turn and does not is an issue, and the
 * message names the option, the extension constant to add and how (`extendTable`, or leave
 * `table` out), so a table that cannot carry the adapter's moves fails at construction, not in
 * the middle of a turn.
 */
export function assertTableHasEdges(
  table: TransitionTable<string>,
  use: ExtensionUse,
  given = !isOptionsTable(table),
): void {
  const has = (from: string, to: string): boolean => (table.states[from]?.next ?? []).includes(to);
  const issues: TableIssue[] = tableEdges(DEFAULT_TABLE)
    .filter(([from, to]) => !has(from, to))
    .map(([from, to]) => ({
      code: 'missing_edge' as const,
      from,
      to,
      message: `The adapter needs the edge ${from} → ${to} of the sixteen-state flow, which the table lacks`,
    }));
  const lacking: Array<{ need: Need; edges: string[] }> = [];
  for (const need of needsOf(use)) {
    const missing = need.edges.filter(([from, to]) => !has(from, to));
    for (const [from, to] of missing)
      issues.push({
        code: 'missing_edge',
        from,
        to,
        extension: need.name,
        message: `${need.option} needs the edge ${from} → ${to}, of ${need.name}, which the table lacks`,
      });
    // A state the table lacks altogether is named by its missing edges.
    const end = need.terminal === undefined ? undefined : table.states[need.terminal];
    const notTerminal = end !== undefined && end.isTerminal !== true;
    if (notTerminal)
      issues.push({
        code: 'not_terminal',
        state: need.terminal!,
        extension: need.name,
        message: `${need.terminal!} must be a terminal state: it ends the turn`,
      });
    if (missing.length > 0 || notTerminal)
      lacking.push({
        need,
        edges: [
          ...missing.map(([from, to]) => `${from} → ${to}`),
          ...(notTerminal ? [`${need.terminal!} terminal`] : []),
        ],
      });
  }
  if (issues.length === 0) return;
  throw new InvalidTableError(issues, lacking.length === 0 ? undefined : howToCarry(lacking, !given));
}

/**
 * What a refusal of a table that lacks extensions says first: each option with the constant it
 * needs and the edges missing, then how to give them. `built`: the table is the adapter's own
 * (no `table` was given), so an option added after construction (`setBudget`, a turn's budget)
 * cannot change it.
 */
function howToCarry(lacking: ReadonlyArray<{ need: Need; edges: string[] }>, built: boolean): string {
  const whose = built ? "this adapter's table" : '`table`';
  const lines = lacking.map(
    ({ need, edges }) =>
      `${need.option} needs the states and edges of ${need.name}, which ${whose} lacks (${edges.join(', ')})`,
  );
  const nested = lacking.reduce(
    (t, { need }) => `extendTable(${t}, ${need.name})`,
    built ? 'DEFAULT_TABLE' : 'yourTable',
  );
  const how = built
    ? `: the adapter extends DEFAULT_TABLE with what the options it is made with need, so give ${lacking.map((l) => l.need.option).join(' and ')} to new AgentWithStateMachine(), or pass table: ${nested}`
    : `: pass table: ${nested}, or leave \`table\` out (the adapter then extends DEFAULT_TABLE with what its options need)`;
  return `${lines.join('; ')}${how}`;
}

/** The extension uses each frozen table was found to carry. */
const carried = new WeakMap<object, Set<string>>();

/**
 * `assertTableHasEdges(table, use, given)`, done once per frozen table and use: an adapter is
 * made per run, nearly always on the same table with the same options. `given`: the caller
 * passed `table` (rather than the adapter making it for its options), as the refusal says.
 */
export function assertTableCarries(
  table: TransitionTable<string>,
  use: ExtensionUse,
  given = !isOptionsTable(table),
): void {
  const key = `${use.approval}/${use.timeout}/${use.compaction === true}/${use.stall === true}/${use.wrapUp ?? ''}`;
  const seen = carried.get(table);
  if (seen?.has(key) === true) return;
  assertTableHasEdges(table, use, given);
  if (seen !== undefined) seen.add(key);
  else if (isDeeplyFrozen(table)) carried.set(table, new Set([key]));
}
