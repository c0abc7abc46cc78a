import { createTable } from '../../lib/machine/createTable';
import { InvalidTableError } from '../../lib/index';
import { tableEdges, tableStates } from '../../lib/machine/TransitionTable';

describe('createTable()', () => {
  it('builds a frozen table from specs in their order', () => {
    const table = createTable(
      [
        { name: 'Idle', description: 'idle', next: ['Busy'] },
        { name: 'Busy', description: 'busy', next: ['Idle'], isTerminal: true },
      ],
      'Idle',
    );
    expect(tableStates(table)).toEqual(['Idle', 'Busy']);
    expect(tableEdges(table)).toEqual([
      ['Idle', 'Busy'],
      ['Busy', 'Idle'],
    ]);
    expect(Object.isFrozen(table)).toBe(true);
    expect(Object.isFrozen(table.states)).toBe(true);
    expect(Object.isFrozen(table.states.Idle)).toBe(true);
    expect(Object.isFrozen(table.states.Idle.next)).toBe(true);
  });

  it('rejects a state defined twice', () => {
    expect(() =>
      createTable(
        [
          { name: 'A', description: 'a', next: ['A'] },
          { name: 'A', description: 'again', next: ['A'] },
        ],
        'A',
      ),
    ).toThrow(
      new InvalidTableError([{ code: 'duplicate_state', state: 'A', message: 'State A is defined more than once' }]),
    );
  });

  it('rejects an unsound table with every problem', () => {
    expect(() => createTable([{ name: 'A', description: 'a', next: ['Z'] }], 'A')).toThrow(
      /unknown_target.*\n.*dead_end|unknown_target/,
    );
  });

  it('names a spec that is not one', () => {
    expect(() => createTable([null as never], 'Ready')).toThrow(
      'Expected `specs[0]` to be a state spec { name: string, description, next }, got `null`',
    );
    expect(() => createTable(5 as never, 'Ready')).toThrow(
      'Expected `specs` to be an iterable of state specs { name, description, next }, got `5` (number)',
    );
  });
});
