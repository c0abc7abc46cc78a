import { DEFAULT_TABLE, extendTable, InvalidTableError, StateMachine } from '../../lib/index';
import { tableEdges } from '../../lib/machine/TransitionTable';
import { TRANSITIONS } from '../../lib/machine/transitions';

const compacting = {
  name: 'Compacting',
  description: 'Agent compacts the conversation to fit the context window',
  next: ['SendingToLLM', 'Error'],
} as const;

describe('extendTable()', () => {
  it('adds a state and edges, leaving the base untouched', () => {
    const table = extendTable(DEFAULT_TABLE, { states: [compacting], edges: [['SendingToLLM', 'Compacting']] });
    expect(table.states.Compacting.next).toEqual(['SendingToLLM', 'Error']);
    expect(table.states.SendingToLLM.next).toEqual(['ProcessingLLMResponse', 'Error', 'Compacting']);
    expect(tableEdges(table)).toHaveLength(29);
    expect(DEFAULT_TABLE.states.SendingToLLM.next).toEqual(['ProcessingLLMResponse', 'Error']);
    expect(TRANSITIONS.SendingToLLM).toEqual(['ProcessingLLMResponse', 'Error']);
  });

  it('keeps terminal and error flags of states that gain edges', () => {
    const table = extendTable(DEFAULT_TABLE, { edges: [['Error', 'Ready']] });
    expect(table.states.Error.isTerminal).toBe(true);
    expect(table.states.Error.isError).toBe(true);
  });

  it('drives a machine through the custom state', () => {
    const table = extendTable(DEFAULT_TABLE, { states: [compacting], edges: [['SendingToLLM', 'Compacting']] });
    const machine = new StateMachine({ table, logger: false });
    machine.transition('WaitingForUserInput');
    machine.transition('SendingToLLM');
    machine.transition('Compacting', 'context overflow');
    machine.transition('SendingToLLM', 'retry after compaction');
    expect(machine.history().map((r) => r.to)).toEqual([
      'WaitingForUserInput',
      'SendingToLLM',
      'Compacting',
      'SendingToLLM',
    ]);
    expect(() => new StateMachine({ logger: false }).transition('Compacting' as never)).toThrow(
      /Unknown state `Compacting`/,
    );
  });

  it('reports every problem of the result at once', () => {
    let caught: InvalidTableError | undefined;
    try {
      extendTable(DEFAULT_TABLE, {
        states: [{ name: 'Compacting', description: 'x', next: [] }],
        edges: [
          ['Nowhere', 'Ready'],
          ['Ready', 'Typo'],
        ],
      });
    } catch (error) {
      caught = error as InvalidTableError;
    }
    expect(caught).toBeInstanceOf(InvalidTableError);
    expect(caught!.issues.map((i) => i.code)).toEqual(['unknown_source', 'unknown_target', 'dead_end', 'unreachable']);
    expect(caught!.issues[0]!.message).toBe('Edge from unknown state `Nowhere` (string) (to Ready)');
  });

  it('names malformed arguments instead of failing inside', () => {
    expect(() => extendTable(DEFAULT_TABLE, undefined as never)).toThrow(
      'Expected `extension` to be an object { states?, edges? }, got `undefined`',
    );
    expect(() => extendTable(DEFAULT_TABLE, { states: [null as never] })).toThrow(
      'Expected `extension.states[0]` to be a state spec { name: string, description, next }, got `null`',
    );
    expect(() => extendTable(DEFAULT_TABLE, { edges: [['Ready'] as never] })).toThrow(
      'Expected `extension.edges[0]` to be a [from, to] pair, got `["Ready"]` (array)',
    );
    expect(() => extendTable(null as never, {})).toThrow(
      'Expected `base` to be a transition table { initial, states }, got `null`',
    );
  });
});
