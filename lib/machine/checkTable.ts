import { UNKNOWN_STATE } from '../../states/StateName';
import { describeValue } from '../internal/describeValue';

/** One problem found in a transition table. */
export type TableIssue =
  | { code: 'not_a_table'; message: string }
  | { code: 'unknown_initial'; state: unknown; message: string }
  | { code: 'invalid_state'; state: string; message: string }
  /** The empty name: history files, logs and diagrams cannot show or read it back. */
  | { code: 'invalid_name'; state: string; message: string }
  /** `Unknown`, which `machine.previous` returns to mean "no state before this one". */
  | { code: 'reserved_name'; state: string; message: string }
  | { code: 'name_mismatch'; key: string; name: unknown; message: string }
  | { code: 'duplicate_state'; state: string; message: string }
  | { code: 'unknown_target'; from: string; to: unknown; message: string }
  | { code: 'unknown_source'; from: unknown; to: string[]; message: string }
  | { code: 'duplicate_edge'; from: string; to: string; message: string }
  | { code: 'unreachable'; state: string; message: string }
  | { code: 'dead_end'; state: string; message: string }
  /**
   * An edge a user of the table (the agent adapter, for the options it was given) asks for and
   * the table lacks; `extension` names the constant that brings it (`STALL_EXTENSION`), when one does.
   */
  | { code: 'missing_edge'; from: string; to: string; extension?: string; message: string }
  /** A state its user needs to end a turn is not terminal; `extension` names the constant that declares it. */
  | { code: 'not_terminal'; state: string; extension?: string; message: string };

/** What `checkTable` returns: `{ ok: true }`, or `{ ok: false, issues }` with every problem at once. */
export type TableCheck = { ok: true; issues: [] } | { ok: false; issues: TableIssue[] };

/**
 * Checks a table as a whole and returns every problem at once: unknown names, states that
 * cannot be reached from the initial state, states with no way out, malformed entries, and
 * names the rest of the library cannot use (the empty name, the reserved `Unknown`).
 * Pure; `assertValidTable` is the throwing twin.
 */
export function checkTable(table: unknown): TableCheck {
  const issues: TableIssue[] = [];
  if (
    typeof table !== 'object' ||
    table === null ||
    typeof (table as { states?: unknown }).states !== 'object' ||
    (table as { states?: unknown }).states === null
  ) {
    return {
      ok: false,
      issues: [{ code: 'not_a_table', message: `Expected a table { initial, states }, got ${describeValue(table)}` }],
    };
  }
  const { initial, states } = table as { initial: unknown; states: Record<string, unknown> };
  const names = Object.keys(states);
  const known = new Set(names);
  const edges = new Map<string, string[]>();

  for (const key of names) {
    if (key === '') {
      issues.push({
        code: 'invalid_name',
        state: key,
        message: `State name ${describeValue(key)} is empty: history files, logs and diagrams need a non-empty name`,
      });
    } else if (key === '__proto__') {
      issues.push({
        code: 'reserved_name',
        state: key,
        message: 'State name `__proto__` is reserved: it is not a property name a table can hold',
      });
    } else if (key === UNKNOWN_STATE) {
      issues.push({
        code: 'reserved_name',
        state: key,
        message: `State name ${describeValue(key)} is reserved: \`machine.previous\` returns it to mean "no state before this one"`,
      });
    }
    const spec = states[key] as { name?: unknown; description?: unknown; next?: unknown } | null;
    if (
      typeof spec !== 'object' ||
      spec === null ||
      !Array.isArray(spec.next) ||
      typeof spec.description !== 'string'
    ) {
      issues.push({
        code: 'invalid_state',
        state: key,
        message: `State ${key} must be { name, description: string, next: string[] }, got ${describeValue(spec)}`,
      });
      continue;
    }
    if (spec.name !== key) {
      issues.push({
        code: 'name_mismatch',
        key,
        name: spec.name,
        message: `State listed as ${key} calls itself ${describeValue(spec.name)}`,
      });
    }
    const seen = new Set<string>();
    const targets: string[] = [];
    for (const to of spec.next as unknown[]) {
      if (typeof to !== 'string' || !known.has(to)) {
        issues.push({
          code: 'unknown_target',
          from: key,
          to,
          message: `State ${key} lists an unknown next state ${describeValue(to)}`,
        });
      } else if (seen.has(to)) {
        issues.push({ code: 'duplicate_edge', from: key, to, message: `State ${key} lists ${to} twice` });
      } else {
        seen.add(to);
        targets.push(to);
      }
    }
    edges.set(key, targets);
    if (spec.next.length === 0) {
      issues.push({
        code: 'dead_end',
        state: key,
        message: `State ${key} has no way out: a machine that enters it is stuck`,
      });
    }
  }

  if (typeof initial !== 'string' || !known.has(initial)) {
    issues.push({
      code: 'unknown_initial',
      state: initial,
      message: `Initial state ${describeValue(initial)} is not in the table (${names.join(', ')})`,
    });
  } else {
    const reached = new Set<string>([initial]);
    const queue = [initial];
    for (let s = queue.shift(); s !== undefined; s = queue.shift()) {
      for (const to of edges.get(s) ?? []) {
        if (!reached.has(to)) {
          reached.add(to);
          queue.push(to);
        }
      }
    }
    for (const name of names) {
      if (!reached.has(name))
        issues.push({ code: 'unreachable', state: name, message: `State ${name} cannot be reached from ${initial}` });
    }
  }
  return issues.length === 0 ? { ok: true, issues: [] } : { ok: false, issues };
}
