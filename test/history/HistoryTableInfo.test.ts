import { extendTable } from '../../lib/machine/extendTable';
import { tableFromHistoryInfo, toHistoryTableInfo } from '../../lib/history/HistoryTableInfo';
import { InvalidArgumentError } from '../../lib/machine/InvalidArgumentError';
import { InvalidTableError } from '../../lib/machine/InvalidTableError';
import { tableEdges, tableStates } from '../../lib/machine/TransitionTable';
import { DEFAULT_TABLE } from '../../lib/machine/transitions';

describe('toHistoryTableInfo()', () => {
  it('stores the sixteen-state table as names, 26 edges and the flags', () => {
    const info = toHistoryTableInfo(DEFAULT_TABLE);
    expect(info.initial).toBe('Ready');
    expect(info.states).toHaveLength(16);
    expect(info.edges).toHaveLength(26);
    expect(info.terminal).toEqual(['EndOfTurn', 'Cancelled', 'BudgetExceeded', 'Error']);
    expect(info.error).toEqual(['Cancelled', 'BudgetExceeded', 'Error']);
  });
});

describe('tableFromHistoryInfo()', () => {
  it('rebuilds an extended table with the same states, edges and flags', () => {
    const table = extendTable(DEFAULT_TABLE, {
      states: [{ name: 'Compacting', description: 'compacts', next: ['SendingToLLM', 'Error'] }],
      edges: [['ProcessingLLMResponse', 'Compacting']],
    });
    const rebuilt = tableFromHistoryInfo(JSON.parse(JSON.stringify(toHistoryTableInfo(table))));
    expect(rebuilt.initial).toBe('Ready');
    expect(tableStates(rebuilt)).toEqual(tableStates(table));
    expect(tableEdges(rebuilt)).toEqual(tableEdges(table));
    expect(rebuilt.states.Error?.isError).toBe(true);
    expect(rebuilt.states.EndOfTurn?.isTerminal).toBe(true);
    expect(rebuilt.states.Compacting?.isTerminal).toBe(false);
  });

  it("names a value without the stored form's shape, and the part that is wrong", () => {
    const info = toHistoryTableInfo(DEFAULT_TABLE);
    expect(() => tableFromHistoryInfo(null as never)).toThrow(
      new InvalidArgumentError('info', 'a stored table { initial, states, edges, terminal, error }', null),
    );
    expect(() => tableFromHistoryInfo({ ...info, initial: undefined } as never)).toThrow(
      'Expected `info.initial` to be a state name, got `undefined`',
    );
    expect(() => tableFromHistoryInfo({ ...info, terminal: 'EndOfTurn' } as never)).toThrow(
      'Expected `info.terminal` to be an array of state names, got `EndOfTurn` (string)',
    );
    expect(() => tableFromHistoryInfo({ ...info, states: ['Ready', 3] } as never)).toThrow(
      'Expected `info.states[1]` to be a state name, got `3` (number)',
    );
    expect(() => tableFromHistoryInfo({ ...info, edges: [['Ready']] } as never)).toThrow(
      'Expected `info.edges[0]` to be a [from, to] pair of state names, got `["Ready"]` (array)',
    );
  });

  it('rejects a stored table with an edge from or to an unknown state, naming it', () => {
    const info = toHistoryTableInfo(DEFAULT_TABLE);
    expect(() => tableFromHistoryInfo({ ...info, edges: [...info.edges, ['Ready', 'Nowhere']] })).toThrow(
      InvalidTableError,
    );
    expect(() => tableFromHistoryInfo({ ...info, edges: [...info.edges, ['Ghost', 'Ready']] })).toThrow(/Ghost/);
  });
});
