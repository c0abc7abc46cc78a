import fc from 'fast-check';
import { DEFAULT_TABLE, extendTable, InvalidTableError } from '../../lib/index';
import { assertValidTable } from '../../lib/machine/assertValidTable';
import { checkTable } from '../../lib/machine/checkTable';
import { UNKNOWN_STATE } from '../../states/StateName';

const spec = (name: string, next: string[]) => ({ name, description: `${name} state`, next });

describe('checkTable()', () => {
  it('passes the default table', () => {
    expect(checkTable(DEFAULT_TABLE)).toEqual({ ok: true, issues: [] });
  });

  it('reports every problem at once, each with its code', () => {
    const result = checkTable({
      initial: 'A',
      states: {
        A: spec('A', ['B', 'Ghost']),
        B: spec('B', ['A', 'A']),
        C: spec('C', ['A']),
        D: spec('D', []),
        E: { name: 'Eve', description: 'misnamed', next: ['A'] },
        F: { name: 'F', next: 'A' },
      },
    });
    expect(result.ok).toBe(false);
    expect(
      result.issues.map((i) => [
        i.code,
        'state' in i ? i.state : 'from' in i ? i.from : 'key' in i ? i.key : undefined,
      ]),
    ).toEqual([
      ['unknown_target', 'A'],
      ['duplicate_edge', 'B'],
      ['dead_end', 'D'],
      ['name_mismatch', 'E'],
      ['invalid_state', 'F'],
      ['unreachable', 'C'],
      ['unreachable', 'D'],
      ['unreachable', 'E'],
      ['unreachable', 'F'],
    ]);
    expect(result.issues[0]!.message).toBe('State A lists an unknown next state `Ghost` (string)');
  });

  it('reports an initial state the table lacks', () => {
    const result = checkTable({ initial: 'Start', states: { A: spec('A', ['A']) } });
    expect(result.issues).toEqual([
      { code: 'unknown_initial', state: 'Start', message: 'Initial state `Start` (string) is not in the table (A)' },
    ]);
  });

  it('reports the empty state name, which history files and diagrams cannot carry', () => {
    const result = checkTable({ initial: 'A', states: { A: spec('A', ['']), '': spec('', ['A']) } });
    expect(result.issues).toEqual([
      {
        code: 'invalid_name',
        state: '',
        message: 'State name `` (string) is empty: history files, logs and diagrams need a non-empty name',
      },
    ]);
  });

  it('reports the reserved name Unknown, which `machine.previous` uses for "no state before"', () => {
    const result = checkTable({ initial: 'A', states: { A: spec('A', ['Unknown']), Unknown: spec('Unknown', ['A']) } });
    expect(result.issues).toEqual([
      {
        code: 'reserved_name',
        state: 'Unknown',
        message:
          'State name `Unknown` (string) is reserved: `machine.previous` returns it to mean "no state before this one"',
      },
    ]);
  });

  it('makes extendTable refuse a state named `` or Unknown', () => {
    for (const name of ['', UNKNOWN_STATE]) {
      expect(() =>
        extendTable(DEFAULT_TABLE, {
          states: [{ name, description: 'x', next: ['Error'] }],
          edges: [['EndOfTurn', name]],
        }),
      ).toThrow(
        expect.objectContaining({
          code: 'invalid_table',
          issues: [expect.objectContaining({ code: name === '' ? 'invalid_name' : 'reserved_name', state: name })],
        }),
      );
    }
  });

  // fc.string() makes `__proto__` now and then (about once in a few hundred runs): it is reserved too.
  it('reports a name issue exactly for the empty name, Unknown and __proto__, whatever the other names', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.oneof(fc.string(), fc.constantFrom('', UNKNOWN_STATE, '__proto__', 'Ready')), {
          minLength: 1,
          maxLength: 8,
        }),
        (names) => {
          // A ring: every state reaches the next, so no other problem shows.
          const states = Object.fromEntries(
            names.map((name, i) => [name, spec(name, [names[(i + 1) % names.length]!])]),
          );
          const result = checkTable({ initial: names[0], states });
          const expected = names.flatMap((name) =>
            name === ''
              ? [['invalid_name', name]]
              : name === UNKNOWN_STATE || name === '__proto__'
                ? [['reserved_name', name]]
                : [],
          );
          expect(result.issues.map((i) => [i.code, 'state' in i ? i.state : undefined])).toEqual(expected);
          expect(result.ok).toBe(expected.length === 0);
        },
      ),
    );
  });

  it('reports a value that is not a table', () => {
    expect(checkTable(42).issues[0]).toMatchObject({
      code: 'not_a_table',
      message: 'Expected a table { initial, states }, got `42` (number)',
    });
    expect(checkTable(null).ok).toBe(false);
  });
});

describe('assertValidTable()', () => {
  it('returns a sound table and throws InvalidTableError listing every problem otherwise', () => {
    expect(assertValidTable(DEFAULT_TABLE)).toBe(DEFAULT_TABLE);
    const bad = { initial: 'A', states: { A: spec('A', []), B: spec('B', ['A']) } };
    let caught: unknown;
    try {
      assertValidTable(bad);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(InvalidTableError);
    const error = caught as InvalidTableError;
    expect(error.code).toBe('invalid_table');
    expect(error.name).toBe('InvalidTableError');
    expect(error.issues.map((i) => i.code)).toEqual(['dead_end', 'unreachable']);
    expect(error.message).toBe(
      'Invalid transition table (2 problems):\n  - [dead_end] State A has no way out: a machine that enters it is stuck\n  - [unreachable] State B cannot be reached from A',
    );
  });
});
